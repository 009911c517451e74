"""``telic doctor``: check the machine and the configuration without creating a ledger."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from telic._errors import TelicError
from telic.hosts import KitCheck as Check, check_kits
from telic.ledger import DB_FILE_NAME, default_state_dir, ledger_file_problem
from telic.server import ServerConfig


def _version(command: str, *args: str) -> str | None:
    path = shutil.which(command)
    if path is None:
        return None
    try:
        done = subprocess.run([path, *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    first = (done.stdout or done.stderr).strip().splitlines()
    return first[0] if first else path


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def _state_dir(config: ServerConfig) -> Check:
    root = config.repository_root
    state = config.state_dir or default_state_dir(root)
    lexical = Path(os.path.abspath(state))
    canonical = lexical.resolve()
    for candidate in (lexical, canonical):
        if _within(candidate, root) or _within(root, candidate):
            return Check(
                "state dir", False, f"{lexical} must lie outside {root} and not contain it"
            )
    if lexical.is_symlink():
        return Check("state dir", False, f"{lexical} is a symlink; Telic refuses symlinked state")
    if lexical.exists():
        if not lexical.is_dir():
            return Check("state dir", False, f"{lexical} exists and is not a directory")
        mode = lexical.stat().st_mode & 0o777
        note = "" if mode & 0o077 == 0 else f" (mode {mode:o}: group/other access)"
        return Check("state dir", os.access(lexical, os.W_OK), f"{lexical}{note}")
    parent = next((p for p in lexical.parents if p.exists()), Path("/"))
    writable = os.access(parent, os.W_OK)
    return Check("state dir", writable, f"{lexical} (not created yet; parent {parent})")


def _sqlite(state_dir: Path, db_path: Path, label: str) -> Check:
    """Whether the SQLite ledger can be opened for writing: read, never written or created."""
    problem = ledger_file_problem(state_dir, db_path)
    if problem is None and db_path.is_file() and db_path.stat().st_size > 0:
        try:
            with contextlib.closing(
                sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)
            ) as connection:
                connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error as exc:
            problem = f"the ledger file {db_path} cannot be read: {exc}"
    return Check("database", problem is None, problem or f"{label} {db_path}")


def _database(config: ServerConfig) -> Check:
    url = config.database_url
    if not url:
        state = Path(config.state_dir or default_state_dir(config.repository_root))
        return _sqlite(state, state / DB_FILE_NAME, "embedded SQLite in")
    parts = urlsplit(url)
    if parts.scheme.startswith("sqlite"):
        target = Path(parts.path)
        if target.suffix in (".sqlite3", ".sqlite", ".db"):
            return _sqlite(target.parent, target, "SQLite at")
        return _sqlite(target, target / DB_FILE_NAME, "SQLite at")
    if parts.scheme.startswith("postgres"):
        host, port = parts.hostname or "localhost", parts.port or 5432
        try:
            with socket.create_connection((host, port), timeout=3):
                pass
        except OSError as exc:
            return Check("database", False, f"PostgreSQL at {host}:{port} unreachable: {exc}")
        return Check("database", True, f"PostgreSQL at {host}:{port} accepts connections")
    if parts.scheme == "memory":
        return Check("database", True, "in-memory (nothing persists)")
    return Check("database", False, f"unsupported database URL scheme {parts.scheme!r}")


def _kits(config: ServerConfig) -> list[Check]:
    from telic.cli._kits import kit_cast_turns

    root = config.repository_root
    try:
        cast_turns = kit_cast_turns(config, root)
    except TelicError as exc:  # the server refuses that configuration too: name it once
        detail = f"cannot read the server's cast types, so the cast agent's turn cap: {exc}"
        return [Check(k.name, False, detail) for k in check_kits(root)]
    return check_kits(root, cast_turns=cast_turns)


def run_doctor(config: ServerConfig) -> list[Check]:
    """Return every check; none of them writes anything."""
    python_ok = sys.version_info >= (3, 11)
    root = config.repository_root
    git = _version("git", "--version")
    rg = _version("rg", "--version")
    return [
        Check("python", python_ok, f"{sys.version.split()[0]} (needs 3.11+)"),
        Check("repository", root.is_dir(), str(root)),
        _state_dir(config),
        _database(config),
        Check(
            "git", git is not None, git or "not found: grounding falls back to ripgrep or a walk"
        ),
        Check("rg", rg is not None, rg or "not found (optional)", required=False),
        *_kits(config),
    ]
