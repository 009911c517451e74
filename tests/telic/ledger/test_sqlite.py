"""The SQLite backend: one durable commit per step, and one thread hop per mutation or read."""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from ledgerkit import artifact, event, only, run_record, start, step

from telic._errors import LedgerConflict, LimitExceeded
from telic.ledger import Commit, _sqlite as sqlite_backend, open_ledger
from telic.ledger._base import Plan, Probe, Probed
from telic.ledger._chain import run_hash
from telic.ledger._paths import prepare_state_dir
from telic.ledger._plans import Ledger

pytestmark = pytest.mark.anyio


def wal_commits(database: Path) -> int:
    """Count the commit records in the database's write-ahead log.

    A WAL frame is a 24-byte header and one page; a frame whose second header word is non-zero
    ends a transaction. Frames left over from before the last WAL reset carry other salts and
    are not counted. With ``synchronous=FULL`` SQLite syncs the WAL once per commit record.
    """
    data = Path(f"{database}-wal").read_bytes()
    _, _, page_size, _, salt_1, salt_2 = struct.unpack(">6I", data[:24])
    commits, offset = 0, 32
    while offset + 24 + page_size <= len(data):
        _, size_after_commit, frame_salt_1, frame_salt_2 = struct.unpack(
            ">4I", data[offset : offset + 16]
        )
        if (frame_salt_1, frame_salt_2) != (salt_1, salt_2):
            break
        commits += size_after_commit != 0
        offset += 24 + page_size
    return commits


@pytest.fixture
def python_syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every ``os.fsync``/``os.fdatasync`` made from Python, recorded and passed through (body
    files, before schema 2, cost two or three per step: the file, its folder, a new prefix's
    parent). SQLite's own sync of the WAL happens in C and is counted by ``wal_commits``."""
    calls: list[int] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def counted(fd: int, real: Callable[[int], None] = real) -> None:
            calls.append(fd)
            real(fd)

        monkeypatch.setattr(os, name, counted)
    return calls


@only("sqlite")
async def test_each_mutation_is_one_durable_commit_and_nothing_else_is_synced(
    ledger_url: str, state_dir: Path, python_syncs: list[int]
) -> None:
    database = state_dir / "ledger.sqlite3"
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        mutations: list[Callable[[], Awaitable[Any]]] = [
            lambda: step(
                ledger, "run-1", 1, [artifact("a-1", body={"text": "x" * 5000})], [event()]
            ),
            lambda: ledger.store_supporting("run-1", artifact("ev-1"), [event("evidence")]),
            lambda: ledger.record_events("run-1", [event("permission_checked")]),
            lambda: start(ledger, "run-2"),
        ]
        for mutate in mutations:
            before = wal_commits(database)
            await mutate()
            assert wal_commits(database) == before + 1
        before = wal_commits(database)
        await ledger.read_changes("run-1")
        await ledger.verify_run("run-1")
        assert wal_commits(database) == before  # reads write nothing
        assert python_syncs == []
        names = sorted(os.listdir(state_dir))
        assert names == ["ledger.sqlite3", "ledger.sqlite3-shm", "ledger.sqlite3-wal"]


@only("sqlite")
async def test_a_stale_step_and_a_quota_refusal_write_nothing(
    ledger_url: str, state_dir: Path
) -> None:
    database = state_dir / "ledger.sqlite3"
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("s-1", "ScenarioSpec", quota_key="frame-1")])
        before = wal_commits(database)
        with pytest.raises(LedgerConflict, match="Stale run version 1"):
            await step(ledger, "run-1", 1, [artifact("a-2")])
        with pytest.raises(LimitExceeded, match="Only one ScenarioSpec"):
            await step(ledger, "run-1", 2, [artifact("s-2", "ScenarioSpec", quota_key="frame-1")])
        assert wal_commits(database) == before
        assert (await ledger.get_run("run-1")).version == 2
        assert [a.artifact_id for a in await ledger.list_artifacts("run-1")][-1] == "s-1"


def test_the_connection_uses_wal_and_full_synchronous_commits(tmp_path: Path) -> None:
    connection = sqlite_backend._connect(tmp_path / "ledger.sqlite3")
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        assert connection.execute("PRAGMA foreign_keys").fetchone() == (1,)
    finally:
        connection.close()


@only("sqlite")
async def test_bodies_are_stored_once_per_digest_across_runs(
    ledger_url: str, state_dir: Path
) -> None:
    body = {"schemaVersion": "1.0", "shared": True}
    async with open_ledger(ledger_url) as ledger:
        for run_id in ("run-1", "run-2"):
            await start(ledger, run_id)
            same = artifact("shared", run_id=run_id, body=body)
            await ledger.commit_step(run_id, 1, run_record(run_id, 2), [same], [])
        assert (await ledger.read_artifact("run-2", "shared")).body == body
    connection = sqlite3.connect(state_dir / "ledger.sqlite3")
    try:
        (count,) = connection.execute("SELECT count(*) FROM blobs").fetchone()
        (artifacts,) = connection.execute("SELECT count(*) FROM artifacts").fetchone()
    finally:
        connection.close()
    assert artifacts == 6
    assert count == 5  # two requests, two envelopes, one shared body


@only("sqlite")
async def test_a_cancelled_caller_waits_for_its_transaction_and_leaves_none_open(
    state_dir: Path,
) -> None:
    folder = prepare_state_dir(state_dir, None)
    backend = await sqlite_backend.SqliteBackend.open(folder, folder / "ledger.sqlite3")
    try:
        ledger = Ledger(backend)
        await start(ledger)
        inside, release = threading.Event(), threading.Event()

        def slow(probed: Probed) -> Plan:
            assert probed.run is not None
            inside.set()
            release.wait(10)
            record = replace(probed.run.record, version=2)
            commit = Commit(run=record, artifacts=(), events=())
            row = replace(probed.run, record=record)
            row = replace(row, run_hash=run_hash(row))  # as every plan seals the row it writes
            return Plan(result=commit, run=row, expected_version=1)

        scope = anyio.CancelScope()

        async def mutate() -> None:
            with scope:
                await backend.mutate("run-1", Probe(), slow)

        async with anyio.create_task_group() as group:
            group.start_soon(mutate)
            await anyio.to_thread.run_sync(inside.wait, 10)
            scope.cancel()  # while the transaction runs in the worker thread
            release.set()
        assert scope.cancel_called
        assert (await ledger.get_run("run-1")).version == 2  # it committed, then was cancelled
        await step(ledger, "run-1", 2, [artifact("a-1")])  # and nothing was left open
        assert (await ledger.verify_run("run-1")).ok
    finally:
        await backend.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_on_asyncio_aiosqlite_runs_each_call_on_its_one_connection_thread(
    tmp_path: Path,
) -> None:
    # _AioConnection relies on aiosqlite's undocumented Connection._execute: pin what it needs.
    database = tmp_path / "pinned.sqlite3"
    connection = await sqlite_backend._AioConnection.open(database)
    try:
        seen: list[tuple[int, sqlite3.Connection]] = []

        def probe(raw: sqlite3.Connection) -> int:
            seen.append((threading.get_ident(), raw))
            return int(raw.execute("SELECT 41 + 1").fetchone()[0])

        assert await connection.run(probe) == 42
        assert await connection.run(probe) == 42
        (first_thread, first_raw), (second_thread, second_raw) = seen
        assert first_thread == second_thread != threading.get_ident()
        assert first_raw is second_raw

        def fail(raw: sqlite3.Connection) -> None:
            raw.execute("SELECT * FROM no_such_table")

        with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
            await connection.run(fail)
    finally:
        await connection.close()
