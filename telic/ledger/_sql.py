"""The ledger's SQL, shared by SQLite and PostgreSQL: the ``Reader`` calls, and the statements
that answer a ``Probe`` and store a ``Plan``.

A backend supplies a ``Dialect`` with the few fragments that differ. Every ``Reader`` call hands
its ``Session`` all of its queries at once, and a mutation's probe and writes are plain lists of
statements, so a backend that pays per round trip (SQLite's worker thread) can run each of them
in one. Bodies are read in the same queries, from the ``blobs`` table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from ._base import Plan, Probe, Probed, RunRows, Selection, StoredRun
from ._records import FIXED_RUN_FIELDS, ArtifactRecord, RunRecord, TraceRecord
from ._rows import (
    ARTIFACT_COLUMNS,
    EVENT_COLUMNS,
    RUN_COLUMNS,
    Row,
    artifact_from_row,
    artifact_params,
    event_from_row,
    event_params,
    run_from_row,
    run_params,
)

Query: TypeAlias = tuple[str, tuple[Any, ...]]
"""A statement with its parameters, placeholders already in the backend's dialect."""

Write: TypeAlias = tuple[str, tuple[Any, ...], str | None]
"""A statement, its parameters, and the ``LedgerConflict`` message it raises unless it changes
exactly one row (``None``: any row count is fine)."""

_IN_LIMIT = 500
"""Values per ``IN (...)`` list: SQLite before 3.32 allows 999 parameters per statement."""


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _chunks(values: Sequence[str]) -> list[list[str]]:
    return [list(values[start : start + _IN_LIMIT]) for start in range(0, len(values), _IN_LIMIT)]


_BODY = "(SELECT data FROM blobs WHERE blobs.sha256 = artifacts.sha256)"
"""The body of an artifact row, selected after ``ARTIFACT_COLUMNS`` (``NULL`` if not stored)."""
_SHA256 = ARTIFACT_COLUMNS.split(", ").index("sha256")
_BODY_COLUMN = len(ARTIFACT_COLUMNS.split(", "))
_RUN = f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?"
_INSERT_ARTIFACT = f"INSERT INTO artifacts ({ARTIFACT_COLUMNS}) VALUES ({_marks(_BODY_COLUMN)})"
_INSERT_EVENT = (
    f"INSERT INTO trace_events ({EVENT_COLUMNS}) VALUES ({_marks(len(EVENT_COLUMNS.split(', ')))})"
)
_RUN_COLUMN_NAMES = RUN_COLUMNS.split(", ")
_UPDATED = [i for i, column in enumerate(_RUN_COLUMN_NAMES) if column not in FIXED_RUN_FIELDS]
"""The positions of the run columns that an update writes."""
_UPDATE_RUN = (
    f"UPDATE runs SET {', '.join(f'{_RUN_COLUMN_NAMES[i]} = ?' for i in _UPDATED)} "
    "WHERE run_id = ? AND version = ?"
)
_TIP = "chain_index = (SELECT chain_length FROM runs WHERE run_id = ?)"
_TIP_ARTIFACT = f"SELECT {ARTIFACT_COLUMNS} FROM artifacts WHERE run_id = ? AND {_TIP}"
_TIP_EVENT = f"SELECT {EVENT_COLUMNS} FROM trace_events WHERE run_id = ? AND {_TIP}"
_QUOTA_KEY_TAKEN = "SELECT 1 FROM artifacts WHERE run_id = ? AND type = ? AND quota_key = ?"
_EVIDENCE_SINCE_PLAN = (
    "SELECT count(*) FROM artifacts WHERE run_id = ? AND type = ? AND position > "
    "(SELECT coalesce(max(position), 0) FROM artifacts WHERE run_id = ? AND type = ?)"
)


FollowUps: TypeAlias = Callable[[list[Row]], Sequence[Query]]
"""The queries to run after a first one, decided from its rows."""


class Session(Protocol):
    """Queries on the connection that holds the current snapshot."""

    async def fetch(self, first: Query, then: FollowUps | None = None) -> list[list[Row]]:
        """Run ``first``, then the queries ``then`` derives from its rows, all in one snapshot;
        return the rows of each, in order (``then`` may be called from a worker thread)."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """The fragments in which the SQL dialects differ."""

    placeholders: Callable[[str], str]
    lock_run: str
    """Appended to the run lookup of ``probe`` (``FOR UPDATE`` or nothing)."""
    recency_order: str
    no_limit: int | None
    """The LIMIT value that means "all rows"."""
    store_blob: str
    """Insert ``(sha256, data)`` into ``blobs``, keeping (or repairing) an existing row."""


class SqlReader:
    """``Reader`` over a SQL session: each call hands the session all of its queries at once."""

    def __init__(self, session: Session, dialect: Dialect) -> None:
        self._session = session
        self._d = dialect

    async def _fetch(self, sql: str, *params: Any) -> list[Row]:
        return (await self._session.fetch((self._d.placeholders(sql), params)))[0]

    def _bodies(self, rows: Sequence[Row]) -> dict[str, bytes]:
        """Digest → bytes of artifact rows selected with ``_BODY`` (a body not stored is absent)."""
        return {
            row[_SHA256]: bytes(row[_BODY_COLUMN]) for row in rows if row[_BODY_COLUMN] is not None
        }

    # ------------------------------------------------------------------ Reader

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        rows = await self._fetch(
            f"SELECT {EVENT_COLUMNS} FROM trace_events WHERE run_id = ? AND event_id = ?",
            run_id,
            event_id,
        )
        return event_from_row(rows[0]) if rows else None

    async def read_artifact(
        self, run_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        rows = await self._fetch(
            f"SELECT {ARTIFACT_COLUMNS}, {_BODY} FROM artifacts "
            "WHERE run_id = ? AND artifact_id = ?",
            run_id,
            artifact_id,
        )
        if not rows:
            return None
        record = artifact_from_row(rows[0])
        return record, self._bodies(rows).get(record.sha256)

    async def read_bodies(self, digests: Sequence[str]) -> dict[str, bytes]:
        if not digests:
            return {}
        unique = list(dict.fromkeys(digests))
        bodies: dict[str, bytes] = {}
        for chunk in _chunks(unique):
            sql = f"SELECT sha256, data FROM blobs WHERE sha256 IN ({_marks(len(chunk))})"
            bodies.update((row[0], bytes(row[1])) for row in await self._fetch(sql, *chunk))
        return bodies

    async def read_run(self, run_id: str, selection: Selection) -> RunRows | None:
        # The run row, then its records past the selection's points: only those its counters
        # count, if the selection trusts them (then a read that finds nothing new is one query).
        stored: StoredRun | None = None

        def wanted(after: int | None, count: int) -> bool:
            return after is not None and (not selection.trust_counters or count > after)

        def then(rows: list[Row]) -> list[Query]:
            nonlocal stored
            if not rows:
                return []
            stored = run_from_row(rows[0])
            queries: list[Query] = []
            if wanted(after := selection.artifacts_after, stored.artifact_count):
                columns = f"{ARTIFACT_COLUMNS}, {_BODY}" if selection.bodies else ARTIFACT_COLUMNS
                sql = f"SELECT {columns} FROM artifacts WHERE run_id = ? AND position > ? "
                queries.append((f"{sql}ORDER BY position", (run_id, after)))
            if wanted(after := selection.events_after, stored.event_count):
                limit = (
                    self._d.no_limit if selection.events_limit is None else selection.events_limit
                )
                sql = (
                    f"SELECT {EVENT_COLUMNS} FROM trace_events WHERE run_id = ? AND sequence > ? "
                    "ORDER BY sequence LIMIT ?"
                )
                queries.append((sql, (run_id, after, limit)))
            return [(self._d.placeholders(sql), params) for sql, params in queries]

        results = await self._session.fetch((self._d.placeholders(_RUN), (run_id,)), then)
        if stored is None:
            return None
        rest = iter(results[1:])
        rows = next(rest) if wanted(selection.artifacts_after, stored.artifact_count) else []
        events = next(rest) if wanted(selection.events_after, stored.event_count) else []
        return RunRows(
            run=stored,
            artifacts=[artifact_from_row(row) for row in rows],
            bodies=self._bodies(rows) if selection.bodies else {},
            events=[event_from_row(row) for row in events],
        )

    async def runs(self, limit: int) -> list[RunRecord]:
        rows = await self._fetch(
            f"SELECT {RUN_COLUMNS} FROM runs ORDER BY {self._d.recency_order} LIMIT ?", limit
        )
        return [run_from_row(row).record for row in rows]


def probe_queries(dialect: Dialect, run_id: str, probe: Probe) -> list[Query]:
    """The queries that answer ``probe``, the run lookup first (it takes the run's lock)."""
    queries: list[tuple[str, tuple[Any, ...]]] = [(f"{_RUN}{dialect.lock_run}", (run_id,))]
    for ids in _chunks(probe.artifact_ids):
        queries.append(
            (
                f"SELECT {ARTIFACT_COLUMNS} FROM artifacts "
                f"WHERE run_id = ? AND artifact_id IN ({_marks(len(ids))})",
                (run_id, *ids),
            )
        )
    for ids in _chunks(probe.event_ids):
        queries.append(
            (
                "SELECT event_id FROM trace_events "
                f"WHERE run_id = ? AND event_id IN ({_marks(len(ids))})",
                (run_id, *ids),
            )
        )
    queries.extend((_QUOTA_KEY_TAKEN, (run_id, type_, key)) for type_, key in probe.quota_keys)
    if probe.evidence is not None:
        evidence_type, plan_type = probe.evidence
        queries.append((_EVIDENCE_SINCE_PLAN, (run_id, evidence_type, run_id, plan_type)))
    queries.append((_TIP_ARTIFACT, (run_id, run_id)))
    queries.append((_TIP_EVENT, (run_id, run_id)))
    return [(dialect.placeholders(sql), params) for sql, params in queries]


def probed_from(probe: Probe, results: Sequence[Sequence[Row]]) -> Probed:
    """Read the answer to ``probe`` from the rows of ``probe_queries``, in the same order."""
    rows = iter(results)
    runs = next(rows)
    found = [artifact_from_row(row) for _ in _chunks(probe.artifact_ids) for row in next(rows)]
    events = frozenset(row[0] for _ in _chunks(probe.event_ids) for row in next(rows))
    taken = frozenset(key for key in probe.quota_keys if next(rows))
    evidence = int(next(rows)[0][0]) if probe.evidence is not None else 0
    tips: list[ArtifactRecord | TraceRecord] = [artifact_from_row(row) for row in next(rows)]
    tips += [event_from_row(row) for row in next(rows)]
    return Probed(
        run=run_from_row(runs[0]) if runs else None,
        artifacts={record.artifact_id: record for record in found},
        event_ids=events,
        quota_keys=taken,
        evidence_since_plan=evidence,
        tip=tips[0] if len(tips) == 1 else None,
    )


def plan_writes(dialect: Dialect, plan: Plan) -> list[Write]:
    """The statements that store ``plan``, in order; the fenced update carries its conflict."""
    if plan.run is None:
        return []
    p = run_params(plan.run)
    writes: list[Write] = []
    if plan.expected_version is None:
        writes.append((f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({_marks(len(p))})", p, None))
    else:
        updated = (*(p[i] for i in _UPDATED), p[0], plan.expected_version)
        writes.append((_UPDATE_RUN, updated, plan.conflict))
    for record, canonical in plan.artifacts:
        writes.append((dialect.store_blob, (record.sha256, canonical), None))
        writes.append((_INSERT_ARTIFACT, artifact_params(record), None))
    writes.extend((_INSERT_EVENT, event_params(event), None) for event in plan.events)
    return [(dialect.placeholders(sql), params, conflict) for sql, params, conflict in writes]
