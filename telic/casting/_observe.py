"""Consumption and the digest: did the parent's next decision cite a packet, and what is left.

Both read the ledger only. A packet is *delivered* when it is sealed; the first decision the
parent gets accepted after that (a WorkResult, a plan, a review, an audit, a report, a
clarification request, or another cast) is checked for a citation, once, and the result is
written as a ``packet_consumed`` trace event holding the ``ConsumptionRecord``. It is
telemetry: nothing waits on it. The digest renders every packet of the run, unconsumed first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Final

from telic.controller import RunState
from telic.ledger import Ledger, TraceRecord
from telic_packets import ConsumptionRecord, Packet, consumption, render_digest

__all__ = [
    "CONSUMED_EVENT",
    "DECISION_TYPES",
    "consumption_records",
    "consumption_since",
    "decision_text",
    "observe",
    "packet_uri",
    "run_digest",
    "unobserved_packets",
]

CONSUMED_EVENT: Final = "packet_consumed"
"""The trace event type that holds a ConsumptionRecord (its summary is the record's JSON)."""

DECISION_TYPES: Final = frozenset(
    {
        "WorkResult",
        "WorkPlan",
        "QualityReview",
        "ReleaseAudit",
        "UserReport",
        "ClarificationRequest",
        "PromptReview",
    }
)
"""Artifact types that count as the parent's decisions."""


def packet_uri(packet: Packet) -> str:
    """Return the packet's artifact URI in its run."""
    return f"artifact://{packet.run_id}/{packet.packet_id}"


def decision_text(body: object) -> str:
    """Return the text a decision is searched in for a citation: its JSON, keys sorted."""
    return json.dumps(body, ensure_ascii=False, sort_keys=True)


def observe(
    packets: Iterable[Packet],
    *,
    consumer_ref: str,
    text: str,
    refs: Sequence[str],
    at: datetime,
) -> list[ConsumptionRecord]:
    """Return the consumption record of each packet against one decision."""
    return [
        consumption(
            packet,
            packet_uri=packet_uri(packet),
            consumer_ref=consumer_ref,
            artifact_text=text,
            artifact_refs=refs,
            at=at,
        )
        for packet in packets
    ]


def _records(events: Iterable[TraceRecord]) -> dict[str, ConsumptionRecord]:
    found: dict[str, ConsumptionRecord] = {}
    for event in events:
        if event.event_type == CONSUMED_EVENT:
            record = ConsumptionRecord.from_wire(json.loads(event.decision_summary))
            found.setdefault(record.packet_id, record)
    return found


async def consumption_records(ledger: Ledger, run_id: str) -> dict[str, ConsumptionRecord]:
    """Return packet id → its consumption record, read from the run's trace."""
    found: dict[str, ConsumptionRecord] = {}
    await consumption_since(ledger, run_id, 0, found)
    return found


async def consumption_since(
    ledger: Ledger, run_id: str, after: int, found: dict[str, ConsumptionRecord]
) -> int:
    """Add to ``found`` the consumption records of trace events after sequence ``after``.

    Returns:
        The last sequence read, where the next call may start (the trace only grows).
    """
    while True:
        page = await ledger.page_trace(run_id, after, 1000)
        for packet_id, record in _records(page.events).items():
            found.setdefault(packet_id, record)
        if page.events:
            after = page.events[-1].sequence
        if not page.has_more or not page.events:
            return after


def unobserved_packets(
    state: RunState, records: dict[str, ConsumptionRecord]
) -> tuple[Packet, ...]:
    """Return the run's packets no decision has been checked against yet, oldest first."""
    return tuple(
        artifact.body
        for artifact in state.all("EvidencePacket")
        if artifact.body.packet_id not in records
    )


def run_digest(state: RunState, records: dict[str, ConsumptionRecord]) -> str:
    """Render the digest of the run's packets: unconsumed, partial, unverified, the rest."""
    return render_digest(
        (artifact.body, records.get(artifact.body.packet_id))
        for artifact in state.all("EvidencePacket")
    )
