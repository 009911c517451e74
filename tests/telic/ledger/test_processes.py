"""Separate OS processes: racing writers get exactly one winner per step, and a writer killed
with SIGKILL at any moment leaves a store that opens, reads back and verifies.

The workers run on asyncio, as Telic does: what a kill or a race tests is the store's
transaction, which the backend of the process that dies does not change (the trio SQLite path
is tested in process on every ledger test's ``sqlite-trio`` case)."""

from __future__ import annotations

import random
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from ledgerkit import only, start

from telic.ledger import open_ledger

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("ledger_worker.py")
ROUNDS = 200
KILLS = 20


class Child:
    """A worker process with line-based stdin/stdout."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, line: str) -> None:
        await self._stdin.send(f"{line}\n".encode())

    async def line(self) -> str:
        return (await self._stdout.receive_until(b"\n", 65536)).decode()


@asynccontextmanager
async def child(*args: str) -> AsyncIterator[Child]:
    process = await anyio.open_process([sys.executable, str(WORKER), *args])
    async with process:
        try:
            yield Child(process)
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()


@pytest.mark.slow
@only("sqlite-asyncio", "postgres")
async def test_two_processes_racing_200_steps_get_exactly_one_winner_each(
    ledger_url: str, anyio_backend: str
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    async with (
        child("race", ledger_url, "run-1", "A", anyio_backend) as a,
        child("race", ledger_url, "run-1", "B", anyio_backend) as b,
    ):
        with anyio.fail_after(30):
            assert [await a.line(), await b.line()] == ["ready", "ready"]
        winners: list[str] = []
        with anyio.fail_after(120):
            for round_ in range(ROUNDS):
                await a.send(str(round_))
                await b.send(str(round_))
                outcome = {"A": await a.line(), "B": await b.line()}
                assert sorted(outcome.values()) == ["lost", "won"], (round_, outcome)
                winners.extend(name for name, result in outcome.items() if result == "won")
            await a.send("quit")
            await b.send("quit")
    async with open_ledger(ledger_url) as ledger:
        run = await ledger.get_run("run-1")
        assert run.version == ROUNDS + 1
        stored = [a.artifact_id for a in await ledger.list_artifacts("run-1")]
        expected = [f"round-{r}-{w}" for r, w in enumerate(winners)]
        assert stored == ["run-1-request", "run-1", *expected]
        trace = await ledger.page_trace("run-1", limit=500)
        assert [e.decision_summary for e in trace.events[1:]] == winners
        assert (await ledger.verify_run("run-1")).ok


@pytest.mark.slow
@only("sqlite-asyncio")
async def test_a_writer_killed_at_random_points_leaves_a_consistent_store(
    ledger_url: str, anyio_backend: str, state_dir: Path
) -> None:
    rng = random.Random(20260520)
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    reported: set[str] = set()
    for _ in range(KILLS):
        async with child("append", ledger_url, "run-1", anyio_backend) as writer:
            with anyio.fail_after(30):
                assert await writer.line() == "ready"
            await anyio.sleep(rng.uniform(0.0, 0.12))
            writer.process.kill()
            with anyio.fail_after(30):
                await writer.process.wait()
                while True:
                    try:
                        line = await writer.line()
                    except (anyio.EndOfStream, anyio.IncompleteRead):
                        break
                    reported.add(line.removeprefix("committed "))
        async with open_ledger(ledger_url) as ledger:
            run = await ledger.get_run("run-1")
            records = await ledger.list_artifacts("run-1")
            steps = [f"step-{v}" for v in range(1, run.version)]
            assert [r.artifact_id for r in records] == ["run-1-request", "run-1", *steps]
            assert reported <= set(steps)
            for record in records:  # every committed body is there and intact
                await ledger.read_artifact("run-1", record.artifact_id)
            sequences: list[int] = []
            page = await ledger.page_trace("run-1", limit=500)
            sequences += [e.sequence for e in page.events]
            while page.has_more:
                page = await ledger.page_trace("run-1", after_sequence=sequences[-1], limit=500)
                sequences += [e.sequence for e in page.events]
            assert sequences == list(range(1, 2 * len(steps) + 2))
            report = await ledger.verify_run("run-1")
            assert report.ok, report
    assert len(reported) >= KILLS // 2, "the writer barely committed anything before the kills"
