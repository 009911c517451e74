"""Replay: what happened in a run, one step per stored artifact (``docs/protocol.md`` §2,
``telic_replay_run``, which says how each step and highlight is computed), built purely from
the ledger's records.

``replay_report`` is the whole computation; the driver only reads the ledger (the run row, the
artifact records, the trace, each artifact re-read for its digest status, the chain walk) and
hands the records here, so the report is deterministic and testable without I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from telic._errors import IntegrityError, NotFound
from telic.ledger import JSON, ArtifactRecord, RunRecord, TraceRecord, VerifyReport
from telic.protocol import Topology

DigestStatus = Literal["ok", "mismatch", "missing"]
"""How an artifact re-read through the ledger fared: its bytes and record still hash to what
was stored (``ok``), they do not (``mismatch``), or its body or row is gone (``missing``)."""

ESCALATION_EVENT: Final = "topology_escalated"
_HOST_CHECKS: Final = frozenset({"broker_decision", "permission_checked"})
_MICRO_REASON: Final = "micro_topology"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayStep:
    """One stored artifact of the run, where it entered the trace, and whether it still checks."""

    sequence: int
    phase: str
    """The internal phase of the event that produced it (``agent_3_review``, not the protocol
    name ``agent_3_quality_review``)."""
    artifact_ref: str
    artifact_type: str
    digest_status: DigestStatus
    escalation_reason: str | None = None
    """The reason code when the producing event is a topology escalation; absent otherwise."""

    def to_wire(self) -> dict[str, JSON]:
        """The original's step: ``escalationReason`` only when there is one."""
        wire: dict[str, JSON] = {
            "sequence": self.sequence,
            "phase": self.phase,
            "artifactRef": self.artifact_ref,
            "artifactType": self.artifact_type,
            "digestStatus": self.digest_status,
        }
        if self.escalation_reason is not None:
            wire["escalationReason"] = self.escalation_reason
        return wire


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    """A run replayed step by step, with its highlights and (ours) its hash-chain walk."""

    run_id: str
    topology: Topology
    steps: tuple[ReplayStep, ...]
    trace_highlights: tuple[str, ...]
    degraded: bool = False
    """True only for a micro run, whose replay is the stub."""
    chain: VerifyReport | None = None
    """The run's hash-chain walk (``telic_verify_run``), when it was made."""
    trace_readable: bool = True
    """False when the trace itself failed verification: the steps then carry no trace index."""

    def to_wire(self) -> dict[str, JSON]:
        """The original's report (``degraded``/``reason`` only for micro), then ``chain``."""
        wire: dict[str, JSON] = {
            "runId": self.run_id,
            "topology": self.topology,
            "steps": [step.to_wire() for step in self.steps],
            "traceHighlights": list(self.trace_highlights),
        }
        if self.degraded:
            wire["degraded"] = True
            wire["reason"] = _MICRO_REASON
        if self.chain is not None:
            broken = self.chain.first_broken
            wire["chain"] = {
                "intact": self.chain.ok,
                "recordsChecked": self.chain.records_checked,
                "firstBroken": None
                if broken is None
                else {"kind": broken.kind, "id": broken.id, "reason": broken.reason},
                "traceReadable": self.trace_readable,
            }
        return wire


def digest_status(error: IntegrityError | NotFound | None) -> DigestStatus:
    """How re-reading an artifact through the ledger fared, from the error it raised (or None).

    A read that succeeds is ``ok``; a row that is gone, or a body that is gone (the ledger's
    ``blob_missing`` issue), is ``missing``; any other integrity failure is ``mismatch``.
    """
    if error is None:
        return "ok"
    if isinstance(error, NotFound):
        return "missing"
    gone = any(issue.code == "blob_missing" for issue in error.issues)
    return "missing" if gone else "mismatch"


def replay_report(
    run: RunRecord,
    artifacts: Sequence[ArtifactRecord],
    events: Sequence[TraceRecord],
    digests: Mapping[str, DigestStatus],
    *,
    topology: Topology,
    chain: VerifyReport | None = None,
    trace_readable: bool = True,
) -> ReplayReport:
    """Replay ``run`` from its records.

    Args:
        run: the run row (its id and current internal phase).
        artifacts: the run's artifact records, in commit order.
        events: the run's trace records (any order; they are walked by sequence).
        digests: artifact id → how its re-read fared; an id missing here counts as ``missing``.
        topology: the run's live topology; ``micro`` gives the degraded stub.
        chain: the run's hash-chain walk, reported beside the original's keys.
        trace_readable: whether ``events`` is the verified trace (False: pass no events).
    """
    degraded = topology == "micro"
    if degraded:  # the stub: no steps, no highlights
        artifacts, events = (), ()
    prefix = f"artifact://{run.run_id}/"
    ids = {record.artifact_id for record in artifacts}
    ordered = sorted(events, key=lambda event: event.sequence)
    produced: dict[str, TraceRecord] = {}
    for event in ordered:
        for ref in event.output_refs:
            if ref.startswith(prefix) and ref[len(prefix) :] in ids:
                produced[ref[len(prefix) :]] = event
    steps = []
    for index, record in enumerate(artifacts):
        source = produced.get(record.artifact_id)
        escalated = source is not None and source.event_type == ESCALATION_EVENT
        step = ReplayStep(
            sequence=index if source is None else source.sequence,
            phase=run.phase if source is None else source.phase,
            artifact_ref=prefix + record.artifact_id,
            artifact_type=record.type,
            digest_status=digests.get(record.artifact_id, "missing"),
            escalation_reason=source.decision_summary if escalated and source is not None else None,
        )
        steps.append(step)
    steps.sort(key=lambda step: step.sequence)  # stable: commit order breaks ties
    escalations = [e.decision_summary for e in ordered if e.event_type == ESCALATION_EVENT]
    denials = [e.decision_summary for e in ordered if _is_denied_check(e)]
    return ReplayReport(
        run_id=run.run_id,
        topology=topology,
        steps=tuple(steps),
        trace_highlights=(*escalations, *denials),
        degraded=degraded,
        chain=chain,
        trace_readable=trace_readable,
    )


def _is_denied_check(event: TraceRecord) -> bool:
    """A host's pre-action check (the original's broker or ours) that denied."""
    if event.event_type not in _HOST_CHECKS:
        return False
    if event.event_type == "permission_checked" and event.actor != "host":
        return False  # an executor's WorkResult decision, not a host check
    decision = event.permission_decision
    return decision is not None and decision.get("decision") == "deny"
