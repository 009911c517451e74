"""The controller's next action: the one legal step a host may take (docs/protocol.md §3.1, §3.2).

A ``NextAction`` is told apart by ``kind``: a ``phase`` to perform (with its inputs, output
schema, permission ceiling and budgets), a pending ``clarification`` the user must answer, or a
``terminal`` run. Its id is ``action:<runId>:<version>``, the optimistic-concurrency token.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal

from pydantic import Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    ACTION_ROLES,
    MAX_PLAN_TOOL_CALLS,
    MAX_REFERENCE_URI,
    ActionPhase,
    ActionRole,
    ArtifactType,
    ArtifactUri,
    BoundedText,
    FewItems,
    HostArtifactType,
    Identifier,
    Items,
    OnceBudget,
    PermissionSet,
    ReferenceUri,
    SubagentDepth,
    Summary,
    TerminalPhase,
    TerminalStatus,
    Timestamp,
    WorkerCount,
)

_ROLE_ALTERNATION: Final = "|".join(role.replace("_", "[_-]") for role in ACTION_ROLES)
INSTRUCTION_REF_PATTERN: Final = (
    rf"^artifact://system/roles/({_ROLE_ALTERNATION})(-(micro|spot|reverify))?-v1$"
)
"""``artifact://system/roles/<role>-v1``; the role may be spelled with dashes. A run that asked
for a topology may name a variant of a role's instructions (``-micro``, ``-spot``,
``-reverify``, docs/protocol.md §3.7)."""
_INSTRUCTION_REF_RE: Final = re.compile(INSTRUCTION_REF_PATTERN)

STOP_CONDITIONS: Final[tuple[str, str, str]] = (
    "Do not broaden the user-selected intent mode or permissions.",
    "Stop at a materially divergent user-owned decision.",
    "Submit concise rationale summaries and evidence references, never hidden chain-of-thought.",
)
"""The three fixed stop conditions of every phase action."""

InstructionRef = Annotated[
    str, StringConstraints(max_length=MAX_REFERENCE_URI, pattern=INSTRUCTION_REF_PATTERN)
]
"""``artifact://system/roles/<role>-v1``."""

JsonObject = dict[str, Any]
"""A JSON object, such as a JSON Schema."""


def instruction_ref(role: ActionRole) -> str:
    """Return the instruction reference of ``role``, e.g. ``artifact://system/roles/executor-v1``."""
    return f"artifact://system/roles/{role}-v1"


class RemainingBudgets(WireModel):
    """What the run has left to spend."""

    prompt_revisions: OnceBudget
    """Contract revisions left (0–1)."""
    post_execution_remediations: OnceBudget
    """Shared remediations left (0–1)."""
    remaining_plan_tool_calls: Annotated[int, Field(ge=0, le=MAX_PLAN_TOOL_CALLS)]
    """Tool calls not yet reserved by any WorkPlan (0–4000)."""
    maximum_parallel_workers: WorkerCount
    """Most workers that may run at once (1–16)."""
    maximum_subagent_depth: SubagentDepth
    """Deepest allowed subagent nesting (0–4)."""


class _ActionBase(ArtifactBody):
    id: Identifier
    """``action:<runId>:<version>``; echo it back as ``action_id``."""
    run_id: Identifier
    """Id of the run."""
    created_at: Timestamp
    """When the run last changed."""
    rationale_summary: Summary
    """Why this is the next action."""


class PhaseAction(_ActionBase):
    """Perform one phase and submit its typed output."""

    kind: Literal["phase"]
    """Always "phase"."""
    phase: ActionPhase
    """The phase to perform."""
    logical_role: ActionRole
    """The role the host plays in this phase."""
    instruction_ref: InstructionRef
    """The role's instructions, ``artifact://system/roles/<role>-v1``."""
    input_refs: Items[ReferenceUri]
    """Artifacts to read before acting."""
    context_manifest_ref: ArtifactUri | None
    """The current ContextManifest, or null before grounding."""
    required_output_type: ArtifactType
    """The artifact type to submit."""
    required_output_schema: JsonObject
    """JSON Schema of the required output."""
    additional_output_schemas: dict[HostArtifactType, JsonObject]
    """Other types this phase accepts, by type name."""
    work_node_id: Identifier | None
    """The WorkPlan node to execute, or null."""
    effective_permissions: PermissionSet
    """The most the host may do in this phase."""
    remaining_budgets: RemainingBudgets
    """What the run has left to spend."""
    stop_conditions: FewItems[BoundedText]
    """When the host must stop."""

    @model_validator(mode="after")
    def _instruction_matches_role(self) -> PhaseAction:
        match = _INSTRUCTION_REF_RE.match(self.instruction_ref)
        if match is None or match.group(1).replace("-", "_") != self.logical_role:
            raise PydanticCustomError(
                "instruction_ref_role_mismatch", "instructionRef must name the action's logicalRole"
            )
        return self


class ClarificationAction(_ActionBase):
    """Wait for the user to answer the pending clarification."""

    kind: Literal["clarification"]
    """Always "clarification"."""
    phase: Literal["awaiting_clarification"]
    """Always "awaiting_clarification"."""
    clarification_request_ref: ArtifactUri
    """The ClarificationRequest awaiting an answer."""
    effective_permissions: PermissionSet
    """Always empty: nothing may happen while paused."""
    remaining_budgets: RemainingBudgets
    """What the run has left to spend."""

    @model_validator(mode="after")
    def _nothing_permitted(self) -> ClarificationAction:
        if self.effective_permissions != PermissionSet.empty():
            raise PydanticCustomError(
                "clarification_permissions_not_empty",
                "A paused run's effectivePermissions must be empty",
            )
        return self


class TerminalAction(_ActionBase):
    """The run has ended; nothing more may happen."""

    kind: Literal["terminal"]
    """Always "terminal"."""
    phase: TerminalPhase
    """The terminal phase."""
    status: TerminalStatus
    """Final status, as the UserReport gave it."""
    report_ref: ArtifactUri | None
    """The UserReport, or null (e.g. after cancel)."""


NextAction = Annotated[
    PhaseAction | ClarificationAction | TerminalAction, Field(discriminator="kind")
]
"""The next legal step of a run, told apart by ``kind``."""
