"""Honest consumption: a packet is judged by its parent's next decision, not a sibling's cast.

Fan-out (casts one after another), fan-in (children in flight together) and nested casts (a
child casting a grandchild) each record, per packet, whether the parent's next decision cited
it and which decision that was; the digest marks each packet consumed or unconsumed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from telic.casting import consumption_records

from ..roles.kit import EXPLORE, ServiceFlow, good_return, serving, start_wide_run  # noqa: TID252

pytestmark = pytest.mark.anyio


async def _executing(service: Any, ledger: Any, depth: int = 1) -> ServiceFlow:
    if depth > 1:
        flow = await start_wide_run(
            service, ledger, workers=3, children=3, depth=depth, cast_types=[EXPLORE]
        )
    else:
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
    await flow.to_execute(depth=depth)
    return flow


async def _work_result(flow: ServiceFlow, *packet_ids: str) -> str:
    await flow.submit("Evidence", flow.b.evidence())
    result = flow.b.result()
    result["rationaleSummary"] = "Per " + " and ".join(packet_ids) + " the limit is 5."
    await flow.submit("WorkResult", result)
    return f"artifact://{flow.b.run_id}/result-1"


async def test_fan_out_a_sibling_cast_is_not_a_decision_about_an_earlier_packet(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await _executing(service, ledger)
        a = await flow.cast()
        packet_a = await service.return_packet(flow.b.run_id, a.cast_id, good_return())
        b = await flow.cast(brief="Find the backoff constant; see the pointers.")
        assert packet_a.packet_id not in await consumption_records(ledger, flow.b.run_id)
        packet_b = await service.return_packet(flow.b.run_id, b.cast_id, good_return())
        result = await _work_result(flow, packet_a.packet_id, packet_b.packet_id)
        records = await consumption_records(ledger, flow.b.run_id)
        for packet in (packet_a, packet_b):
            record = records[packet.packet_id]
            assert (record.cited, record.cite_kind, record.consumer_ref) == (True, "token", result)
        digest = await service.get_digest(flow.b.run_id)
        assert digest.count(f"consumed by {result} (token)") == 2


async def test_fan_out_a_brief_that_cites_a_packet_consumes_it(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await _executing(service, ledger)
        a = await flow.cast()
        packet_a = await service.return_packet(flow.b.run_id, a.cast_id, good_return())
        b = await flow.cast(packet_refs=[packet_a.packet_id])
        record = (await consumption_records(ledger, flow.b.run_id))[packet_a.packet_id]
        assert record.cited
        assert record.consumer_ref == f"artifact://{flow.b.run_id}/{b.cast_id}"


async def test_fan_in_the_next_phase_artifact_judges_every_child_in_flight(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await _executing(service, ledger)
        a, b = await flow.cast(), await flow.cast()
        packet_a = await service.return_packet(flow.b.run_id, a.cast_id, good_return())
        packet_b = await service.return_packet(flow.b.run_id, b.cast_id, good_return())
        result = await _work_result(flow, packet_b.packet_id)
        records = await consumption_records(ledger, flow.b.run_id)
        assert (records[packet_a.packet_id].cited, records[packet_a.packet_id].consumer_ref) == (
            False,
            result,
        )
        assert records[packet_b.packet_id].cited
        lines = (await service.get_digest(flow.b.run_id)).splitlines()
        assert packet_a.packet_id in lines[0]
        assert lines[0].endswith(f"unconsumed: not cited by {result}")
        assert lines[1].endswith(f"consumed by {result} (token)")


async def test_nested_a_grandchild_s_packet_is_judged_by_its_parent_s_return(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await _executing(service, ledger, depth=2)
        child = await flow.cast()
        small = {"maxTurns": 2, "maxTotalTokens": 1_000}
        cited = await flow.cast(parent_cast_id=child.cast_id, budget=small)
        ignored = await flow.cast(parent_cast_id=child.cast_id, budget=small)
        cited_packet = await service.return_packet(flow.b.run_id, cited.cast_id, good_return())
        ignored_packet = await service.return_packet(flow.b.run_id, ignored.cast_id, good_return())
        # The executor's decisions are not the grandchildren's parent's.
        await flow.submit("Evidence", flow.b.evidence())
        assert cited_packet.packet_id not in await consumption_records(ledger, flow.b.run_id)
        claim = f"Per {cited_packet.packet_id} the retry limit is MAX_RETRIES = 5"
        parent_packet = await service.return_packet(
            flow.b.run_id, child.cast_id, good_return(claim=claim)
        )
        records = await consumption_records(ledger, flow.b.run_id)
        parent_uri = f"artifact://{flow.b.run_id}/{parent_packet.packet_id}"
        assert (
            records[cited_packet.packet_id].cited,
            records[cited_packet.packet_id].consumer_ref,
        ) == (
            True,
            parent_uri,
        )
        assert records[ignored_packet.packet_id].cited is False
        assert records[ignored_packet.packet_id].consumer_ref == parent_uri
        assert parent_packet.packet_id not in records
        result = await _work_result(flow, parent_packet.packet_id)
        record = (await consumption_records(ledger, flow.b.run_id))[parent_packet.packet_id]
        assert (record.cited, record.consumer_ref) == (True, result)


async def test_a_packet_without_a_parent_decision_yet_is_marked_so(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await _executing(service, ledger)
        child = await flow.cast()
        packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        (line,) = (await service.get_digest(flow.b.run_id)).splitlines()
        assert line.startswith(f"[completed/verified] [{packet.packet_id}] explore: ")
        assert line.endswith(
            "(locate; 0 tokens self-reported) — unconsumed: no parent decision yet"
        )
