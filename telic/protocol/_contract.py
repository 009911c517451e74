"""The TaskContract: Agent 2's executable source of truth (docs/protocol.md §3.1 "TaskContract").

The schema rules here look at one contract alone: unique ids, verification that fits the mode,
and no mutating permission in a mode that never mutates. Everything that compares the contract
with the frame, the run authorization or a previous version is the controller's (§3.4).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, Self, get_args

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._helpers import unique
from telic.protocol._types import (
    AcceptanceCriterion,
    ArtifactUri,
    BoundedText,
    Identifier,
    Items,
    Mode,
    PermissionSet,
    ReferenceUri,
    Scope,
    Stage,
    Summary,
)

__all__ = [
    "NON_MUTATING_MODES",
    "VERIFICATION_CAPABILITIES",
    "VERIFYING_MODES",
    "Assumption",
    "TaskContract",
    "VerificationCapability",
    "VerificationRequirement",
]

VerificationCapability = Literal[
    "repository.read",
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
    "browser.inspect",
    "network.read",
]
"""The capabilities a verification may rely on: the ones that observe rather than change."""
VERIFICATION_CAPABILITIES: Final[tuple[VerificationCapability, ...]] = get_args(
    VerificationCapability
)

VERIFYING_MODES: Final[frozenset[Mode]] = frozenset({"analyze_only", "fix_only", "analyze_and_fix"})
"""Modes whose contract needs at least one required verification."""

NON_MUTATING_MODES: Final[frozenset[Mode]] = frozenset({"report_only", "plan_only", "analyze_only"})
"""Modes whose contract may carry no write, delete, restart or external-write permission."""


class VerificationRequirement(WireModel):
    """A check that must be attempted to prove a stage of the work."""

    id: Identifier
    """Unique id within the contract."""
    stage: Stage
    """The stage this verification proves."""
    description: BoundedText
    """What is checked and how."""
    required: bool
    """Whether the work cannot be accepted without it."""
    capability: VerificationCapability
    """The observing capability the check uses."""
    fallback: BoundedText | None
    """What to do if the capability is unavailable, or null."""


class Assumption(WireModel):
    """Something the contract takes as true without proof."""

    id: Identifier
    text: BoundedText
    """The assumption."""
    source_refs: Items[ReferenceUri]
    """What suggests it."""
    reversible: bool
    """Whether acting on it can be undone."""


class TaskContract(ArtifactBody):
    """The compiled, reviewable contract that planning and execution are held to."""

    id: Identifier
    """Artifact id of this contract."""
    run_id: Identifier
    """The run this contract belongs to."""
    version: Annotated[int, Field(ge=1, le=2)]
    """1 for the compiled contract, 2 for its single revision."""
    original_request_ref: ArtifactUri
    """The user's original request."""
    problem_frame_ref: ArtifactUri
    """The frame this contract compiles."""
    intent_mode: Mode
    """The run's mode."""
    objective: BoundedText
    """What the work must achieve."""
    scope: Scope
    """What is in and out of scope."""
    constraints: Items[BoundedText]
    """Constraints the work must respect."""
    non_goals: Items[BoundedText]
    """What the work must not attempt."""
    context_refs: Items[ReferenceUri]
    """Context the work relies on."""
    rule_refs: Items[ReferenceUri]
    """Repository rules that apply."""
    permissions: PermissionSet
    """The most the work may do."""
    acceptance_criteria: Annotated[Items[AcceptanceCriterion], Field(min_length=1)]
    """Testable criteria."""
    required_outputs: Items[BoundedText]
    """What the user should receive."""
    verification_requirements: Items[VerificationRequirement]
    """Checks that prove each stage."""
    stop_conditions: Items[BoundedText]
    """When the work must stop."""
    assumptions: Items[Assumption]
    """What is assumed without proof."""
    unresolved_questions: Items[BoundedText]
    """Open questions that do not block the work."""
    rationale_summary: Summary
    """Why the contract says what it says."""

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        if not unique([criterion.id for criterion in self.acceptance_criteria]):
            raise PydanticCustomError(
                "duplicate_criterion_id", "Acceptance criterion ids must be unique"
            )
        if not unique([requirement.id for requirement in self.verification_requirements]):
            raise PydanticCustomError(
                "duplicate_verification_id", "Verification requirement ids must be unique"
            )
        required = [item for item in self.verification_requirements if item.required]
        if self.intent_mode in VERIFYING_MODES and not required:
            raise PydanticCustomError(
                "required_verification_missing",
                "This mode needs at least one required verification",
            )
        if self.intent_mode == "analyze_and_fix":
            if {c.stage for c in self.acceptance_criteria} != {"diagnosis", "completion"}:
                raise PydanticCustomError(
                    "stage_criteria_missing",
                    "analyze_and_fix needs diagnosis and completion acceptance criteria",
                )
            if {r.stage for r in required} != {"diagnosis", "completion"}:
                raise PydanticCustomError(
                    "stage_verification_missing",
                    "analyze_and_fix needs required diagnosis and completion verification",
                )
        elif any(item.stage == "diagnosis" for item in self.verification_requirements):
            raise PydanticCustomError(
                "diagnosis_verification_not_allowed",
                "Only analyze_and_fix may have diagnosis-stage verification",
            )
        if self.intent_mode in NON_MUTATING_MODES and _grants_mutation(self.permissions):
            raise PydanticCustomError(
                "mutating_permission_not_allowed",
                "This mode may not grant write, delete, restart, browser mutation"
                " or external write",
            )
        return self


def _grants_mutation(permissions: PermissionSet) -> bool:
    return bool(
        permissions.repository.write
        or permissions.repository.delete
        or permissions.runtime.restart
        or permissions.browser.mutate_state
        or permissions.network.external_write
    )
