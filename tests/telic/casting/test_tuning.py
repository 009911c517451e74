"""The digest across runs: unconsumed rate per cast type and need code, spend per verdict.

Through the service, the ``telic://digest`` MCP resource and ``telic digest --all``; only the
runs of the service's repository count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.casting import render_stats
from telic.cli import main
from telic.ledger import Ledger, open_ledger
from telic.server import build_server

from ..roles.kit import EXPLORE, ServiceFlow, good_return, ids_from, serving  # noqa: TID252

REVIEW = {"needCode": "review", "text": "Review the retry loop", "expectedEvidence": ["file_state"]}


async def _run(service: Any, *, cite: bool, extra: bool) -> None:
    """One run: a locate packet (cited by the WorkResult or not), and maybe a review packet."""
    flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
    await flow.to_execute()
    child = await flow.cast()
    await service.cast_progress(
        flow.b.run_id, child.cast_id, turns=2, tool_calls=3, input_tokens=900, output_tokens=100
    )
    packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
    if extra:  # sealed after the WorkResult would be: left pending
        review = await flow.cast(routing=REVIEW)
        await service.return_packet(flow.b.run_id, review.cast_id, good_return(quote="nowhere"))
        return
    await flow.submit("Evidence", flow.b.evidence())
    result = flow.b.result()
    if cite:
        result["rationaleSummary"] = f"Per {packet.packet_id} the limit is 5."
    await flow.submit("WorkResult", result)


async def _populate(ledger: Ledger, state: Path, root: str) -> None:
    async with serving(state, ledger=ledger, repository_root=root) as (service, _):
        await _run(service, cite=True, extra=False)
        await _run(service, cite=False, extra=False)
        await _run(service, cite=False, extra=True)
    other = {"new_id": ids_from("other"), "repository_root": "/elsewhere"}
    async with serving(state, ledger=ledger, **other) as (service, _):
        await _run(service, cite=False, extra=False)  # another repository: not counted


def _check(stats: dict[str, Any]) -> None:
    assert (stats["runs"], stats["packets"]) == (3, 4)
    routes = {(r["castType"], r["needCode"]): r for r in stats["routes"]}
    assert routes[("explore", "locate")] == {
        "castType": "explore",
        "needCode": "locate",
        "consumed": 1,
        "unconsumed": 1,
        "pending": 1,
        "unconsumedRate": 0.5,
    }
    assert routes[("explore", "review")]["pending"] == 1
    assert routes[("explore", "review")]["unconsumedRate"] is None
    assert [r["needCode"] for r in stats["routes"]] == ["locate", "review"]
    verdicts = {v["verdict"]: v for v in stats["verdicts"]}
    assert verdicts["verified"] == {
        "verdict": "verified",
        "packets": 3,
        "selfReportedTokens": 3_000,
        "selfReportedTurns": 6,
        "measuredWallMs": verdicts["verified"]["measuredWallMs"],
    }
    assert verdicts["verified"]["measuredWallMs"] > 0
    assert verdicts["unverified"]["packets"] == 1
    assert verdicts["unverified"]["selfReportedTokens"] == 0


@pytest.mark.anyio
async def test_the_service_aggregates_the_packets_of_its_repository_s_runs(
    tmp_path: Path,
) -> None:
    async with open_ledger("memory://") as ledger:
        await _populate(ledger, tmp_path / "state", "/repo")
        async with serving(tmp_path / "state", ledger=ledger, new_id=ids_from("x")) as (
            service,
            _,
        ):
            stats = await service.get_packet_stats()
            _check(stats.to_wire())
            text = render_stats(stats)
            assert "explore/locate: 50% unconsumed (1 of 2 judged; 1 pending)" in text
            assert "explore/review: n/a unconsumed (0 of 0 judged; 1 pending)" in text
            assert "verified: 3 packets, 3000 tokens and 6 turns self-reported" in text
            async with Client(build_server(service), mode="legacy") as client:
                resource = await client.read_resource("telic://digest")
            assert resource.contents[0].text == text  # type: ignore[union-attr]


def test_telic_digest_all_prints_the_aggregate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    state = tmp_path / "state"
    url = f"sqlite://{state / 'ledger.sqlite3'}"

    async def populate() -> None:
        async with open_ledger(url) as ledger:
            await _populate(ledger, state, str(root))

    anyio.run(populate)
    monkeypatch.setenv("TELIC_REPOSITORY_ROOT", str(root))
    monkeypatch.setenv("TELIC_STATE_DIR", str(state))
    monkeypatch.setenv("TELIC_DATABASE_URL", url)
    assert main(["digest", "--all", "--json"]) == 0
    _check(json.loads(capsys.readouterr().out))
    assert main(["digest", "--all"]) == 0
    assert "explore/locate: 50% unconsumed" in capsys.readouterr().out
