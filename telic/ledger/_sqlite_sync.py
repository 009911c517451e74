"""The SQLite backend's synchronous half: connect, read a snapshot, run one mutation.

These functions run in the backend's worker thread (``_sqlite.py`` drives them from the event
loop), and in the ``telic hook`` command, which appends its traced decision from a fresh
process with no event loop at all: one transaction for both. They import nothing but the
standard library and the ledger's own pure SQL and plans, so that command stays fast.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final

from telic._errors import LedgerConflict

from ._base import Plan, Probe, Probed
from ._rows import Row
from ._sql import Dialect, FollowUps, Query, plan_writes, probe_queries, probed_from

BUSY_TIMEOUT_MS: Final = 5000
DIALECT: Final = Dialect(
    placeholders=lambda sql: sql,
    lock_run="",  # BEGIN IMMEDIATE already holds the database's write lock
    recency_order="updated_at DESC, run_id ASC",
    no_limit=-1,
    # A row whose bytes no longer match its digest is repaired by storing the same content again,
    # as a rewritten blob file was before schema 2; bytes that match are left alone.
    store_blob="INSERT INTO blobs (sha256, data) VALUES (?, ?) ON CONFLICT (sha256) "
    "DO UPDATE SET data = excluded.data WHERE blobs.data IS NOT excluded.data",
)
PRAGMAS: Final = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
)


def connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: the backend issues BEGIN/COMMIT itself.
    connection = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        for pragma in PRAGMAS:
            connection.execute(pragma).fetchall()
    except BaseException:
        connection.close()
        raise
    return connection


def rollback(connection: sqlite3.Connection) -> None:
    if connection.in_transaction:
        # OperationalError: SQLite has already rolled the transaction back by itself.
        with contextlib.suppress(sqlite3.OperationalError):
            connection.execute("ROLLBACK")


def snapshot(
    connection: sqlite3.Connection, first: Query, then: FollowUps | None
) -> list[list[Row]]:
    if then is None:  # one query is its own snapshot
        return [connection.execute(*first).fetchall()]
    connection.execute("BEGIN")
    try:
        results = [connection.execute(*first).fetchall()]
        results.extend(connection.execute(*query).fetchall() for query in then(results[0]))
        return results
    finally:
        rollback(connection)


def transaction(
    connection: sqlite3.Connection, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]
) -> Plan:
    """One mutation from start to end: probe, plan, write, commit (or roll back)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        results = [
            connection.execute(sql, params).fetchall()
            for sql, params in probe_queries(DIALECT, run_id, probe)
        ]
        decided = plan(probed_from(probe, results))
        for sql, params, conflict in plan_writes(DIALECT, decided):
            changed = connection.execute(sql, params).rowcount
            if conflict is not None and changed != 1:
                raise LedgerConflict(conflict)
        connection.execute("COMMIT")
    except BaseException:
        rollback(connection)
        raise
    return decided
