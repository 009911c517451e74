"""``open_ledger``: choose a backend from a URL and own its connections for a block."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
import sniffio

from telic._errors import UsageError

from ._base import Backend
from ._clock import utc_now
from ._locate import resolve_url, sqlite_paths
from ._memory import MemoryBackend
from ._paths import prepare_state_dir
from ._plans import Ledger
from ._records import Limits


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

        state_dir, db_path = sqlite_paths(resolved)
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
    ledger = Ledger(backend, limits=limits, clock=clock)
    try:
        yield ledger
    finally:
        with anyio.CancelScope(shield=True):
            await ledger.close()
