"""Where a ledger lives: the URL ``open_ledger`` would use, and an SQLite URL's paths.

Apart from ``_open.py`` so that ``telic hook``, which reads the ledger from a fresh process per
host tool call, finds the same database without importing the async backends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from telic._errors import UsageError

from ._paths import DB_FILE_NAME, default_state_dir

DATABASE_URL_ENV = "TELIC_DATABASE_URL"
STATE_DIR_ENV = "TELIC_STATE_DIR"
REPOSITORY_ROOT_ENV = "TELIC_REPOSITORY_ROOT"
"""The repository a server or hook serves, whose default state dir holds the ledger."""
_DB_SUFFIXES = (".sqlite3", ".sqlite", ".db")


def resolve_url(
    url: str | None,
    repository_root: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Return the URL ``open_ledger`` would use: the argument, else ``TELIC_DATABASE_URL``, else
    an SQLite store in ``TELIC_STATE_DIR``, else one in the repository's default state dir."""
    if url:
        return url
    env = os.environ if environ is None else environ
    configured = env.get(DATABASE_URL_ENV)
    if configured:
        return configured
    state_dir = env.get(STATE_DIR_ENV)
    if state_dir:
        return "sqlite://" + os.path.join(os.path.abspath(state_dir), DB_FILE_NAME)
    root = repository_root if repository_root is not None else os.getcwd()
    return "sqlite://" + str(default_state_dir(root) / DB_FILE_NAME)


def sqlite_paths(url: str) -> tuple[Path, Path]:
    """Return the state directory and the database file an ``sqlite:///…`` ledger URL names."""
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
