"""Trace events: the canonical, metadata-only projection of a run's history (docs/protocol.md §3.1).

Each event records who did what in which phase, which artifacts went in and out, any permission
decision, and the budgets at that moment. Events carry short summaries only, never hidden
reasoning, secrets or unredacted tool output.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, get_args

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    ActionTarget,
    ArtifactUri,
    Capability,
    ExitCode,
    Identifier,
    Items,
    Label,
    LogicalRole,
    OnceBudget,
    Phase,
    ReferenceUri,
    Summary,
    Timestamp,
)

MAX_SEQUENCE: Final = 2**53 - 1
"""Largest sequence number (JavaScript's ``Number.MAX_SAFE_INTEGER``)."""

EventType = Literal[
    "run_started",
    "context_selected",
    "phase_started",
    "phase_submitted",
    "artifact_recorded",
    "transition_allowed",
    "transition_denied",
    "permission_checked",
    "tool_started",
    "tool_finished",
    "budget_consumed",
    "clarification_requested",
    "redaction_applied",
    "run_terminated",
    "broker_decision",
    "lineage_linked",
    "topology_classified",
    "topology_escalated",
    "digest_verified",
]
EVENT_TYPES: Final[tuple[EventType, ...]] = get_args(EventType)

RedactionCategory = Literal["credential", "secret", "personal_data", "sensitive_output"]

_TOOL_EVENTS: Final[frozenset[EventType]] = frozenset({"tool_started", "tool_finished"})
_DECISION_EVENTS: Final[frozenset[EventType]] = frozenset({"permission_checked", "broker_decision"})
"""Events that record a permission decision (``broker_decision``: the original Telic's name for
a host's pre-action check asked in its dialect)."""


class ToolTrace(WireModel):
    """A tool invocation seen in the trace."""

    name: Label
    """Tool name."""
    arguments_ref: ArtifactUri | None
    """Stored arguments, or null."""
    result_ref: ArtifactUri | None
    """Stored result, or null."""
    exit_status: ExitCode | None
    """Exit status 0–255, or null while running or when none."""


class PermissionDecision(WireModel):
    """The outcome of one permission check."""

    decision: Literal["allow", "deny"]
    """Whether the action was authorized."""
    capability: Capability
    """The capability checked."""
    scope: ActionTarget
    """The target checked (network targets are reduced to the bare host name)."""
    policy_refs: Items[ReferenceUri]
    """Policies that decided."""
    rationale_summary: Summary
    """Why the decision was made."""


class BudgetSnapshot(WireModel):
    """Budgets at the moment of the event."""

    prompt_revisions: OnceBudget
    """Contract revisions left (0–1)."""
    post_execution_remediations: OnceBudget
    """Shared remediations left (0–1)."""
    transport_retries: Annotated[int, Field(ge=0, le=10)]
    """Transport retries used (0–10)."""


class TraceRedaction(WireModel):
    """Something removed from a traced artifact before it was stored."""

    id: Identifier
    """Id of the redaction."""
    target_ref: ReferenceUri
    """What was redacted."""
    category: RedactionCategory
    """What kind of material was removed."""


class TraceEvent(ArtifactBody):
    """One event in a run's trace."""

    id: Identifier
    """Event id."""
    run_id: Identifier
    """Id of the run."""
    sequence: Annotated[int, Field(ge=0, le=MAX_SEQUENCE)]
    """Position in the run's trace."""
    timestamp: Timestamp
    """When it happened."""
    actor: LogicalRole
    """Who acted; unknown actors are reported as "host"."""
    phase: Phase
    """Protocol phase at the time."""
    event_type: EventType
    """What kind of event this is."""
    input_refs: Items[ReferenceUri]
    """Artifacts the event read."""
    output_refs: Items[ReferenceUri]
    """Artifacts the event produced."""
    tool: ToolTrace | None
    """The tool involved, or null."""
    permission_decision: PermissionDecision | None
    """The permission decision, or null."""
    budget_snapshot: BudgetSnapshot
    """Budgets at the time."""
    rationale_summary: Summary
    """A concise summary of the decision; no hidden reasoning."""
    redactions: Items[TraceRedaction]
    """What was redacted."""

    @model_validator(mode="after")
    def _required_metadata(self) -> TraceEvent:
        if self.event_type in _DECISION_EVENTS and self.permission_decision is None:
            raise PydanticCustomError(
                "trace_permission_decision_missing",
                "A permission_checked or broker_decision event needs a permissionDecision",
            )
        if self.event_type in _TOOL_EVENTS and self.tool is None:
            raise PydanticCustomError(
                "trace_tool_missing", "tool_started and tool_finished events need tool metadata"
            )
        return self
