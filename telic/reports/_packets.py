"""Evidence packets of a run, as the report shows them: one row each and the digest.

The casting layer stores each sealed packet as an artifact of the internal type
``EvidencePacket`` (the packet's wire form as the body) and each consumption observation as a
``packet_consumed`` trace event whose summary is the ``ConsumptionRecord``'s JSON. A run without
packets simply has an empty packet section; a body that does not parse is listed as unreadable
rather than guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import ValidationError

from telic.reports._model import PacketRow
from telic_packets import ConsumptionRecord, Packet, render_digest


def packet_rows(
    packets: Sequence[tuple[str, Mapping[str, Any]]],
    consumptions: Sequence[str],
    observed: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[tuple[PacketRow, ...], str]:
    """Return a row per stored packet and the digest of the readable ones.

    ``consumptions`` are the JSON summaries of the run's ``packet_consumed`` events;
    ``observed`` is cast id → the (turns, tool calls) Telic saw a native child spend, which the
    digest shows beside the self-reported tokens.
    """
    records: dict[str, ConsumptionRecord] = {}
    for summary in consumptions:
        try:
            consumed_record = ConsumptionRecord.from_wire(json.loads(summary))
        except (ValueError, ValidationError):
            continue
        records[consumed_record.packet_id] = consumed_record
    rows: list[PacketRow] = []
    pairs: list[tuple[Packet, ConsumptionRecord | None]] = []
    for artifact_id, body in packets:
        try:
            packet = Packet.from_wire(dict(body))
        except ValidationError:
            rows.append(
                PacketRow(
                    artifact_id=artifact_id,
                    packet_id="(unreadable)",
                    cast_type="",
                    need_code="",
                    outcome="",
                    verdict="",
                    total_tokens=0,
                    consumption="not observed",
                    cite_kind=None,
                )
            )
            continue
        record = records.get(packet.packet_id)
        pairs.append((packet, record))
        consumed: Literal["cited", "not cited", "not observed"] = "not observed"
        if record is not None:
            consumed = "cited" if record.cited else "not cited"
        rows.append(
            PacketRow(
                artifact_id=artifact_id,
                packet_id=packet.packet_id,
                cast_type=packet.cast_type,
                need_code=packet.routing.need_code,
                outcome=packet.outcome,
                verdict=packet.verdict,
                total_tokens=packet.counters.total_tokens,
                consumption=consumed,
                cite_kind=None if record is None else record.cite_kind,
            )
        )
    return tuple(rows), render_digest(pairs, marked=True, observed=observed)
