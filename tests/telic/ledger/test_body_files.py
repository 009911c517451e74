"""A state directory holding body files (``blobs/sha256/…``) is refused, and nothing changes.

Telic 1.0 kept bodies as files, and so did this ledger before schema 2 (never released); this
one keeps every body in the database and never reads such files, so it refuses the directory
instead of opening a store whose bodies it would report missing. ``schema_1_store`` builds such
a store: the schema at version 1 from the migration history, the rows, and every body as a file.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from ledgerkit import artifact, event, only, start, step

from telic._errors import LedgerError
from telic.ledger import ledger_file_problem, open_ledger
from telic.ledger._memory import MemoryBackend, _State
from telic.ledger._migrations import load_migrations, split_sqlite_script
from telic.ledger._plans import Ledger
from telic.ledger._rows import (
    ARTIFACT_COLUMNS,
    EVENT_COLUMNS,
    RUN_COLUMNS,
    artifact_params,
    event_params,
    run_params,
)

pytestmark = pytest.mark.anyio


async def _records() -> _State:
    """One run with a few steps, its records hash-chained by the engine."""
    backend = MemoryBackend()
    ledger = Ledger(backend)
    await start(ledger)
    await step(ledger, "run-1", 1, [artifact("a-1"), artifact("a-2")], [event(), event()])
    await ledger.store_supporting("run-1", artifact("ev-1"), [event("evidence_captured")])
    held: list[_State] = []
    backend.tamper(held.append)
    return held[0]


def blob_path(state_dir: Path, digest: str) -> Path:
    hex_digest = digest.removeprefix("sha256:")
    return state_dir / "blobs" / "sha256" / hex_digest[:2] / hex_digest[2:]


def schema_1_store(state_dir: Path, state: _State) -> None:
    state_dir.mkdir(mode=0o700)
    connection = sqlite3.connect(state_dir / "ledger.sqlite3", isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
        )
        first = load_migrations("sqlite")[0]
        for statement in split_sqlite_script(first.sql):
            connection.execute(statement)
        connection.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?)",
            (first.version, first.name, "2026-05-20T10:00:00.000Z"),
        )
        schema_1_columns = RUN_COLUMNS.split(", run_hash")[0]  # schema 3 added it and more
        for stored in state.runs.values():
            connection.execute(
                f"INSERT INTO runs ({schema_1_columns}) VALUES ({'?, ' * 17}?)",
                run_params(stored)[:18],
            )
        for records in state.artifacts.values():
            for record in records.values():
                connection.execute(
                    f"INSERT INTO artifacts ({ARTIFACT_COLUMNS}) VALUES ({'?, ' * 14}?)",
                    artifact_params(record),
                )
        for events in state.events.values():
            for trace in events.values():
                connection.execute(
                    f"INSERT INTO trace_events ({EVENT_COLUMNS}) VALUES ({'?, ' * 14}?)",
                    event_params(trace),
                )
    finally:
        connection.close()
    for digest, data in state.blobs.items():
        path = blob_path(state_dir, digest)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o600)


def schema_version(state_dir: Path) -> int:
    connection = sqlite3.connect(state_dir / "ledger.sqlite3")
    try:
        return int(connection.execute("SELECT max(version) FROM schema_migrations").fetchone()[0])
    finally:
        connection.close()


def _snapshot(state_dir: Path) -> dict[str, bytes]:
    """Every file under the state directory (symlinks by their target), by relative path."""
    return {
        str(path.relative_to(state_dir)): (
            str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()
        )
        for path in sorted(state_dir.rglob("*"))
        if path.is_symlink() or path.is_file()
    }


@only("sqlite")
async def test_a_store_holding_body_files_is_refused_naming_them_and_left_unchanged(
    ledger_url: str, state_dir: Path
) -> None:
    schema_1_store(state_dir, await _records())
    before = _snapshot(state_dir)
    with pytest.raises(LedgerError, match=r"holds body files in 'blobs'.*empty state directory"):
        async with open_ledger(ledger_url):
            pass
    assert _snapshot(state_dir) == before
    assert schema_version(state_dir) == 1  # not migrated
    assert "blobs" in (ledger_file_problem(state_dir, state_dir / "ledger.sqlite3") or "")


@only("sqlite")
async def test_a_symlinked_blobs_folder_is_refused_too(
    ledger_url: str, state_dir: Path, tmp_path: Path
) -> None:
    schema_1_store(state_dir, await _records())
    (state_dir / "blobs").rename(tmp_path / "blobs-elsewhere")
    os.symlink(tmp_path / "blobs-elsewhere", state_dir / "blobs")
    before = _snapshot(state_dir)
    with pytest.raises(LedgerError, match="'blobs'"):
        async with open_ledger(ledger_url):
            pass
    assert _snapshot(state_dir) == before


@only("sqlite")
async def test_a_new_store_keeps_every_body_in_the_database(
    ledger_url: str, state_dir: Path
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1")], [event()])
        assert (await ledger.read_artifact("run-1", "a-1")).body["id"] == "a-1"
    assert not (state_dir / "blobs").exists()
    assert schema_version(state_dir) == 5
    assert ledger_file_problem(state_dir, state_dir / "ledger.sqlite3") is None
