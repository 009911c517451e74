"""Returns: exhaustion, repair requests, verification against the ledger, sealing, telemetry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from telic.casting import CONSUMED_EVENT, consumption_records, run_digest
from telic_packets import DIGEST_MAX_CHARS, PacketRefusal

from ..roles.kit import EXPLORE, ServiceFlow, good_return, serving  # noqa: TID252

pytestmark = pytest.mark.anyio


async def _cast(service: Any, **kwargs: Any) -> tuple[ServiceFlow, Any]:
    flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
    await flow.to_execute(**kwargs)
    return flow, await flow.cast()


PARTIAL = {"remaining": ["check the backoff constant too"]}


@pytest.mark.parametrize(
    ("counters", "stop"),
    [
        ({"turns": 9, "tool_calls": 3, "input_tokens": 100, "output_tokens": 10}, "turn_capped"),
        (
            {"turns": 2, "tool_calls": 3, "input_tokens": 15_000, "output_tokens": 5_001},
            "token_capped",
        ),
    ],
)
async def test_an_exhausted_cast_accepts_only_a_typed_partial(
    tmp_path: Path, counters: dict[str, int], stop: str
) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        run_id = flow.b.run_id
        within = await service.cast_progress(
            run_id, child.cast_id, turns=1, tool_calls=1, input_tokens=10, output_tokens=1
        )
        assert not within.exhausted
        status = await service.cast_progress(run_id, child.cast_id, **counters)
        assert status.exhausted
        assert status.stop_reason == stop
        with pytest.raises(PacketRefusal) as more:
            await service.cast_progress(run_id, child.cast_id, **counters)
        assert more.value.code == "budget_exhausted_requires_partial"
        with pytest.raises(PacketRefusal) as completed:
            await service.return_packet(run_id, child.cast_id, good_return())
        assert completed.value.code == "budget_exhausted_requires_partial"
        packet = await service.return_packet(run_id, child.cast_id, good_return(**PARTIAL))
        assert (packet.outcome, packet.stop_reason) == ("partial", stop)
        assert packet.counters.turns == counters["turns"]
        assert packet.remaining == PARTIAL["remaining"]


async def test_counters_never_go_down(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        await service.cast_progress(
            flow.b.run_id, child.cast_id, turns=5, tool_calls=5, input_tokens=50, output_tokens=5
        )
        status = await service.cast_progress(
            flow.b.run_id, child.cast_id, turns=1, tool_calls=1, input_tokens=1, output_tokens=1
        )
        assert (status.counters.turns, status.counters.total_tokens) == (5, 55)


async def test_prose_is_refused_with_a_repair_request_and_the_cast_stays_open(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        with pytest.raises(PacketRefusal) as refused:
            await service.return_packet(
                flow.b.run_id, child.cast_id, "I looked around and the limit is probably 5."
            )
        assert refused.value.code == "not_a_packet"
        packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        assert packet.verdict == "verified"


async def test_an_oversized_return_is_refused(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        with pytest.raises(PacketRefusal) as refused:
            await service.return_packet(
                flow.b.run_id, child.cast_id, good_return(claim="x" * 70_000)
            )
        assert refused.value.code == "packet_too_large"
        line = {"kind": "file_state", "source": "repo://src/retry.py", "locator": "L" * 160}
        lines = [dict(line, quote="é" * 240)] * 12
        with pytest.raises(PacketRefusal) as sealed:
            await service.return_packet(
                flow.b.run_id, child.cast_id, good_return(evidence=lines, claim="c" * 280)
            )
        assert sealed.value.code == "packet_too_large"


async def test_a_quote_that_is_not_in_the_ledger_is_unverified_and_lowers_the_verdict(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        returned = good_return()
        returned["evidence"].append(
            {"kind": "file_state", "source": "repo://src/retry.py", "quote": "MAX_RETRIES = 7"}
        )
        packet = await service.return_packet(flow.b.run_id, child.cast_id, returned)
        assert [line.verified for line in packet.evidence] == [True, False]
        assert packet.verdict == "partially_verified"
        assert packet.counters.evidence_verified == 1


async def test_a_quote_verifies_against_stored_evidence_by_its_artifact_uri(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        await flow.submit("Evidence", flow.b.evidence())
        source = f"artifact://{flow.b.run_id}/evidence-1"
        returned = good_return()
        returned["evidence"] = [{"kind": "observation", "source": source, "quote": "ok"}]
        packet = await service.return_packet(flow.b.run_id, child.cast_id, returned)
        assert packet.evidence[0].verified
        assert packet.verdict == "partially_verified"  # the expected file_state is missing


async def test_a_child_that_never_returns_is_sealed_when_the_run_is_cancelled(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        await service.cast_progress(
            flow.b.run_id, child.cast_id, turns=2, tool_calls=4, input_tokens=30, output_tokens=7
        )
        await service.cancel_run(flow.b.run_id, *flow.token())
        details = await service.get_run(flow.b.run_id)
        packets = [a for a in details.artifacts if a.type == "EvidencePacket"]
        assert len(packets) == 1
        sealed = await service.get_artifact(flow.b.run_id, packets[0].artifact_id)
        assert sealed.body["outcome"] == "cancelled"
        assert sealed.body["castId"] == child.cast_id
        assert sealed.body["counters"]["turns"] == 2
        assert sealed.body["counters"]["totalTokens"] == 37
        with pytest.raises(PacketRefusal) as late:
            await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        assert late.value.code == "cast_not_open"
        assert (await service.verify_run(flow.b.run_id)).ok


async def test_open_casts_are_sealed_when_the_node_s_result_is_accepted(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        await flow.submit("Evidence", flow.b.evidence())
        await flow.submit("WorkResult", flow.b.result())
        sealed = await service.get_artifact(flow.b.run_id, (await _packet_ids(service, flow))[0])
        assert sealed.body["outcome"] == "cancelled"
        assert sealed.body["castId"] == child.cast_id


async def _packet_ids(service: Any, flow: ServiceFlow) -> list[str]:
    details = await service.get_run(flow.b.run_id)
    return [a.artifact_id for a in details.artifacts if a.type == "EvidencePacket"]


@pytest.mark.parametrize("kind", ["token", "ref", "hash", "none"])
async def test_the_next_decision_is_checked_for_a_citation_once(tmp_path: Path, kind: str) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow, child = await _cast(service)
        packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        uri = f"artifact://{flow.b.run_id}/{packet.packet_id}"
        await flow.submit("Evidence", flow.b.evidence())
        result = flow.b.result()
        refs: list[str] = []
        if kind == "token":
            result["rationaleSummary"] = f"Per {packet.packet_id} the limit is 5."
        elif kind == "ref":
            refs = [uri]
        elif kind == "hash":
            result["rationaleSummary"] = f"See packet {packet.packet_sha256[7:19]}."
        await flow.submit("WorkResult", result, refs)
        records = await consumption_records(ledger, flow.b.run_id)
        record = records[packet.packet_id]
        assert record.cite_kind == kind
        assert record.cited is (kind != "none")
        assert record.consumer_ref == f"artifact://{flow.b.run_id}/result-1"
        trace = await ledger.page_trace(flow.b.run_id, 0, 1000)
        events = [e for e in trace.events if e.event_type == CONSUMED_EVENT]
        assert len(events) == 1
        assert json.loads(events[0].decision_summary)["citeKind"] == kind


async def test_another_cast_is_a_decision_that_may_cite_a_packet(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow, child = await _cast(service)
        packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        await flow.cast(packet_refs=[packet.packet_id])
        records = await consumption_records(ledger, flow.b.run_id)
        assert records[packet.packet_id].cite_kind == "token"


async def test_the_digest_lists_unconsumed_packets_first(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow, first = await _cast(service)
        cited = await service.return_packet(flow.b.run_id, first.cast_id, good_return())
        second = await flow.cast(brief=f"Build on {cited.packet_id}: find the backoff.")
        returned = good_return(claim="The backoff is not in src/retry.py")
        uncited = await service.return_packet(flow.b.run_id, second.cast_id, returned)
        digest = await service.get_digest(flow.b.run_id)
        lines = digest.splitlines()
        assert [uncited.packet_id in lines[0], cited.packet_id in lines[1]] == [True, True]
        assert lines[0].startswith("[completed/verified]")


async def test_the_digest_is_bounded_to_six_thousand_characters(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow, child = await _cast(service)
        await service.return_packet(flow.b.run_id, child.cast_id, good_return())
        state = await service._controller.load(flow.b.run_id)
        (stored,) = state.all("EvidencePacket")
        copies = tuple(
            dataclasses.replace(
                stored,
                id=f"pk_{n:024d}",
                body=stored.body.model_copy(update={"packet_id": f"pk_{n:024d}"}),
            )
            for n in range(80)
        )
        digest = run_digest(dataclasses.replace(state, artifacts=copies), {})
        assert len(digest) <= DIGEST_MAX_CHARS
        assert digest.splitlines()[-1].endswith("older packets omitted")


@pytest.mark.parametrize(
    "source",
    [
        "repo://../outside.txt",
        "repo://src/../../outside.txt",
        "repo:///etc/hosts",
        "repo://src\\\\..\\\\x",
        "repo://src%2f..%2fx",
    ],
)
def test_an_evidence_source_outside_the_repository_is_refused_as_cast_pointers_are(
    source: str,
) -> None:
    # Issue 28, item 7: ``repo://../…`` was accepted as a packet's evidence source.
    from telic_packets import parse_child_return

    line = {"kind": "file_state", "source": source, "quote": "MAX_RETRIES = 5"}
    with pytest.raises(PacketRefusal) as caught:
        parse_child_return({"claim": "the limit is 5", "evidence": [line], "completed": [0]})
    assert caught.value.code == "not_a_packet"
    assert "plain path inside the repository" in str(caught.value)
    plain = dict(line, source="repo://src/retry.py")
    parsed = parse_child_return({"claim": "the limit is 5", "evidence": [plain], "completed": [0]})
    assert parsed.evidence[0].source == "repo://src/retry.py"
