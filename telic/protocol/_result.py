"""The WorkResult of one plan node, and the acceptance-coverage entry (docs/protocol.md §3.1).

A WorkResult reports what the executor did and saw, never whether the work is accepted: that is
Agent 3's QualityReview, which reuses ``AcceptanceCoverage`` for its acceptance results. The
schema keeps a result honest on its own terms (a completed result hides no failure, a file change
has hashes that fit its type); matching actions to permissions and file changes is §3.4.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import UNDESCRIBED, ArtifactBody, WireModel
from telic.protocol._types import (
    ActionTarget,
    ArtifactUri,
    BoundedText,
    Capability,
    EvidenceClaim,
    ExitCode,
    Identifier,
    Items,
    ReferenceUri,
    RelativePath,
    Sha256,
    Summary,
)

ActionStatus = Literal["completed", "failed", "denied", "skipped", "unauthorized"]
"""How an attempted action ended. ``unauthorized`` (ours, beside the 1.0 four) is the host's own
record of an action it took although its permissions did not allow it: Telic accepts the record,
traces the DENY and holds the audit and the report to "permissions not honoured"."""
ChangeType = Literal["created", "modified", "deleted"]
"""What happened to a file."""
TestStatus = Literal["passed", "failed", "skipped", "unavailable"]
"""How a test run ended."""
AcceptanceStatus = Literal["pass", "fail", "unverified", "not_applicable"]
"""The verdict on one criterion or check."""
WorkResultStatus = Literal["completed", "partial", "blocked", "failed"]
"""How the node's work ended."""


class WorkAction(WireModel):
    """One tool action the executor attempted."""

    model_config = UNDESCRIBED

    id: Identifier
    capability: Capability
    target: ActionTarget
    """A path, command, URL or typed target."""
    mutating: bool
    status: ActionStatus
    """unauthorized: you did it outside your permissions; record it, never hide it."""
    evidence_refs: Items[ReferenceUri]
    rationale_summary: Summary

    @model_validator(mode="after")
    def _completed_needs_evidence(self) -> Self:
        if self.status == "completed" and not self.evidence_refs:
            raise PydanticCustomError(
                "completed_action_without_evidence", "A completed action needs an evidenceRef"
            )
        return self


class FileChange(WireModel):
    """One file the work created, modified or deleted."""

    model_config = UNDESCRIBED

    path: RelativePath
    """Relative to the repository root."""
    change_type: ChangeType
    before_hash: Sha256 | None
    """Null for a created file."""
    after_hash: Sha256 | None
    """Null for a deleted file."""
    diff_ref: ArtifactUri

    @model_validator(mode="after")
    def _hashes_fit_change_type(self) -> Self:
        before, after = self.before_hash, self.after_hash
        if self.change_type == "created":
            fits = before is None and after is not None
        elif self.change_type == "deleted":
            fits = before is not None and after is None
        else:
            fits = before is not None and after is not None and before != after
        if not fits:
            raise PydanticCustomError(
                "hashes_do_not_fit_change",
                "created needs only afterHash, deleted only beforeHash,"
                " modified two different hashes",
            )
        return self


class TestResult(WireModel):
    """One test run and its captured output."""

    model_config = UNDESCRIBED

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    id: Identifier
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    status: TestStatus
    command_ref: ArtifactUri | None
    output_ref: ArtifactUri | None
    """Needed once it passed or failed."""
    exit_code: ExitCode | None
    rationale_summary: Summary

    @model_validator(mode="after")
    def _executed_needs_output(self) -> Self:
        if self.status in ("passed", "failed") and self.output_ref is None:
            raise PydanticCustomError(
                "executed_test_without_output", "A passed or failed test needs an outputRef"
            )
        return self


class AcceptanceCoverage(WireModel):
    """The verdict on one acceptance criterion."""

    criterion_id: Identifier
    status: AcceptanceStatus
    evidence_refs: Items[ReferenceUri]
    """Needed for pass and fail."""
    rationale_summary: Summary

    @model_validator(mode="after")
    def _verdict_needs_evidence(self) -> Self:
        if self.status in ("pass", "fail") and not self.evidence_refs:
            raise PydanticCustomError(
                "verdict_without_evidence", "A pass or fail verdict needs an evidenceRef"
            )
        return self


class WorkResult(ArtifactBody):
    """The executor's report on one plan node."""

    id: Identifier
    run_id: Identifier
    work_plan_ref: ArtifactUri
    node_id: Identifier
    status: WorkResultStatus
    observations: Items[EvidenceClaim]
    """Status observed or user_reported."""
    inferences: Items[EvidenceClaim]
    """Status inferred or unverified."""
    actions: Items[WorkAction]
    """Every action attempted, in order."""
    files_changed: Items[FileChange]
    """Every file created, modified or deleted."""
    tool_event_refs: Items[ReferenceUri]
    evidence_refs: Items[ReferenceUri]
    test_results: Items[TestResult]
    """A diagnosis's reproduced failing test stays failed, even in a completed result."""
    acceptance_coverage: Items[AcceptanceCoverage]
    unresolved_issues: Items[BoundedText]
    deviations: Items[BoundedText]
    rationale_summary: Summary

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        for i, claim in enumerate(self.observations):
            if claim.status not in ("observed", "user_reported"):
                raise PydanticCustomError(
                    "observation_status",
                    "observations.{index} is {status}: an observation is observed or "
                    "user_reported; put what you conclude in inferences",
                    {"index": i, "status": claim.status},
                )
        for i, claim in enumerate(self.inferences):
            if claim.status not in ("inferred", "unverified"):
                raise PydanticCustomError(
                    "inference_status",
                    "inferences.{index} is {status}: an inference is inferred or unverified; "
                    "put what you saw in observations",
                    {"index": i, "status": claim.status},
                )
        if self.status != "completed":
            return self
        if not self.evidence_refs:
            raise PydanticCustomError(
                "completed_result_without_evidence", "A completed result needs an evidenceRef"
            )
        if any(action.status in ("failed", "denied") for action in self.actions):
            raise PydanticCustomError(
                "completed_result_with_failed_action",
                "A completed result may have no failed or denied action",
            )
        if any(entry.status != "pass" for entry in self.acceptance_coverage):
            raise PydanticCustomError(
                "completed_result_with_unpassed_criterion",
                "A completed result needs every acceptance coverage entry to pass",
            )
        return self
