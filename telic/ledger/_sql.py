"""``SqlTxn``: the ``Txn``/``Reader`` operations in SQL, shared by SQLite and PostgreSQL.

A backend supplies a ``Session`` (run a statement on the connection that holds the open
transaction), a ``Blobs`` store and a ``Dialect`` with the few fragments that differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ._base import StoredRun
from ._records import ArtifactRecord, RunSummary, TraceRecord
from ._rows import (
    ARTIFACT_COLUMNS,
    EVENT_COLUMNS,
    RUN_COLUMNS,
    SUMMARY_COLUMNS,
    Row,
    artifact_from_row,
    artifact_params,
    event_from_row,
    event_params,
    run_from_row,
    run_params,
    summary_from_row,
)

__all__ = ["Blobs", "Dialect", "Session", "SqlTxn"]


class Session(Protocol):
    """Statements on the connection that holds the current transaction."""

    async def fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        """Run a query and return all rows."""
        ...

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """Run a statement and return how many rows it changed."""
        ...


class Blobs(Protocol):
    """Content-addressed body storage."""

    async def get(self, sha256: str) -> bytes | None:
        """Return the stored bytes for a digest, or ``None``."""
        ...

    async def put(self, sha256: str, data: bytes) -> None:
        """Store bytes durably under their digest before the transaction commits."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """The fragments in which the SQL dialects differ."""

    placeholders: Callable[[str], str]
    lock_run: str
    """Appended to the run lookup inside a write transaction (``FOR UPDATE`` or nothing)."""
    recency_order: str
    no_limit: int | None
    """The LIMIT value that means "all rows"."""


class SqlTxn:
    """``Txn`` (and so ``Reader``) over a SQL session."""

    def __init__(self, session: Session, blobs: Blobs, dialect: Dialect, *, writing: bool) -> None:
        self._session = session
        self._blobs = blobs
        self._d = dialect
        self._lock = dialect.lock_run if writing else ""

    async def _fetch(self, sql: str, *params: Any) -> list[Row]:
        return await self._session.fetch(self._d.placeholders(sql), params)

    async def _execute(self, sql: str, *params: Any) -> int:
        return await self._session.execute(self._d.placeholders(sql), params)

    async def load_run(self, run_id: str) -> StoredRun | None:
        rows = await self._fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?{self._lock}", run_id
        )
        return run_from_row(rows[0]) if rows else None

    async def find_artifact(self, run_id: str, artifact_id: str) -> ArtifactRecord | None:
        rows = await self._fetch(
            f"SELECT {ARTIFACT_COLUMNS} FROM artifacts WHERE run_id = ? AND artifact_id = ?",
            run_id,
            artifact_id,
        )
        return artifact_from_row(rows[0]) if rows else None

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        rows = await self._fetch(
            f"SELECT {EVENT_COLUMNS} FROM trace_events WHERE run_id = ? AND event_id = ?",
            run_id,
            event_id,
        )
        return event_from_row(rows[0]) if rows else None

    async def read_blob(self, sha256: str) -> bytes | None:
        return await self._blobs.get(sha256)

    async def artifacts(self, run_id: str, after: int = 0) -> list[ArtifactRecord]:
        rows = await self._fetch(
            f"SELECT {ARTIFACT_COLUMNS} FROM artifacts WHERE run_id = ? AND position > ? "
            "ORDER BY position",
            run_id,
            after,
        )
        return [artifact_from_row(row) for row in rows]

    async def events(self, run_id: str, after: int, limit: int | None) -> list[TraceRecord]:
        rows = await self._fetch(
            f"SELECT {EVENT_COLUMNS} FROM trace_events WHERE run_id = ? AND sequence > ? "
            "ORDER BY sequence LIMIT ?",
            run_id,
            after,
            self._d.no_limit if limit is None else limit,
        )
        return [event_from_row(row) for row in rows]

    async def runs(self, limit: int) -> list[RunSummary]:
        rows = await self._fetch(
            f"SELECT {SUMMARY_COLUMNS} FROM runs ORDER BY {self._d.recency_order} LIMIT ?", limit
        )
        return [summary_from_row(row) for row in rows]

    async def evidence_since_plan(self, run_id: str, evidence_type: str, plan_type: str) -> int:
        rows = await self._fetch(
            "SELECT count(*) FROM artifacts WHERE run_id = ? AND type = ? AND position > "
            "(SELECT coalesce(max(position), 0) FROM artifacts WHERE run_id = ? AND type = ?)",
            run_id,
            evidence_type,
            run_id,
            plan_type,
        )
        return int(rows[0][0])

    async def quota_key_taken(self, run_id: str, type_: str, key: str) -> bool:
        rows = await self._fetch(
            "SELECT 1 FROM artifacts WHERE run_id = ? AND type = ? AND quota_key = ?",
            run_id,
            type_,
            key,
        )
        return bool(rows)

    async def insert_run(self, run: StoredRun) -> None:
        params = run_params(run)
        marks = ", ".join("?" * len(params))
        await self._execute(f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({marks})", *params)

    async def update_run(self, run: StoredRun, expected_version: int) -> bool:
        # run_id, schema_version, repository_root, requested_mode and created_at never change.
        p = run_params(run)
        changed = await self._execute(
            "UPDATE runs SET status = ?, phase = ?, resume_phase = ?, version = ?, "
            "prompt_revisions_remaining = ?, remediations_remaining = ?, outcome_hint = ?, "
            "updated_at = ?, controller_state_json = ?, artifact_count = ?, event_count = ?, "
            "chain_length = ?, chain_head = ? WHERE run_id = ? AND version = ?",
            *p[4:11],
            *p[12:18],
            p[0],
            expected_version,
        )
        return changed == 1

    async def insert_artifact(self, record: ArtifactRecord, canonical: bytes) -> None:
        await self._blobs.put(record.sha256, canonical)
        params = artifact_params(record)
        marks = ", ".join("?" * len(params))
        await self._execute(f"INSERT INTO artifacts ({ARTIFACT_COLUMNS}) VALUES ({marks})", *params)

    async def insert_event(self, record: TraceRecord) -> None:
        params = event_params(record)
        marks = ", ".join("?" * len(params))
        await self._execute(f"INSERT INTO trace_events ({EVENT_COLUMNS}) VALUES ({marks})", *params)
