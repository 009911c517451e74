"""The PostgreSQL backend (asyncpg; asyncio only): for several servers sharing one database.

Blobs live in the database, in the same transaction as the rows that refer to them. A write
transaction locks the run row (``SELECT ... FOR UPDATE``) before it reads anything else of the
run, so writers on any number of machines take turns per run, and the version-checked ``UPDATE``
fences a writer that read a stale version. A duplicate new run, or any other unique-key race,
surfaces as ``LedgerConflict``; a lost connection, as ``_retry`` describes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final, TypeAlias

import anyio
import asyncpg
import asyncpg.exceptions as pg_errors
from asyncpg.pool import PoolConnectionProxy

from telic._errors import LedgerConflict, LedgerError

from ._base import Plan, Probe, Probed, Reader
from ._clock import utc_now
from ._migrations import APPLIED, CURRENT, pending
from ._retry import OutcomeUnknownError, TransientError
from ._rows import (
    SEAL_RUN,
    SEALING_MIGRATION,
    UNSEALED_RUNS,
    Row,
    dollar_placeholders,
    seal_params,
)
from ._sql import (
    Dialect,
    FollowUps,
    Query,
    SqlReader,
    plan_writes,
    probe_queries,
    probed_from,
)

_Connection: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"

_DIALECT: Final = Dialect(
    placeholders=dollar_placeholders,
    lock_run=" FOR UPDATE",
    recency_order='updated_at COLLATE "C" DESC, run_id COLLATE "C" ASC',
    no_limit=None,
    store_blob="INSERT INTO blobs (sha256, data) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
)
_MIGRATION_LOCK: Final = (
    "SELECT pg_advisory_xact_lock(hashtext('telic.ledger:' || current_schema()))"
)
_CONNECTION_LOST: Final = (
    OSError,
    pg_errors.PostgresConnectionError,
    pg_errors.AdminShutdownError,
    pg_errors.CannotConnectNowError,
)


def _one_line(record: logging.LogRecord) -> bool:
    """asyncpg's pool logs each failed attempt to reconnect its floor with a whole traceback
    while PostgreSQL is away; keep the record, as one line naming the reason."""
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        record.msg = f"{record.getMessage()}: {type(error).__name__}: {error}"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
    return True


def _broken(exc: BaseException, connection: _Connection) -> bool:
    """Whether ``exc`` means the connection itself is gone or unusable.

    asyncpg releases a pooled connection as soon as it dies, after which every call on it raises
    ``InterfaceError`` (as misuse of a live one would); a server's FATAL message that arrives
    between two statements can instead leave the protocol in a state it reports with
    ``InternalClientError``.
    """
    if isinstance(exc, pg_errors.InternalClientError):
        return True
    if not isinstance(exc, asyncpg.InterfaceError):
        return False
    try:
        return connection.is_closed()
    except asyncpg.InterfaceError:
        return True


def _abandon(connection: _Connection) -> None:
    with contextlib.suppress(asyncpg.InterfaceError):
        connection.terminate()


class _Session:
    """``Session`` over one asyncpg connection: each query is one round trip, in order."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    async def fetch(self, first: Query, then: FollowUps | None = None) -> list[list[Row]]:
        results = [list(await self._connection.fetch(first[0], *first[1]))]
        for sql, params in () if then is None else then(results[0]):
            results.append(list(await self._connection.fetch(sql, *params)))
        return results


async def _run_plan(
    connection: _Connection, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]
) -> Plan:
    """Probe, plan and write inside the open transaction (the caller commits)."""
    results = [
        list(await connection.fetch(sql, *params))
        for sql, params in probe_queries(_DIALECT, run_id, probe)
    ]
    decided = plan(probed_from(probe, results))
    for sql, params, conflict in plan_writes(_DIALECT, decided):
        status = await connection.execute(sql, *params)
        tail = status.rsplit(" ", 1)[-1]
        if conflict is not None and (int(tail) if tail.isdigit() else 0) != 1:
            raise LedgerConflict(conflict)
    return decided


class PostgresBackend:
    """The PostgreSQL ``Backend``."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str) -> PostgresBackend:
        """Connect a pool of up to 10 connections to ``url`` (query parameters become server
        settings, for example ``?search_path=telic``) and apply pending migrations."""
        try:
            pool_logger = logging.getLogger("asyncpg.pool")
            if _one_line not in pool_logger.filters:
                pool_logger.addFilter(_one_line)
            pool = await asyncpg.create_pool(url, min_size=1, max_size=10)
        except _CONNECTION_LOST as exc:
            raise LedgerError(f"cannot connect to the PostgreSQL ledger: {exc}") from exc
        try:
            async with pool.acquire() as connection:
                await _migrate(connection)
        except BaseException:
            await pool.close()
            raise
        return cls(pool)

    async def mutate(self, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]) -> Plan:
        try:
            async with self._pool.acquire() as connection:
                transaction = connection.transaction()
                await transaction.start()
                try:
                    decided = await _run_plan(connection, run_id, probe, plan)
                except BaseException as exc:
                    if _broken(exc, connection):
                        # Nothing was committed, and closing the connection makes the server
                        # roll back whatever it still holds: the whole step may run again.
                        _abandon(connection)
                        raise TransientError("the connection broke before COMMIT") from exc
                    with (
                        anyio.CancelScope(shield=True),
                        contextlib.suppress(*_CONNECTION_LOST, asyncpg.InterfaceError),
                    ):
                        await transaction.rollback()
                    raise
                try:
                    await transaction.commit()
                except (*_CONNECTION_LOST, asyncpg.InterfaceError) as exc:
                    if isinstance(exc, asyncpg.InterfaceError) and not _broken(exc, connection):
                        raise
                    _abandon(connection)
                    raise OutcomeUnknownError("the connection failed during COMMIT") from exc
                return decided
        except pg_errors.TransactionRollbackError as exc:
            raise TransientError("PostgreSQL aborted the transaction; retrying") from exc
        except pg_errors.UniqueViolationError as exc:
            raise LedgerConflict("a concurrent writer stored a conflicting record") from exc
        except _CONNECTION_LOST as exc:
            raise TransientError("the connection failed before COMMIT; retrying") from exc

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Reader]:
        opened = False
        try:
            async with self._pool.acquire() as connection:
                try:
                    async with connection.transaction(isolation="repeatable_read", readonly=True):
                        opened = True
                        yield SqlReader(_Session(connection), _DIALECT)
                except asyncpg.InterfaceError as exc:
                    if not _broken(exc, connection):
                        raise
                    _abandon(connection)
                    raise ConnectionAbortedError("the connection broke") from exc
        except _CONNECTION_LOST as exc:
            if opened:
                raise LedgerError("the connection to PostgreSQL failed during a read") from exc
            raise TransientError("the connection failed while opening a read") from exc

    async def aclose(self) -> None:
        await self._pool.close()


async def _migrate(connection: _Connection) -> None:
    async with connection.transaction():
        await connection.execute(_MIGRATION_LOCK)
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        current = int(await connection.fetchval(CURRENT))
        for migration in pending("postgres", current):
            await connection.execute(migration.sql)
            if migration.name == SEALING_MIGRATION:
                unsealed = await connection.fetch(UNSEALED_RUNS)
                await connection.executemany(
                    dollar_placeholders(SEAL_RUN), [seal_params(row) for row in unsealed]
                )
            await connection.execute(
                dollar_placeholders(APPLIED), migration.version, migration.name, utc_now()
            )
