"""Consumption and the digest: did the parent's next decision cite a packet, and what is left.

Both read the ledger only. A packet is *delivered* when it is sealed; the next decision of its
*parent* after that is checked for a citation, once, and the result is written as a
``packet_consumed`` trace event holding the ``ConsumptionRecord``. It is telemetry: nothing
waits on it.

Who the parent is decides what its next decision is. A child of the work node's executor has
the executor as its parent: its next decision is the executor's next phase artifact (a
WorkResult, a plan, a review, an audit, a report, a clarification request). Another cast's
brief is a decision about that packet only when the brief itself cites it: a sibling cast that
does not mention a packet is no verdict on it, so fan-out leaves earlier packets pending for the
phase artifact that follows. A grandchild's parent is the cast that cast it: its next decision is
that cast's own return, so its packet is checked against the parent's sealed packet (and a
nested brief that cites it). A packet whose parent cast was sealed before it falls to the
executor's next decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Final

from telic.casting._child import children_of
from telic.controller import RunState
from telic.ledger import Ledger, TraceRecord
from telic_packets import (
    ConsumptionRecord,
    DigestView,
    Packet,
    consumption,
    digest_view,
    render_digest,
)

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


async def read_trace(ledger: Ledger, run_id: str, after: int = 0) -> list[TraceRecord]:
    """Every trace event of ``run_id`` after sequence ``after``, in order. Raises ``NotFound``."""
    events: list[TraceRecord] = []
    while True:
        page = await ledger.page_trace(run_id, after, 1000)
        events.extend(page.events)
        if not page.has_more or not page.events:
            return events
        after = page.events[-1].sequence


async def consumption_records(ledger: Ledger, run_id: str) -> dict[str, ConsumptionRecord]:
    """Return packet id → its consumption record, read from the run's trace."""
    found: dict[str, ConsumptionRecord] = {}
    await consumption_since(ledger, run_id, 0, found)
    return found


async def observed_spend(ledger: Ledger, run_id: str) -> Mapping[str, tuple[int, int]]:
    """Return cast id → the (turns, tool calls) Telic observed its native child spend, read
    from the run's ``cast_call`` events (only casts whose child the host's hook saw)."""
    events = await read_trace(ledger, run_id)
    return children_of((e.event_type, e.decision_summary) for e in events).observed


async def consumption_since(
    ledger: Ledger, run_id: str, after: int, found: dict[str, ConsumptionRecord]
) -> int:
    """Add to ``found`` the consumption records of trace events after sequence ``after``.

    Returns:
        The last sequence read, where the next call may start (the trace only grows).
    """
    events = await read_trace(ledger, run_id, after)
    for event in events:
        if event.event_type == CONSUMED_EVENT:
            record = ConsumptionRecord.from_wire(json.loads(event.decision_summary))
            found.setdefault(record.packet_id, record)
    return events[-1].sequence if events else after


def parent_casts(state: RunState) -> dict[str, str | None]:
    """Return cast id → the id of the cast that cast it (``None`` for the executor's own)."""
    return {
        record.id: record.source_refs[1].rsplit("/", 1)[-1] if len(record.source_refs) > 1 else None
        for record in state.all("CastRecord")
    }


def unobserved_packets(
    state: RunState, records: dict[str, ConsumptionRecord], parent: str | None = None
) -> tuple[Packet, ...]:
    """Return the packets whose parent is ``parent`` that no decision was checked against yet.

    ``parent`` is a cast id, or ``None`` for the work node's executor, whose packets include
    those of casts whose parent cast is already sealed. Oldest first.
    """
    parents = parent_casts(state)
    sealed = {artifact.body.cast_id for artifact in state.all("EvidencePacket")}

    def belongs(packet: Packet) -> bool:
        owner = parents.get(packet.cast_id)
        if parent is not None:
            return owner == parent
        return owner is None or owner in sealed

    return tuple(
        artifact.body
        for artifact in state.all("EvidencePacket")
        if artifact.body.packet_id not in records and belongs(artifact.body)
    )


def run_digest(
    state: RunState,
    records: dict[str, ConsumptionRecord],
    observed: Mapping[str, tuple[int, int]] | None = None,
) -> str:
    """Render the digest of the run's packets: unconsumed, partial, unverified, the rest.

    Each line ends with its consumption marker (consumed by which decision, or unconsumed);
    ``observed`` (cast id → turns and tool calls Telic saw a native child spend, from
    ``children_of``) stands beside the self-reported tokens.
    """
    return render_digest(_with_records(state, records), marked=True, observed=observed)


def run_digest_view(
    state: RunState,
    records: dict[str, ConsumptionRecord],
    observed: Mapping[str, tuple[int, int]] | None = None,
) -> DigestView:
    """Return the run's digest in the contract's line format, each line's marks beside it.

    The same packets in the same order as ``run_digest``; what its marked lines add
    (consumption, self-reported tokens, observed spend) is in ``marks``, never in a line.
    """
    return digest_view(_with_records(state, records), observed=observed)


def _with_records(
    state: RunState, records: Mapping[str, ConsumptionRecord]
) -> Iterator[tuple[Packet, ConsumptionRecord | None]]:
    for artifact in state.all("EvidencePacket"):
        yield artifact.body, records.get(artifact.body.packet_id)
