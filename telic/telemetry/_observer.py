"""The observer: OpenTelemetry spans and events for runs, fed from the ledger's records.

It reads what the controller already committed, so nothing else has to change to be observed,
and it can replay a finished run as well as follow a live one. The span tree of one run::

    invoke_workflow telic                     the run (start: created, end: terminal)
    ├── invoke_agent <logical role>           one per phase submission (start: the previous
    │     └── event telic.permission_checked  step, end: this one), permission decisions
    ├── invoke_agent <cast type>              one per sealed evidence packet (a cast)
    └── events telic.artifact_recorded, telic.clarification_answered, telic.packet_consumed,
        telic.rejection, telic.run_cancelled

Attributes are ids, types, verdicts and counts (``telic._facts``); no text from an artifact body
leaves the process. When ``opentelemetry`` is not installed every method is a no-op.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from telic._errors import TelicError
from telic.casting import parse_time
from telic.controller import ELICITED_EVENT, protocol_phase
from telic.ledger import ArtifactRecord, Ledger, RunRecord, TraceRecord
from telic.protocol import MAX_PLAN_TOOL_CALLS
from telic.reports import deciding_layer
from telic.telemetry._facts import (
    AGENT_NAME,
    OPERATION,
    WORKFLOW_NAME,
    Attributes,
    artifact_facts,
    packet_facts,
)

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider


try:
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised only without the otel extra
    _trace = None  # type: ignore[assignment]

WORKFLOW: Final = "telic"
_WORKFLOW_SPAN: Final = f"invoke_workflow {WORKFLOW}"
_WORKFLOW_ATTRIBUTES: Final[Attributes] = {OPERATION: "invoke_workflow", WORKFLOW_NAME: WORKFLOW}
OTEL_ENV: Final = "TELIC_OTEL"
"""Set to ``1`` or ``true`` to export spans through the global tracer provider."""
_AGENT_SPAN_EVENTS: Final = frozenset({"phase_submitted", "clarification_requested"})


def otel_available() -> bool:
    """Whether the OpenTelemetry API is importable (the ``otel`` extra is installed)."""
    return _trace is not None


def _ns(timestamp: str) -> int:
    moment = parse_time(timestamp)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


@dataclass
class _RunTrack:
    span: Span
    seen_chain: int = 0
    artifacts: int = 0
    """How many of the run's artifacts, and trace events, were observed (the ledger appends)."""
    events: int = 0
    boundary: str = ""
    pending_permissions: list[tuple[Attributes, int]] = field(default_factory=list)
    reserved: int = 0


class TelemetryObserver:
    """Turns a run's ledger records into spans; call ``observe`` after each committed step.

    Args:
        tracer_provider: where spans go; the global provider when ``None``.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer: Tracer | None = None
        if _trace is not None:
            self._tracer = _trace.get_tracer("telic", tracer_provider=tracer_provider)
        self._runs: dict[str, _RunTrack] = {}

    async def observe(self, ledger: Ledger, run_id: str) -> None:
        """Emit spans and events for the records of ``run_id`` not observed yet.

        One read of the ledger, of what was appended since the last call (with the new
        artifacts' verified bodies): the cost follows the step, not the length of the run. The
        run span stays open until the run is terminal. Raises ``NotFound``.
        """
        if self._tracer is None:
            return
        track = self._runs.get(run_id)
        known = (0, 0) if track is None else (track.artifacts, track.events)
        changes = await ledger.read_changes(run_id, *known)
        record = changes.run
        if track is None:
            track = self._open(record)
        artifacts = [item.record for item in changes.artifacts]
        bodies = {item.record.artifact_id: item.body for item in changes.artifacts}
        by_uri = {f"artifact://{run_id}/{a.artifact_id}": a for a in artifacts}
        records: list[ArtifactRecord | TraceRecord] = [*artifacts, *changes.events]
        for item in sorted(records, key=lambda r: r.chain_index):
            if isinstance(item, TraceRecord):
                self._event(track, item, by_uri, bodies)
            elif item.type == "EvidencePacket":
                self._cast(track, bodies.get(item.artifact_id, {}), item.created_at)
            track.seen_chain = max(track.seen_chain, item.chain_index)
        track.artifacts, track.events = changes.artifact_count, changes.event_count
        if record.terminal:
            self._close(run_id, record)

    def on_rejection(
        self, run_id: str, error: TelicError, *, artifact_type: str | None = None
    ) -> None:
        """Record a refused submission: its error code and rule ids (never its message)."""
        if self._tracer is None:
            return
        attributes: Attributes = {
            "telic.run.id": run_id,
            "telic.error.code": error.code,
            "telic.rule_ids": list(error.rules),
        }
        if artifact_type is not None:
            attributes["telic.artifact.type"] = artifact_type
        track = self._runs.get(run_id)
        if track is not None:
            track.span.add_event("telic.rejection", attributes)
            return
        with self._tracer.start_as_current_span(
            _WORKFLOW_SPAN, attributes=_WORKFLOW_ATTRIBUTES
        ) as span:
            span.add_event("telic.rejection", attributes)

    def close(self) -> None:
        """End every run span still open (a process stopping mid-run)."""
        for track in self._runs.values():
            self._flush_permissions(track, track.span)
            track.span.set_attribute("telic.run.open", True)
            track.span.end()
        self._runs.clear()

    def _open(self, record: RunRecord) -> _RunTrack:
        assert self._tracer is not None
        span = self._tracer.start_span(
            _WORKFLOW_SPAN,
            start_time=_ns(record.created_at),
            attributes={
                **_WORKFLOW_ATTRIBUTES,
                "telic.run.id": record.run_id,
                "telic.run.mode": record.requested_mode,
            },
        )
        track = _RunTrack(span=span, boundary=record.created_at)
        self._runs[record.run_id] = track
        return track

    def _close(self, run_id: str, record: RunRecord) -> None:
        track = self._runs.pop(run_id)
        span = track.span
        self._flush_permissions(track, span)
        span.set_attribute("telic.run.status", record.status)
        span.set_attribute("telic.run.version", record.version)
        span.set_attribute("telic.run.phase", protocol_phase(record.phase))
        span.set_attribute(
            "telic.budget.prompt_revisions.remaining", record.prompt_revisions_remaining
        )
        span.set_attribute("telic.budget.remediations.remaining", record.remediations_remaining)
        span.set_attribute("telic.budget.tool_calls.reserved", track.reserved)
        span.set_attribute("telic.budget.tool_calls.limit", MAX_PLAN_TOOL_CALLS)
        if record.outcome_hint is not None:
            span.set_attribute("telic.run.outcome_hint", record.outcome_hint)
        span.set_attribute("telic.ledger.chain_length", track.seen_chain)
        span.end(end_time=_ns(record.updated_at))

    def _child(self, track: _RunTrack, name: str, start: int, attributes: Attributes) -> Span:
        assert self._tracer is not None
        assert _trace is not None
        return self._tracer.start_span(
            name,
            context=_trace.set_span_in_context(track.span),
            start_time=start,
            attributes=attributes,
        )

    def _flush_permissions(self, track: _RunTrack, span: Span) -> None:
        for attributes, at in track.pending_permissions:
            span.add_event("telic.permission_checked", attributes, timestamp=at)
        track.pending_permissions.clear()

    def _event(
        self,
        track: _RunTrack,
        event: TraceRecord,
        by_uri: Mapping[str, ArtifactRecord],
        bodies: Mapping[str, Mapping[str, Any]],
    ) -> None:
        at = _ns(event.timestamp)
        kind = event.event_type
        if kind == "permission_checked" and event.permission_decision is not None:
            decision = event.permission_decision
            track.pending_permissions.append(
                (
                    {
                        "telic.permission.decision": "ALLOW"
                        if decision.get("decision") == "allow"
                        else "DENY",
                        "telic.permission.capability": str(decision.get("capability", "")),
                        "telic.permission.deciding_layer": deciding_layer(decision),
                    },
                    at,
                )
            )
            return
        artifact = next((by_uri[r] for r in event.output_refs if r in by_uri), None)
        if kind in _AGENT_SPAN_EVENTS and artifact is not None:
            body = bodies.get(artifact.artifact_id, {})
            attributes: Attributes = {
                OPERATION: "invoke_agent",
                AGENT_NAME: event.actor,
                "telic.phase": protocol_phase(event.phase),
                "telic.artifact.type": artifact.type,
                "telic.artifact.id": artifact.artifact_id,
                "telic.artifact.sha256": artifact.sha256,
                **artifact_facts(artifact.type, body),
            }
            reserved = attributes.get("telic.budget.tool_calls.reserved")
            if isinstance(reserved, int):
                track.reserved += reserved
            start = _ns(track.boundary)
            span = self._child(track, f"invoke_agent {event.actor}", start, attributes)
            self._flush_permissions(track, span)
            span.end(end_time=at)
            track.boundary = event.timestamp
            return
        if kind == "run_started":
            track.boundary = event.timestamp
            return
        attributes = {"telic.event": kind, "telic.phase": protocol_phase(event.phase)}
        if artifact is not None:
            attributes["telic.artifact.type"] = artifact.type
            attributes["telic.artifact.id"] = artifact.artifact_id
            attributes.update(artifact_facts(artifact.type, bodies.get(artifact.artifact_id, {})))
        if kind == "packet_consumed":
            attributes.update(_consumption(event.decision_summary))
        name = {
            "clarification_answered": "telic.clarification_answered",
            ELICITED_EVENT: "telic.clarification_answered",
            "run_cancelled": "telic.run_cancelled",
            "packet_consumed": "telic.packet_consumed",
            "transition_denied": "telic.rejection",
        }.get(kind, "telic.artifact_recorded")
        if kind == ELICITED_EVENT:
            attributes["telic.clarification.elicited"] = True
        if kind in ("clarification_answered", ELICITED_EVENT, "budget_consumed"):
            track.boundary = event.timestamp
        track.span.add_event(name, attributes, timestamp=at)

    def _cast(self, track: _RunTrack, body: Mapping[str, Any], created_at: str) -> None:
        attributes: Attributes = {OPERATION: "invoke_agent", **packet_facts(body)}
        wall = attributes.get("telic.packet.wall_ms")
        end = _ns(created_at)
        start = end - (wall * 1_000_000 if isinstance(wall, int) else 0)
        span = self._child(track, f"invoke_agent {attributes[AGENT_NAME]}", start, attributes)
        span.end(end_time=end)


def _consumption(summary: str) -> Attributes:
    try:
        record = json.loads(summary)
    except ValueError:
        return {}
    if not isinstance(record, dict):
        return {}
    facts: Attributes = {}
    for key, name in (("packetId", "telic.packet.id"), ("citeKind", "telic.packet.cite_kind")):
        if isinstance(record.get(key), str):
            facts[name] = record[key]
    if isinstance(record.get("cited"), bool):
        facts["telic.packet.cited"] = record["cited"]
    return facts


async def export_run(
    ledger: Ledger, run_id: str, *, tracer_provider: TracerProvider | None = None
) -> None:
    """Emit the whole span tree of a recorded run (a run still open is ended as ``open``)."""
    observer = TelemetryObserver(tracer_provider)
    await observer.observe(ledger, run_id)
    observer.close()


def telemetry_from_env(environ: Mapping[str, str] | None = None) -> TelemetryObserver | None:
    """Return an observer when ``TELIC_OTEL`` asks for one and OpenTelemetry is installed."""
    env = os.environ if environ is None else environ
    if env.get(OTEL_ENV, "").strip().lower() not in ("1", "true", "yes", "on"):
        return None
    return TelemetryObserver() if otel_available() else None
