"""Stores created before schema 2 kept bodies as files: they stay readable and verifiable.

``schema_1_store`` builds such a store the way that code left it: the schema at version 1 from
the migration history, the rows, and every body as ``blobs/sha256/<2 hex>/<62 hex>``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from ledgerkit import artifact, event, only, start, step

from telic._errors import ContextSecurityError, IntegrityError
from telic.ledger import open_ledger
from telic.ledger._engine import LedgerEngine
from telic.ledger._memory import MemoryBackend, _State
from telic.ledger._migrations import load_migrations, split_sqlite_script
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
    ledger = LedgerEngine(backend)
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


@only("sqlite")
async def test_a_schema_1_store_opens_and_its_file_bodies_read_and_verify(
    ledger_url: str, state_dir: Path
) -> None:
    schema_1_store(state_dir, await _records())
    async with open_ledger(ledger_url) as ledger:
        assert (
            schema_version(state_dir) == 5
        )  # bodies in the database; rows sealed; topology; lineage
        stored = await ledger.read_artifact("run-1", "a-2")
        assert stored.body["id"] == "a-2"
        changes = await ledger.read_changes("run-1")
        assert [a.record.artifact_id for a in changes.artifacts] == [
            "run-1-request",
            "run-1",
            "a-1",
            "a-2",
            "ev-1",
        ]
        assert (await ledger.verify_run("run-1")).ok

        # New bodies go to the database only; old and new read and verify side by side.
        new = artifact("a-3", body={"schemaVersion": "1.0", "id": "a-3", "fresh": True})
        commit = await step(ledger, "run-1", 2, [new], [event()])
        assert not blob_path(state_dir, commit.artifacts[0].sha256).exists()
        assert (await ledger.read_artifact("run-1", "a-3")).body["fresh"] is True
        assert (await ledger.read_artifact("run-1", "a-1")).body["id"] == "a-1"
        report = await ledger.verify_run("run-1")
        assert report.ok
        assert report.records_checked == 11


@only("sqlite")
async def test_a_flipped_byte_in_an_old_body_file_fails_the_read_and_is_named_by_verify(
    ledger_url: str, state_dir: Path
) -> None:
    schema_1_store(state_dir, await _records())
    async with open_ledger(ledger_url) as ledger:
        digest = (await ledger.read_artifact("run-1", "a-2")).record.sha256
        blob = blob_path(state_dir, digest)
        data = bytearray(blob.read_bytes())
        data[5] ^= 1
        blob.write_bytes(bytes(data))
        with pytest.raises(IntegrityError, match="Artifact integrity check failed"):
            await ledger.read_artifact("run-1", "a-2")
        with pytest.raises(IntegrityError, match="Artifact integrity check failed"):
            await ledger.read_changes("run-1")
        await ledger.read_artifact("run-1", "a-1")
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "a-2")
        assert "digest" in report.first_broken.reason


@only("sqlite")
async def test_an_old_body_file_that_is_gone_is_named_by_verify(
    ledger_url: str, state_dir: Path
) -> None:
    schema_1_store(state_dir, await _records())
    async with open_ledger(ledger_url) as ledger:
        digest = (await ledger.read_artifact("run-1", "a-1")).record.sha256
        blob_path(state_dir, digest).unlink()
        with pytest.raises(IntegrityError, match="the blob is missing"):
            await ledger.read_artifact("run-1", "a-1")
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.id, report.first_broken.reason) == (
            "a-1",
            "the blob is missing",
        )


@only("sqlite")
async def test_a_symlinked_old_body_file_or_folder_is_refused(
    ledger_url: str, state_dir: Path, tmp_path: Path
) -> None:
    schema_1_store(state_dir, await _records())
    async with open_ledger(ledger_url) as ledger:
        digest = (await ledger.read_artifact("run-1", "a-1")).record.sha256
        blob = blob_path(state_dir, digest)
        outside = tmp_path / "outside"
        outside.write_bytes(blob.read_bytes())
        blob.unlink()
        blob.symlink_to(outside)
        with pytest.raises(ContextSecurityError, match="symlink"):
            await ledger.read_artifact("run-1", "a-1")

        digest = (await ledger.read_artifact("run-1", "a-2")).record.sha256
        folder = blob_path(state_dir, digest).parent
        moved = tmp_path / "moved-prefix"
        folder.rename(moved)
        folder.symlink_to(moved, target_is_directory=True)
        with pytest.raises(ContextSecurityError, match="symlink"):
            await ledger.read_artifact("run-1", "a-2")


@only("sqlite")
async def test_a_symlinked_blobs_folder_is_refused_when_the_store_opens(
    ledger_url: str, state_dir: Path, tmp_path: Path
) -> None:
    schema_1_store(state_dir, await _records())
    (state_dir / "blobs").rename(tmp_path / "blobs-elsewhere")
    os.symlink(tmp_path / "blobs-elsewhere", state_dir / "blobs")
    with pytest.raises(ContextSecurityError, match="'blobs'"):
        async with open_ledger(ledger_url):
            pass


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
