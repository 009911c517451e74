"""Durable casts: a restart keeps every open cast, its counters and its child's right to return.

Each test closes the service and opens a new one on the same store — a real SQLite file, and a
PostgreSQL schema where one is configured (always in CI) — as a restarted server would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from telic.casting import WALL_GRACE_MS
from telic.ledger import Ledger, open_ledger
from telic_packets import PacketRefusal
from tests.telic.ledger.conftest import postgres_url  # noqa: F401 - the shared fixture

from ..roles.kit import (  # noqa: TID252
    BUDGET,
    EXPLORE,
    ManualClock,
    ServiceFlow,
    good_return,
    ids_from,
    serving,
    start_wide_run,
)

pytestmark = pytest.mark.anyio


def _again() -> Any:
    """Ids of the restarted service, apart from the first one's."""
    return ids_from("again")


STORES = [
    pytest.param("sqlite", "asyncio", id="sqlite-asyncio"),
    pytest.param("sqlite", "trio", id="sqlite-trio"),
    pytest.param("postgres", "asyncio", id="postgres-asyncio", marks=pytest.mark.postgres),
]


@asynccontextmanager
async def _session(url: str, state: Path, **kwargs: Any) -> AsyncIterator[tuple[Any, Ledger]]:
    """One server session: its own ledger connection and service over the store at ``url``."""
    async with open_ledger(url) as ledger, serving(state, ledger=ledger, **kwargs) as (service, _):
        yield service, ledger


@pytest.fixture
def store_url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of an empty store: a SQLite file, or a fresh PostgreSQL schema."""
    if store == "sqlite":
        return f"sqlite://{tmp_path / 'ledger-state' / 'ledger.sqlite3'}"
    url: str = request.getfixturevalue("postgres_url")  # the ledger suite's: fails in CI if unset
    return url


async def _executing(service: Any, ledger: Any, depth: int = 1) -> ServiceFlow:
    if depth > 1:
        flow = await start_wide_run(
            service, ledger, workers=3, children=3, depth=depth, cast_types=[EXPLORE]
        )
    else:
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
    await flow.to_execute(depth=depth)
    return flow


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_restart_keeps_the_counters_and_the_child_may_still_return(
    store_url: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=clock) as (service, ledger):
            flow = await _executing(service, ledger)
            child = await flow.cast(budget=dict(BUDGET, maxWallMs=600_000))
            await service.cast_progress(
                flow.b.run_id,
                child.cast_id,
                turns=3,
                tool_calls=5,
                input_tokens=4_300,
                output_tokens=800,
            )
        # A new ledger connection and a new service: nothing survives but the store.
        async with _session(store_url, state, clock=clock, new_id=_again()) as (service, ledger):
            lower = await service.cast_progress(
                flow.b.run_id,
                child.cast_id,
                turns=1,
                tool_calls=1,
                input_tokens=0,
                output_tokens=0,
            )
            assert lower.counters.turns == 3
            assert lower.calls_through_telic == 2  # the report before the restart and this one
            assert lower.counters.total_tokens == 5_100
            packet = await service.return_packet(flow.b.run_id, child.cast_id, good_return())
            assert (packet.outcome, packet.verdict) == ("completed", "verified")
            assert packet.counters.total_tokens == 5_100
            assert packet.counters.tool_calls == 5
            assert packet.counters.wall_ms > 0
            assert (await service.verify_run(flow.b.run_id)).ok


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_restart_keeps_an_exhausted_cast_exhausted(store_url: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=ManualClock()) as (service, ledger):
            flow = await _executing(service, ledger)
            child = await flow.cast()
            status = await service.cast_progress(
                flow.b.run_id,
                child.cast_id,
                turns=9,
                tool_calls=0,
                input_tokens=0,
                output_tokens=0,
            )
            assert status.stop_reason == "turn_capped"
        async with _session(store_url, state, new_id=_again()) as (service, ledger):
            with pytest.raises(PacketRefusal) as refused:
                await service.return_packet(flow.b.run_id, child.cast_id, good_return())
            assert refused.value.code == "budget_exhausted_requires_partial"
            partial = await service.return_packet(
                flow.b.run_id, child.cast_id, good_return(remaining=["the backoff"])
            )
            assert (partial.outcome, partial.stop_reason) == ("partial", "turn_capped")
            assert partial.counters.turns == 9


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_restart_keeps_a_nested_cast_and_its_parent_s_children(
    store_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=ManualClock()) as (service, ledger):
            flow = await _executing(service, ledger, depth=2)
            child = await flow.cast()
            small = {"maxTurns": 2, "maxTotalTokens": 1_000}
            grandchild = await flow.cast(parent_cast_id=child.cast_id, budget=small)
        async with _session(store_url, state, new_id=_again()) as (service, ledger):
            flow.service = service
            again = await flow.cast(parent_cast_id=child.cast_id, budget=small)
            assert again.depth == 2
            assert again.permissions == grandchild.permissions
            sealed = await service.return_packet(flow.b.run_id, grandchild.cast_id, good_return())
            assert sealed.cast_id == grandchild.cast_id


async def _until(check: Any) -> None:
    """Let every task run until ``check()`` holds; the clock is the manual one, nobody sleeps."""
    with anyio.fail_after(10):
        while not await check():
            await anyio.wait_all_tasks_blocked()


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_after_a_restart_a_wall_cap_and_its_grace_end_on_time_with_nobody_calling(
    store_url: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=clock) as (service, ledger):
            flow = await _executing(service, ledger)
            child = await flow.cast(budget=dict(BUDGET, maxWallMs=1_000))
            await _progress(service, flow.b.run_id, child.cast_id, 2, 700)
        run_id = flow.b.run_id
        # The restarted server is sent nothing about the run: only its keeper can notice.
        async with _session(store_url, state, clock=clock, new_id=_again()) as (service, ledger):

            async def seen(kind: str) -> int:
                trace = await ledger.page_trace(run_id, 0, 1000)
                return [e.event_type for e in trace.events].count(kind)

            async def packets() -> list[Any]:
                return [
                    a for a in await ledger.list_artifacts(run_id) if a.type == "EvidencePacket"
                ]

            async def exhausted() -> bool:
                return await seen("cast_exhausted") == 1

            async def sealed() -> bool:
                return len(await packets()) == 1

            clock.advance(1_000 + 5)
            await _until(exhausted)
            assert await packets() == []  # within the grace the child may still return
            clock.advance(WALL_GRACE_MS)
            await _until(sealed)
            (stored,) = await packets()
            body = (await ledger.read_artifact(run_id, stored.artifact_id)).body
            assert (body["outcome"], body["stopReason"]) == ("cancelled", "wall_capped")
            assert (body["castId"], body["counters"]["totalTokens"]) == (child.cast_id, 700)
            assert service.active_runs == (run_id,)
            assert (await service.verify_run(run_id)).ok


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_restarted_server_starts_no_actor_for_runs_without_an_open_cast(
    store_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=ManualClock()) as (service, ledger):
            flow = await _executing(service, ledger)
        async with _session(store_url, state, new_id=_again()) as (service, ledger):
            assert await service.recover_casts() == 0
            assert service.active_runs == ()
            assert (await ledger.get_run(flow.b.run_id)).phase == "agent_4_execute"


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_casts_of_a_node_that_moved_on_are_sealed_with_their_counters(
    store_url: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store_url, state, clock=ManualClock()) as (service, ledger):
            flow = await _executing(service, ledger)
            child = await flow.cast()
            await service.cast_progress(
                flow.b.run_id,
                child.cast_id,
                turns=2,
                tool_calls=2,
                input_tokens=5_000,
                output_tokens=100,
            )
        async with _session(store_url, state, new_id=_again()) as (service, ledger):
            flow.service = service
            await flow.submit("Evidence", flow.b.evidence())
            await flow.submit("WorkResult", flow.b.result())
            details = await service.get_run(flow.b.run_id)
            (packet,) = [a for a in details.artifacts if a.type == "EvidencePacket"]
            body = (await service.get_artifact(flow.b.run_id, packet.artifact_id)).body
            assert (body["outcome"], body["counters"]["totalTokens"]) == ("cancelled", 5_100)
            with pytest.raises(PacketRefusal) as late:
                await service.return_packet(flow.b.run_id, child.cast_id, good_return())
            assert late.value.code == "cast_not_open"


async def _progress(service: Any, run_id: str, cast_id: str, turns: int, tokens: int) -> Any:
    return await service.cast_progress(
        run_id, cast_id, turns=turns, tool_calls=turns, input_tokens=tokens, output_tokens=0
    )


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_two_servers_on_one_ledger_share_every_open_cast_and_its_counters(
    store_url: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    with anyio.fail_after(60):
        async with (
            _session(store_url, tmp_path / "a", clock=clock) as (first, ledger),
            _session(store_url, tmp_path / "b", clock=clock, new_id=_again()) as (second, _),
        ):
            flow = await _executing(first, ledger)
            run_id = flow.b.run_id
            # The second server's run actor is up before the cast exists: its copy is empty.
            await second.check_tool_action(run_id, "repository.read", "src/retry.py")
            child = await flow.cast(budget=dict(BUDGET, maxWallMs=600_000))
            through_second = await _progress(second, run_id, child.cast_id, 3, 4_000)
            assert through_second.counters.turns == 3
            # The first server must see the second's report: counters only grow.
            through_first = await _progress(first, run_id, child.cast_id, 1, 100)
            assert (through_first.counters.turns, through_first.counters.total_tokens) == (3, 4_000)
            assert through_first.calls_through_telic == 2
            packet = await second.return_packet(run_id, child.cast_id, good_return())
            assert (packet.outcome, packet.counters.turns) == ("completed", 3)
            assert packet.counters.total_tokens == 4_000
            # Returned through the second server, the cast is closed on the first one too.
            with pytest.raises(PacketRefusal) as closed:
                await _progress(first, run_id, child.cast_id, 4, 5_000)
            assert closed.value.code == "cast_not_open"
            with pytest.raises(PacketRefusal) as again:
                await first.return_packet(run_id, child.cast_id, good_return())
            assert again.value.code == "cast_not_open"
            assert (await first.verify_run(run_id)).ok


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_cast_another_server_opened_is_expired_on_time_once_a_message_starts_its_actor(
    store_url: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    with anyio.fail_after(60):
        async with _session(store_url, tmp_path / "a", clock=clock) as (first, ledger):
            # The first server's keeper is up and waiting before the run or its cast exist.
            async with _session(store_url, tmp_path / "b", clock=clock, new_id=_again()) as (
                second,
                _,
            ):
                flow = await _executing(second, ledger)
                child = await flow.cast(budget=dict(BUDGET, maxWallMs=1_000))
            run_id = flow.b.run_id
            # The other server is gone. One host message starts the first server's run actor,
            # which rebuilds the cast from the ledger; after it, nobody calls.
            await first.check_tool_action(run_id, "repository.read", "src/retry.py")

            async def exhausted() -> bool:
                trace = await ledger.page_trace(run_id, 0, 1000)
                return [e.event_type for e in trace.events].count("cast_exhausted") == 1

            clock.advance(1_000 + 5)
            await _until(exhausted)
            with pytest.raises(PacketRefusal) as refused:
                await first.return_packet(run_id, child.cast_id, good_return())
            assert refused.value.code == "budget_exhausted_requires_partial"
            partial = await first.return_packet(
                run_id, child.cast_id, good_return(remaining=["the backoff"])
            )
            assert (partial.outcome, partial.stop_reason) == ("partial", "wall_capped")
