"""Retries: only transport failures are retried, and an unknown COMMIT outcome is read back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor

import asyncpg
import pytest
from ledgerkit import artifact, event, only, start, step

from telic._errors import LedgerConflict, LedgerError
from telic.ledger import Commit, open_ledger
from telic.ledger._base import Plan, Probe, Probed, Reader
from telic.ledger._memory import MemoryBackend
from telic.ledger._plans import Ledger
from telic.ledger._postgres import PostgresBackend
from telic.ledger._retry import MAX_ATTEMPTS, OutcomeUnknownError, TransientError

pytestmark = pytest.mark.anyio


class FlakyBackend:
    """The memory backend with scripted transport failures on the next mutations.

    ``busy``: fails before the transaction starts. ``lost_before_commit``: the transaction runs,
    then fails and rolls back. ``lost_in_commit_landed``: commits, then reports an unknown outcome.
    ``lost_in_commit_rolled_back``: rolls back and reports an unknown outcome.
    """

    def __init__(self) -> None:
        self.inner = MemoryBackend()
        self.script: list[str] = []
        self.attempts = 0

    async def mutate(self, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]) -> Plan:
        self.attempts += 1
        action = self.script.pop(0) if self.script else "ok"
        if action == "busy":
            raise TransientError("database is locked")

        def fail_after(probed: Probed) -> Plan:
            plan(probed)  # the whole transaction runs, then fails before anything is stored
            if action == "lost_before_commit":
                raise TransientError("connection reset")
            raise OutcomeUnknownError("connection lost during COMMIT")

        if action in ("lost_before_commit", "lost_in_commit_rolled_back"):
            return await self.inner.mutate(run_id, probe, fail_after)
        decided = await self.inner.mutate(run_id, probe, plan)
        if action == "lost_in_commit_landed":
            raise OutcomeUnknownError("connection lost during COMMIT")
        return decided

    def read(self) -> AsyncIterator[Reader]:  # type: ignore[override]
        return self.inner.read()  # type: ignore[return-value]

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def flaky() -> FlakyBackend:
    return FlakyBackend()


@pytest.fixture
def ledger(flaky: FlakyBackend) -> Ledger:
    return Ledger(flaky)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "failures",
    [["busy", "busy"], ["lost_before_commit"], ["busy", "lost_in_commit_rolled_back"]],
)
async def test_transport_failures_are_retried_until_the_step_is_stored_once(
    ledger: Ledger, flaky: FlakyBackend, failures: list[str]
) -> None:
    await start(ledger)
    flaky.script = list(failures)
    flaky.attempts = 0
    commit = await step(ledger, "run-1", 1, [artifact("a-1")], [event()])
    assert flaky.attempts == len(failures) + 1
    assert commit.run.version == 2
    assert [a.artifact_id for a in await ledger.list_artifacts("run-1")][-1] == "a-1"
    assert len((await ledger.page_trace("run-1")).events) == 2
    assert (await ledger.verify_run("run-1")).ok


async def test_a_step_that_landed_during_a_lost_commit_is_not_run_again(
    ledger: Ledger, flaky: FlakyBackend
) -> None:
    await start(ledger)
    flaky.script = ["lost_in_commit_landed"]
    flaky.attempts = 0
    commit = await step(ledger, "run-1", 1, [artifact("a-1")], [event()])
    assert flaky.attempts == 1  # read back, found, not retried (a retry would be a conflict)
    assert commit.artifacts[0].artifact_id == "a-1"
    assert (await ledger.get_run("run-1")).version == 2


async def test_events_alone_are_read_back_after_a_lost_commit(
    ledger: Ledger, flaky: FlakyBackend
) -> None:
    await start(ledger)
    flaky.script = ["lost_in_commit_landed"]
    (recorded,) = await ledger.record_events("run-1", [event("permission_checked")])
    assert len((await ledger.page_trace("run-1")).events) == 2
    assert (await ledger.page_trace("run-1")).events[1] == recorded


async def test_a_store_that_stays_busy_fails_after_bounded_attempts(
    ledger: Ledger, flaky: FlakyBackend
) -> None:
    await start(ledger)
    flaky.script = ["busy"] * (MAX_ATTEMPTS + 5)
    flaky.attempts = 0
    with pytest.raises(LedgerError, match=f"after {MAX_ATTEMPTS} attempts"):
        await step(ledger, "run-1", 1, [artifact("a-1")])
    assert flaky.attempts == MAX_ATTEMPTS
    assert (await ledger.get_run("run-1")).version == 1


async def test_a_logical_conflict_is_never_retried(ledger: Ledger, flaky: FlakyBackend) -> None:
    await start(ledger)
    await step(ledger, "run-1", 1)
    flaky.attempts = 0
    with pytest.raises(LedgerConflict):
        await step(ledger, "run-1", 1)
    assert flaky.attempts == 1


async def _terminate(base_url: str, application_name: str) -> int:
    killer = await asyncpg.connect(base_url)
    try:
        return int(
            await killer.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = $1",
                application_name,
            )
        )
    finally:
        await killer.close()


@only("postgres")
async def test_a_postgres_connection_dropped_mid_transaction_is_a_retryable_failure(
    ledger_url: str,
) -> None:
    name = f"telic-drop-{uuid.uuid4().hex[:8]}"
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    backend = await PostgresBackend.open(f"{ledger_url}&application_name={name}")
    try:

        def doomed_plan(probed: Probed) -> Plan:
            # Between the probe and the writes, the server drops this connection. The plan is
            # synchronous, so the killer runs on a loop of its own in another thread.
            assert probed.run is not None
            with ThreadPoolExecutor(max_workers=1) as pool:
                killed = pool.submit(asyncio.run, _terminate(ledger_url, name)).result()
            assert killed >= 1
            unchanged = Commit(run=probed.run.record, artifacts=(), events=())
            return Plan(result=unchanged, run=probed.run, expected_version=1, conflict="stale")

        with pytest.raises(TransientError):
            await backend.mutate("run-1", Probe(), doomed_plan)
        # The pool replaces the dead connection; the engine's retry then re-reads and succeeds.
        ledger = Ledger(backend)
        commit = await step(ledger, "run-1", 1, [artifact("a-1")], [event()])
        assert commit.run.version == 2
        assert (await ledger.verify_run("run-1")).ok
    finally:
        await backend.aclose()


async def test_the_waits_between_attempts_grow_exponentially_up_to_a_cap(
    ledger: Ledger, flaky: FlakyBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    await start(ledger)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(round(seconds, 6))

    monkeypatch.setattr("random.uniform", lambda low, high: high)
    monkeypatch.setattr("anyio.sleep", sleep)
    flaky.script = ["busy"] * MAX_ATTEMPTS
    with pytest.raises(LedgerError, match=f"after {MAX_ATTEMPTS} attempts"):
        await step(ledger, "run-1", 1, [artifact("a-1")])
    # With full jitter at its upper bound: 5 ms after the first failure, doubling, capped at 250.
    assert waits == [0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.25]


async def test_a_step_that_succeeds_at_once_never_waits(
    ledger: Ledger, flaky: FlakyBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    await start(ledger)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("anyio.sleep", sleep)
    flaky.attempts = 0
    await step(ledger, "run-1", 1, [artifact("a-1")])
    assert (flaky.attempts, waits) == (1, [])
