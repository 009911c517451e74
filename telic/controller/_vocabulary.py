"""One vocabulary for people: the protocol's phase and status names and one label for each.

The wire keeps the protocol's names (``agent_1_frame``, ``user_report``, ``completed``, …); the
CLI, the web view and the reports show people the label defined here, and nothing else defines
one. ``run_phase`` is where a run *is*, in protocol names: the terminal status once it has
ended, ``awaiting_clarification`` while it waits for an answer, else the protocol name of its
working phase (internal names such as ``agent_5_report`` never reach a person).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from telic.controller._phases import PHASES
from telic.ledger import TERMINAL_STATUSES as TERMINAL_STATUSES

ELICITED_EVENT: Final = "clarification_elicited"
"""The internal trace event of a clarification answer the user chose in the client's own form
(MCP elicitation); the canonical trace shows it, like ``clarification_answered``, as
``transition_allowed``, and its summary ends with ``ELICITED_SUMMARY``."""
ELICITED_SUMMARY: Final = "by the user in the client's form (MCP elicitation)"

PHASE_LABELS: Final[dict[str, str]] = {
    "received": "Received",
    "context_discovery": "Grounding context",
    "awaiting_clarification": "Waiting for an answer",
    "agent_1_frame": "Framing the problem",
    "agent_2_compile": "Writing the contract",
    "agent_1_review": "Reviewing the contract",
    "agent_2_revision": "Revising the contract",
    "contract_validation": "Checking the contract",
    "agent_3_plan": "Planning the work",
    "plan_validation": "Checking the plan",
    "agent_4_execute": "Doing the work",
    "diagnosis_review": "Reviewing the diagnosis",
    "agent_3_quality_review": "Quality review",
    "agent_3_evidence_reverify": "Evidence recheck",
    "remediation_plan": "Planning a remediation",
    "agent_4_remediation": "Remediating",
    "agent_5_release_audit": "Release audit",
    "user_report": "Writing the report",
    "completed": "Completed",
    "partial": "Partly done",
    "blocked": "Blocked",
    "cancelled": "Cancelled",
}
"""Every protocol phase (``telic.protocol.PHASES``) and its label."""

PROTOCOL_PHASES: Final[dict[str, str]] = {name: spec.protocol for name, spec in PHASES.items()}
"""Each internal phase and its protocol name, as ``PHASES`` says."""

STATUS_LABELS: Final[dict[str, str]] = {
    "running": "Running",
    "active": "Running",
    "awaiting_clarification": "Waiting for an answer",
    "awaiting_input": "Waiting for an answer",
    "completed": "Completed",
    "partial": "Partly done",
    "blocked": "Blocked",
    "cancelled": "Cancelled",
    "failed_verification": "Failed verification",
}
"""Every run status, as the ledger stores it and as the wire reports it, and its label."""

_INTERNAL_EVENTS: Final[dict[str, str]] = {
    "context_source_stored": "stored context source",
    "evidence_captured": "captured evidence",
    "scenario_presentation_stored": "stored scenario",
    "phase_submitted": "accepted",
    "run_started": "run started",
    "run_cancelled": "run cancelled",
    "clarification_answered": "clarification answered",
    ELICITED_EVENT: "clarification answered by the user in the client's form",
    "budget_consumed": "second clarification: routed to the report",
}


def protocol_phase(phase: str) -> str:
    """Return the protocol name of an internal phase; a protocol name is returned unchanged."""
    return PROTOCOL_PHASES.get(phase, phase)


def run_phase(phase: str, status: str) -> str:
    """Where a run with this stored ``phase`` and ``status`` is, as a protocol phase name."""
    if status in TERMINAL_STATUSES:
        return status
    if status in ("awaiting_clarification", "awaiting_input"):
        return "awaiting_clarification"
    return protocol_phase(phase)


def phase_label(phase: str) -> str:
    """The label of a phase (internal or protocol name); an unknown name is shown as it is."""
    name = protocol_phase(phase)
    return PHASE_LABELS.get(name, name)


def status_label(status: str) -> str:
    """The label of a run status; an unknown status is shown as it is."""
    return STATUS_LABELS.get(status, status)


def human_time(timestamp: str) -> str:
    """``2026-12-01T19:48:42.417Z`` as ``2026-12-01 19:48:42 UTC``; anything else unchanged."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp
    if moment.tzinfo is None:
        return timestamp
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _short_id(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def event_summary(event_type: str, rationale: str, output_refs: Sequence[str] = ()) -> str:
    """A one-line summary of a trace event for people.

    The stored ``rationaleSummary`` is kept when it says something; when it only repeats an
    internal event name, or is a JSON record (a packet consumption), the summary is built from
    what the event produced.
    """
    outputs = ", ".join(_short_id(r) for r in output_refs)
    text = rationale.strip()
    if text.startswith("{"):
        import json

        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if isinstance(record, dict) and "packetId" in record:
            cited = "cited" if record.get("cited") else "not cited"
            by = _short_id(str(record.get("consumerRef") or "the next decision"))
            kind = f" ({record['citeKind']})" if record.get("citeKind") else ""
            return f"packet {record['packetId']} {cited} by {by}{kind}"
    verb = _INTERNAL_EVENTS.get(text)
    if verb is None and text and text != event_type:
        return text
    verb = verb or _INTERNAL_EVENTS.get(event_type, event_type.replace("_", " "))
    return f"{verb} {outputs}".strip() if outputs else verb
