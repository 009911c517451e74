"""The embedded SQLite backend: one database file holding the rows and the bodies.

One ``sqlite3`` connection, driven from one worker thread one call at a time: aiosqlite's own
thread on asyncio, ``anyio.to_thread`` with a single-slot limiter on trio (where aiosqlite cannot
run). Each call into that thread is a *hop*, and hops are most of what an operation costs beyond
SQLite itself, so each ``Reader`` call (``_sqlite_sync.snapshot``) and each mutation
(``_sqlite_sync.transaction``) is one.

Every mutation is a ``BEGIN IMMEDIATE`` transaction, so writers in other processes are
serialised by SQLite's own lock. Within this process the single-slot limiter is the lock: no
transaction or snapshot spans two hops, so tasks cannot interleave inside one.

Bodies live in the ``blobs`` table (schema 2), written in the transaction that refers to them,
so a step is one durable commit: with ``synchronous=FULL`` in WAL mode, one fsync of the WAL.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar, cast

import aiosqlite
import anyio
import anyio.to_thread
import sniffio

from telic._errors import ContextSecurityError, LedgerConflict, LedgerError

from ._base import Plan, Probe, Probed, Reader
from ._clock import utc_now
from ._migrations import APPLIED, CURRENT, pending, split_sqlite_script
from ._paths import FILE_MODE, ledger_file_problem, refuse_symlink
from ._retry import TransientError
from ._rows import SEAL_RUN, SEALING_MIGRATION, UNSEALED_RUNS, Row, seal_params
from ._sql import FollowUps, Query, SqlReader
from ._sqlite_sync import (
    DIALECT as _DIALECT,
    connect as _connect,
    rollback as _rollback,
    snapshot as _snapshot,
    transaction as _transaction,
)

T = TypeVar("T")


def _migrate(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
        )
        current = int(connection.execute(CURRENT).fetchone()[0])
        for migration in pending("sqlite", current):
            for statement in split_sqlite_script(migration.sql):
                connection.execute(statement)
            if migration.name == SEALING_MIGRATION:
                unsealed = connection.execute(UNSEALED_RUNS).fetchall()
                connection.executemany(SEAL_RUN, [seal_params(row) for row in unsealed])
            connection.execute(APPLIED, (migration.version, migration.name, utc_now()))
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise


# ---------------------------------------------------------------------- on the event loop


class _AioConnection:
    """On asyncio: the ``sqlite3`` connection owned by an ``aiosqlite.Connection``.

    aiosqlite runs every call of a connection on that connection's one worker thread, in the
    order they were queued. Its public methods each queue one statement; ``Connection._execute``
    is how they queue work, and the only way to run a whole transaction in one hop. It is not
    documented, so ``tests/telic/ledger/test_sqlite.py`` pins what is relied on: a function
    queued with it runs on the connection's thread, gets our arguments and returns its result.
    """

    def __init__(self, aio: aiosqlite.Connection, connection: sqlite3.Connection) -> None:
        self._aio = aio
        self._connection = connection

    @classmethod
    async def open(cls, path: Path) -> _AioConnection:
        # Connect (and run the pragmas) in a worker thread first: when aiosqlite's own connector
        # fails, it leaves its thread to answer a future on a loop that may have closed by then
        # (an "Event loop is closed" traceback after the real error). Handed over ready, its
        # connector cannot fail.
        connection = await anyio.to_thread.run_sync(_connect, path)
        aio = await aiosqlite.Connection(lambda: connection, iter_chunk_size=64)
        return cls(aio, connection)

    async def run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """Call ``function`` with the connection in aiosqlite's thread: one hop.

        The call is never abandoned: a cancelled caller still waits for it to finish, so the
        connection's state is always known to the next caller.
        """
        queue = cast("Callable[..., Awaitable[T]]", self._aio._execute)
        with anyio.CancelScope(shield=True):
            result = await queue(function, self._connection)
        return result  # noqa: RET504 -- mypy cannot see that the shielded scope always re-raises

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._aio.close()


class _ThreadConnection:
    """On trio: the ``sqlite3`` connection, used from one worker thread at a time."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._limiter = anyio.CapacityLimiter(1)

    @classmethod
    async def open(cls, path: Path) -> _ThreadConnection:
        return cls(await anyio.to_thread.run_sync(_connect, path))

    async def run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """Call ``function`` with the connection in the worker thread: one hop, never abandoned
        (as ``_AioConnection.run``)."""
        return await anyio.to_thread.run_sync(function, self._connection, limiter=self._limiter)

    async def close(self) -> None:
        await anyio.to_thread.run_sync(self._connection.close, limiter=self._limiter)


_Connection = _AioConnection | _ThreadConnection


class _Snapshots:
    """The ``Session`` of a reader: each ``fetch`` is one snapshot in one hop."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    async def fetch(self, first: Query, then: FollowUps | None = None) -> list[list[Row]]:
        try:
            return await self._connection.run(lambda connection: _snapshot(connection, first, then))
        except sqlite3.Error as exc:
            raise LedgerError(f"SQLite error: {exc}") from exc


def _create_private_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        pass
    else:
        os.close(fd)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise ContextSecurityError("the Telic ledger database is not a regular file")
    if stat.S_IMODE(info.st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)


def _translate(exc: sqlite3.Error) -> Exception:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return TransientError("SQLite database is busy")
    if isinstance(exc, sqlite3.IntegrityError):
        return LedgerConflict("a concurrent writer stored a conflicting record")
    return LedgerError(f"SQLite error: {exc}")


class SqliteBackend:
    """The SQLite ``Backend``."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    @classmethod
    async def open(cls, state_dir: Path, db_path: Path) -> SqliteBackend:
        """Open (creating and migrating if needed) the store in an already checked state dir.

        No ``blobs`` directory is created: bodies are kept in the database.

        Raises:
            LedgerError: ``ledger_file_problem`` names a problem (one is a state directory that
                holds body files, ``blobs``, which this store never reads); nothing is changed.
        """
        problem = ledger_file_problem(state_dir, db_path)
        if problem is not None:
            raise LedgerError(problem)
        try:
            _create_private_file(db_path)
        except PermissionError as exc:
            message = f"the ledger file {db_path} cannot be created: {exc.strerror}"
            raise LedgerError(message) from None
        for suffix in ("-wal", "-shm"):
            refuse_symlink(db_path.with_name(db_path.name + suffix))
        connection: _Connection
        try:
            if sniffio.current_async_library() == "asyncio":
                connection = await _AioConnection.open(db_path)
            else:
                connection = await _ThreadConnection.open(db_path)
        except sqlite3.Error as exc:
            raise LedgerError(f"the ledger {db_path} cannot be opened: {exc}") from None
        try:
            await connection.run(_migrate)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await connection.close()
            if isinstance(exc, sqlite3.Error):
                raise LedgerError(f"the ledger {db_path} cannot be read: {exc}") from None
            raise
        return cls(connection)

    async def mutate(self, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]) -> Plan:
        try:
            return await self._connection.run(
                lambda connection: _transaction(connection, run_id, probe, plan)
            )
        except sqlite3.Error as exc:
            raise _translate(exc) from exc

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Reader]:
        yield SqlReader(_Snapshots(self._connection), _DIALECT)

    async def aclose(self) -> None:
        await self._connection.close()
