"""Where the embedded store lives, and the checks that keep it out of the repository.

The state directory holds everything Telic knows about a repository's runs, including exact
source text. It must not sit inside the repository (an agent could read or rewrite it, and it
would be committed), must not contain the repository, and must not be a symlink (which could
point it anywhere). Both the path as written and its canonical form are checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

from telic._errors import ContextSecurityError, LedgerError

DB_FILE_NAME: Final = "ledger.sqlite3"
DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600


def default_state_dir(repository_root: str | os.PathLike[str]) -> Path:
    """Return ``${XDG_STATE_HOME:-~/.local/state}/telic/repositories/<24 hex>/`` for a repo.

    The 24 hex characters are the start of the sha256 of the repository root's real path.
    """
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    real = os.path.realpath(os.fspath(repository_root))
    digest = hashlib.sha256(real.encode("utf-8")).hexdigest()[:24]
    return Path(base) / "telic" / "repositories" / digest


SQLITE_HEADER: Final = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


def _writable(path: str) -> bool:
    return os.access(path, os.W_OK)


def ledger_file_problem(
    state_dir: str | os.PathLike[str],
    db_path: str | os.PathLike[str],
    *,
    writable: Callable[[str], bool] | None = None,
) -> str | None:
    """Say why the SQLite ledger at ``db_path`` cannot be opened for writing, or ``None``.

    Checked before any connection is made, so that a broken store fails with one clear line
    instead of an SQLite error from deep inside a worker thread: the file, when it exists and
    is not empty, must start with SQLite's header, and it and an existing state directory
    must be writable (SQLite writes its journal beside the file). A state directory holding body
    files (``blobs/sha256/…``, Telic 1.0's layout) is refused: this ledger keeps every body in the
    database and would never read them. ``writable`` is the access seam (``os.access(path,
    W_OK)``; tests inject a read-only answer, which root never gets).
    """
    writable = writable or _writable
    folder, file = os.fspath(state_dir), os.fspath(db_path)
    if os.path.isdir(folder) and not writable(folder):
        return f"the state directory {folder} is read-only; Telic must write its ledger there"
    if os.path.lexists(os.path.join(folder, "blobs")):
        return (
            f"the state directory {folder} holds body files in 'blobs' (Telic 1.0's layout), "
            "which this ledger does not read: it keeps every body in the database; use an "
            "empty state directory (TELIC_STATE_DIR) or move 'blobs' away"
        )
    try:
        with open(file, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"the ledger file {file} cannot be read: {exc.strerror or exc}"
    if head and head != SQLITE_HEADER:
        return f"the ledger file {file} is not an SQLite database"
    if not writable(file):
        return f"the ledger file {file} is read-only; Telic must write to it"
    return None


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def prepare_state_dir(
    state_dir: str | os.PathLike[str], repository_root: str | os.PathLike[str] | None
) -> Path:
    """Check a state directory, create it (mode 0700) if missing, and return its absolute path.

    Raises:
        ContextSecurityError: the directory is a symlink, is not a directory, lies inside the
            repository or contains it.
        LedgerError: the directory cannot be created or checked (a file in the way, no
            permission, a read-only file system), with the system's reason.
    """
    lexical = os.path.abspath(os.fspath(state_dir))
    if repository_root is not None:
        repo_lexical = os.path.abspath(os.fspath(repository_root))
        canonical = os.path.realpath(lexical)
        repo_canonical = os.path.realpath(repo_lexical)
        for state, repo in ((lexical, repo_lexical), (canonical, repo_canonical)):
            if _within(state, repo):
                raise ContextSecurityError(
                    "The Telic state directory must lie outside the repository; "
                    "set TELIC_STATE_DIR or TELIC_DATABASE_URL to a path outside it"
                )
            if _within(repo, state):
                raise ContextSecurityError(
                    "The Telic state directory must not contain the repository; "
                    "choose a directory beside or away from it"
                )
    path = Path(lexical)
    try:
        if not os.path.lexists(path):
            path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # another process may win; checks below
                os.mkdir(path, DIR_MODE)
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise ContextSecurityError(
                "The Telic state directory is a symlink; refusing to follow it (use the real path)"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise ContextSecurityError(f"The Telic state directory {lexical} is not a directory")
        if stat.S_IMODE(info.st_mode) != DIR_MODE:
            os.chmod(path, DIR_MODE)
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise LedgerError(
            f"the Telic state directory {lexical} cannot be created or used: {reason}; set "
            "TELIC_STATE_DIR to a directory you can write"
        ) from None
    return path


def refuse_symlink(path: Path) -> None:
    """Raise ``ContextSecurityError`` if ``path`` exists as a symlink."""
    if path.is_symlink():
        raise ContextSecurityError(f"{path.name!r} in the Telic state directory is a symlink")
