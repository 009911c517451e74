"""``open_ledger``: choose a backend from a URL and own its connections for a block."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

import anyio
import sniffio

from telic._errors import UsageError

from ._base import Backend, Ledger
from ._engine import LedgerEngine, utc_now
from ._memory import MemoryBackend
from ._paths import DB_FILE_NAME, default_state_dir, prepare_state_dir
from ._records import Limits

__all__ = ["DATABASE_URL_ENV", "STATE_DIR_ENV", "open_ledger", "resolve_url"]

DATABASE_URL_ENV = "TELIC_DATABASE_URL"
STATE_DIR_ENV = "TELIC_STATE_DIR"
_DB_SUFFIXES = (".sqlite3", ".sqlite", ".db")


def resolve_url(url: str | None, repository_root: str | os.PathLike[str] | None = None) -> str:
    """Return the URL ``open_ledger`` would use: the argument, else ``TELIC_DATABASE_URL``, else
    an SQLite store in ``TELIC_STATE_DIR``, else one in the repository's default state dir."""
    if url:
        return url
    configured = os.environ.get(DATABASE_URL_ENV)
    if configured:
        return configured
    state_dir = os.environ.get(STATE_DIR_ENV)
    if state_dir:
        return "sqlite://" + os.path.join(os.path.abspath(state_dir), DB_FILE_NAME)
    root = repository_root if repository_root is not None else os.getcwd()
    return "sqlite://" + str(default_state_dir(root) / DB_FILE_NAME)


def _sqlite_paths(url: str) -> tuple[Path, Path]:
    parts = urlsplit(url)
    path = unquote(parts.path)
    if parts.netloc or not path.startswith("/") or parts.query:
        raise UsageError(
            "an SQLite ledger URL is sqlite:///absolute/path/ledger.sqlite3 "
            "or sqlite:///absolute/state/dir"
        )
    target = Path(path)
    if target.suffix in _DB_SUFFIXES:
        return target.parent, target
    return target, target / DB_FILE_NAME


@asynccontextmanager
async def open_ledger(
    url: str | None = None,
    *,
    repository_root: str | os.PathLike[str] | None = None,
    limits: Limits | None = None,
    clock: Callable[[], str] = utc_now,
) -> AsyncIterator[Ledger]:
    """Open the ledger at ``url`` for the duration of an ``async with`` block.

    URLs: ``memory://`` (in-process, for tests and embedding), ``sqlite:///path/ledger.sqlite3``
    or ``sqlite:///path/to/state-dir``, and ``postgresql://user@host/db`` (asyncio only; needs
    the ``postgres`` extra). Without a URL, ``TELIC_DATABASE_URL`` is used, else an SQLite store
    in ``TELIC_STATE_DIR``, else one in
    ``${XDG_STATE_HOME:-~/.local/state}/telic/repositories/<hash of the repository root>/``.
    ``repository_root`` is what an SQLite state directory is checked against; pass it whenever
    the ledger serves a repository.

    Raises:
        ContextSecurityError: the SQLite state directory is inside the repository, contains it,
            or is a symlink.
        StoreVersionError: the store was written by a newer Telic.
        UsageError: the URL is not understood, or PostgreSQL is asked for on trio.
    """
    resolved = resolve_url(url, repository_root)
    scheme = urlsplit(resolved).scheme
    backend: Backend
    if scheme == "memory":
        backend = MemoryBackend()
    elif scheme == "sqlite":
        from ._sqlite import SqliteBackend

        state_dir, db_path = _sqlite_paths(resolved)
        checked = prepare_state_dir(state_dir, repository_root)
        backend = await SqliteBackend.open(checked, checked / db_path.name)
    elif scheme in ("postgresql", "postgres"):
        if sniffio.current_async_library() != "asyncio":
            raise UsageError(
                "the PostgreSQL ledger uses asyncpg, which runs only on asyncio; "
                "run on asyncio or use an sqlite:// ledger"
            )
        from ._postgres import PostgresBackend

        backend = await PostgresBackend.open(resolved)
    else:
        raise UsageError(f"unknown ledger URL scheme {scheme!r}: use memory, sqlite or postgresql")
    ledger = LedgerEngine(backend, limits=limits, clock=clock)
    try:
        yield ledger
    finally:
        with anyio.CancelScope(shield=True):
            await ledger.close()
