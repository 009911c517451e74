"""The embedded SQLite backend: one database file plus a content-addressed blob directory.

On asyncio the connection is an ``aiosqlite`` one; on trio (where aiosqlite cannot run) it is a
plain ``sqlite3`` connection driven from a worker thread through a single-slot capacity limiter.
Both run the same SQL (``_sql.SqlTxn``). Every mutation is a ``BEGIN IMMEDIATE`` transaction, so
writers in other processes are serialised by SQLite's own lock; within this process one
``anyio.Lock`` keeps tasks from interleaving statements on the shared connection.

Bodies are written to a temporary file, fsynced, renamed into place and the directory fsynced,
all before the row that refers to them commits: a crash can leave an unreferenced blob behind,
never a row that points at a missing or partial one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, Protocol

import aiosqlite
import anyio
import anyio.to_thread
import sniffio

from telic._errors import ContextSecurityError, LedgerConflict, LedgerError
from telic.protocol._canonical import sha256_hex_digest

from ._base import Reader, Txn
from ._engine import utc_now
from ._migrations import check_not_newer, load_migrations, split_sqlite_script
from ._paths import FILE_MODE, refuse_symlink, safe_mkdir
from ._retry import TransientError
from ._rows import Row
from ._sql import Dialect, SqlTxn

__all__ = ["SqliteBackend"]

BUSY_TIMEOUT_MS: Final = 5000
_DIALECT: Final = Dialect(
    placeholders=lambda sql: sql,
    lock_run="",  # BEGIN IMMEDIATE already holds the database's write lock
    recency_order="updated_at DESC, run_id ASC",
    no_limit=-1,
)
_PRAGMAS: Final = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
)


class _Connection(Protocol):
    async def fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]: ...

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int: ...

    async def close(self) -> None: ...


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: the backend issues BEGIN/COMMIT itself.
    return sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )


class _AioConnection:
    """aiosqlite on asyncio."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection

    @classmethod
    async def open(cls, path: Path) -> _AioConnection:
        connection = aiosqlite.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        return cls(await connection)

    async def fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        return list(await self._connection.execute_fetchall(sql, params))

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        cursor = await self._connection.execute(sql, params)
        count = cursor.rowcount
        await cursor.close()
        return count

    async def close(self) -> None:
        await self._connection.close()


class _ThreadConnection:
    """sqlite3 from one worker thread at a time (trio, or anywhere aiosqlite cannot run)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._limiter = anyio.CapacityLimiter(1)

    @classmethod
    async def open(cls, path: Path) -> _ThreadConnection:
        return cls(await anyio.to_thread.run_sync(_connect, path))

    async def fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        def run() -> list[Row]:
            return self._connection.execute(sql, params).fetchall()

        return await anyio.to_thread.run_sync(run, limiter=self._limiter)

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        def run() -> int:
            return self._connection.execute(sql, params).rowcount

        return await anyio.to_thread.run_sync(run, limiter=self._limiter)

    async def close(self) -> None:
        await anyio.to_thread.run_sync(self._connection.close, limiter=self._limiter)


class _FileBlobs:
    """``blobs/sha256/<2 hex>/<62 hex>``, written atomically and durably."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def _path(self, sha256: str) -> Path:
        hex_digest = sha256.removeprefix("sha256:")
        return self._root / hex_digest[:2] / hex_digest[2:]

    async def get(self, sha256: str) -> bytes | None:
        return await anyio.to_thread.run_sync(_read_file, self._path(sha256))

    async def put(self, sha256: str, data: bytes) -> None:
        await anyio.to_thread.run_sync(_write_blob, self._path(sha256), sha256, data)


def _read_file(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ContextSecurityError("a blob in the Telic state directory is a symlink") from exc
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_blob(path: Path, sha256: str, data: bytes) -> None:
    folder = path.parent
    created = not folder.exists()
    safe_mkdir(folder)
    if created:
        _fsync_dir(folder.parent)
    existing = _read_file(path)
    if existing is not None and sha256_hex_digest(existing) == sha256:
        return  # content-addressed: the same bytes are already durable under this name
    temporary = folder / f"{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_dir(folder)


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


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class SqliteBackend:
    """The SQLite ``Backend``."""

    def __init__(self, connection: _Connection, blobs: _FileBlobs) -> None:
        self._connection = connection
        self._blobs = blobs
        self._lock = anyio.Lock()

    @classmethod
    async def open(cls, state_dir: Path, db_path: Path) -> SqliteBackend:
        """Open (creating and migrating if needed) the store in an already checked state dir."""
        blob_root = state_dir / "blobs" / "sha256"
        for folder in (state_dir / "blobs", blob_root):
            safe_mkdir(folder)
        _create_private_file(db_path)
        for suffix in ("-wal", "-shm"):
            refuse_symlink(db_path.with_name(db_path.name + suffix))
        if sniffio.current_async_library() == "asyncio":
            connection: _Connection = await _AioConnection.open(db_path)
        else:
            connection = await _ThreadConnection.open(db_path)
        try:
            for pragma in _PRAGMAS:
                await connection.fetch(pragma)
            await _migrate(connection)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await connection.close()
            raise
        return cls(connection, _FileBlobs(blob_root))

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Txn]:
        async with self._lock:
            try:
                await self._connection.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise _translate(exc) from exc
            try:
                yield SqlTxn(self._connection, self._blobs, _DIALECT, writing=True)
                await self._connection.execute("COMMIT")
            except BaseException as exc:
                await self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise _translate(exc) from exc
                raise

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Reader]:
        async with self._lock:
            await self._connection.execute("BEGIN")
            try:
                yield SqlTxn(self._connection, self._blobs, _DIALECT, writing=False)
            finally:
                await self._rollback()

    async def _rollback(self) -> None:
        with anyio.CancelScope(shield=True):
            # OperationalError: no transaction is open (SQLite already rolled it back).
            with contextlib.suppress(sqlite3.OperationalError):
                await self._connection.execute("ROLLBACK")

    async def aclose(self) -> None:
        async with self._lock:
            await self._connection.close()


def _translate(exc: sqlite3.Error) -> Exception:
    if _is_busy(exc):
        return TransientError("SQLite database is busy")
    if isinstance(exc, sqlite3.IntegrityError):
        return LedgerConflict("a concurrent writer stored a conflicting record")
    return LedgerError(f"SQLite error: {exc}")


async def _migrate(connection: _Connection) -> None:
    migrations = load_migrations("sqlite")
    await connection.execute("BEGIN IMMEDIATE")
    try:
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
        )
        rows = await connection.fetch("SELECT coalesce(max(version), 0) FROM schema_migrations")
        current = int(rows[0][0])
        check_not_newer(current, migrations)
        for migration in migrations[current:]:
            for statement in split_sqlite_script(migration.sql):
                await connection.execute(statement)
            await connection.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, utc_now()),
            )
        await connection.execute("COMMIT")
    except BaseException:
        with anyio.CancelScope(shield=True):
            await connection.execute("ROLLBACK")
        raise
