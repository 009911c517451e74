"""The trace events and artifacts the casting layer writes to the ledger."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from telic.casting._book import OpenCast
from telic.casting._observe import CONSUMED_EVENT, packet_uri
from telic.ledger import NewArtifact, NewTraceEvent, RunRecord, budget_snapshot
from telic_packets import ConsumptionRecord, Packet, canonical_json


def cast_uri(run_id: str, cast_id: str) -> str:
    """Return the URI of a cast's ``CastRecord`` artifact."""
    return f"artifact://{run_id}/{cast_id}"


def event(
    run: RunRecord,
    event_type: str,
    *,
    actor: str,
    event_id: str,
    timestamp: str,
    input_refs: tuple[str, ...] = (),
    output_refs: tuple[str, ...] = (),
    summary: str = "",
    permission_decision: Mapping[str, Any] | None = None,
) -> NewTraceEvent:
    """Return a trace event of ``run`` with the budget snapshot every event carries."""
    return NewTraceEvent(
        actor=actor,
        phase=run.phase,
        event_type=event_type,
        input_refs=input_refs,
        output_refs=output_refs,
        permission_decision=permission_decision,
        decision_summary=summary[:800],
        budget_snapshot=budget_snapshot(run.prompt_revisions_remaining, run.remediations_remaining),
        event_id=event_id,
        timestamp=timestamp,
    )


def cast_artifact(open_cast: OpenCast, created_at: str) -> NewArtifact:
    """Return the ``CastRecord`` artifact of an admitted cast (its id is the cast id).

    Its sourceRefs are the plan, then the parent cast for a nested cast.
    """
    refs = [open_cast.plan_uri]
    if open_cast.parent_cast_id is not None:
        refs.append(cast_uri(open_cast.cast.run_id, open_cast.parent_cast_id))
    return NewArtifact(
        artifact_id=open_cast.cast_id,
        type="CastRecord",
        schema_version="1.0",
        producer="executor",
        body=open_cast.cast.to_wire(),
        source_refs=tuple(refs),
        created_at=created_at,
    )


def packet_artifact(packet: Packet, created_at: str) -> NewArtifact:
    """Return the ``EvidencePacket`` artifact of a sealed packet (its id is the packet id)."""
    return NewArtifact(
        artifact_id=packet.packet_id,
        type="EvidencePacket",
        schema_version="1.0",
        producer="executor",
        body=packet.to_wire(),
        source_refs=(cast_uri(packet.run_id, packet.cast_id),),
        created_at=created_at,
    )


def consumed_event(
    run: RunRecord, record: ConsumptionRecord, packet: Packet, *, event_id: str, timestamp: str
) -> NewTraceEvent:
    """Return the ``packet_consumed`` event holding ``record`` as canonical JSON."""
    return event(
        run,
        CONSUMED_EVENT,
        actor="controller",
        event_id=event_id,
        timestamp=timestamp,
        input_refs=(record.consumer_ref,),
        output_refs=(packet_uri(packet),),
        summary=canonical_json(record.to_wire()).decode("utf-8"),
    )
