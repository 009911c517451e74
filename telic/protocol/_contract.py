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
from telic.protocol._types import (
    AcceptanceCriterion,
    ArtifactUri,
    BoundedText,
    Identifier,
    Items,
    Mode,
    NonEmptyItems,
    PermissionSet,
    ReferenceUri,
    Scope,
    Stage,
    Summary,
    unique,
)

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
    """A check that proves a stage of the work."""

    id: Identifier
    stage: Stage
    description: BoundedText
    required: bool
    capability: VerificationCapability
    fallback: BoundedText | None
    """What to do if the capability is unavailable."""


class Assumption(WireModel):
    """Taken as true without proof."""

    id: Identifier
    text: BoundedText
    source_refs: Items[ReferenceUri]
    reversible: bool


class TaskContract(ArtifactBody):
    """The reviewable contract planning and execution are held to."""

    id: Identifier
    run_id: Identifier
    version: Annotated[int, Field(ge=1, le=2)]
    original_request_ref: ArtifactUri
    problem_frame_ref: ArtifactUri
    intent_mode: Mode
    objective: BoundedText
    scope: Scope
    constraints: Items[BoundedText]
    non_goals: Items[BoundedText]
    context_refs: Items[ReferenceUri]
    rule_refs: Items[ReferenceUri]
    permissions: PermissionSet
    acceptance_criteria: NonEmptyItems[AcceptanceCriterion]
    required_outputs: Items[BoundedText]
    verification_requirements: Items[VerificationRequirement]
    stop_conditions: Items[BoundedText]
    assumptions: Items[Assumption]
    unresolved_questions: Items[BoundedText]
    rationale_summary: Summary

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
