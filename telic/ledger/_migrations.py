"""Versioned schema migrations shipped as SQL files: ``migrations/<dialect>/NNNN_name.sql``.

Each backend applies the files it has not applied yet, in order, inside one transaction at open,
and records each in ``schema_migrations``. A store that records a version above the newest file
was written by newer code, and is refused rather than guessed at.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from typing import Final, Literal

from telic._errors import StoreVersionError

_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
CURRENT: Final = "SELECT coalesce(max(version), 0) FROM schema_migrations"
"""The schema version of a store (0: none applied)."""
APPLIED: Final = "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step."""

    version: int
    name: str
    sql: str


def load_migrations(dialect: Literal["sqlite", "postgres"]) -> tuple[Migration, ...]:
    """Return the dialect's migrations in version order."""
    folder = resources.files("telic.ledger").joinpath("migrations", dialect)
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise AssertionError(f"{dialect} migrations must be numbered 1..n without gaps")
    return tuple(found)


def pending(dialect: Literal["sqlite", "postgres"], stored_version: int) -> tuple[Migration, ...]:
    """Return the migrations a store at ``stored_version`` has yet to apply, in order.

    Raises:
        StoreVersionError: the store's schema is newer than the newest migration this code has.
    """
    known = load_migrations(dialect)
    newest = known[-1].version if known else 0
    if stored_version > newest:
        raise StoreVersionError(
            f"The ledger store has schema version {stored_version}, but this version of Telic "
            f"understands up to {newest}; upgrade Telic to open it"
        )
    return known[stored_version:]


def split_sqlite_script(script: str) -> list[str]:
    """Split a script into complete statements, keeping semicolons inside triggers intact.

    ``executescript`` would commit the surrounding transaction, so statements run one by one.
    """
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        raise AssertionError("migration script ends inside a statement")
    return statements
