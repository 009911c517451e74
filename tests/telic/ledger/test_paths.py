"""A broken ledger file is found before any connection: a clear one-line ``LedgerError``, and
the file is left exactly as it was."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from telic._errors import LedgerError
from telic.ledger import open_ledger
from telic.ledger._paths import SQLITE_HEADER, ledger_file_problem

pytestmark = pytest.mark.anyio

GARBAGE = bytes(range(256)) * 16
CORRUPT = SQLITE_HEADER + bytes(range(256)) * 16  # the header, then anything but a database


def _state(tmp_path: Path, content: bytes | None) -> tuple[Path, Path]:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    db = state / "ledger.sqlite3"
    if content is not None:
        db.write_bytes(content)
        os.chmod(db, 0o600)
    return state, db


def test_a_missing_or_empty_file_and_a_real_database_have_no_problem(tmp_path: Path) -> None:
    state, db = _state(tmp_path, None)
    assert ledger_file_problem(state, db) is None
    db.write_bytes(b"")
    assert ledger_file_problem(state, db) is None
    db.unlink()
    sqlite3.connect(db).close()  # an empty database has no header yet
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE t (x)")
    assert db.read_bytes().startswith(SQLITE_HEADER)
    assert ledger_file_problem(state, db) is None


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    state, db = _state(tmp_path, GARBAGE)
    problem = ledger_file_problem(state, db)
    assert problem == f"the ledger file {db} is not an SQLite database"


def test_a_read_only_state_dir_or_file_is_named(tmp_path: Path) -> None:
    state, db = _state(tmp_path, b"")
    folder_read_only = ledger_file_problem(state, db, writable=lambda path: path != str(state))
    assert folder_read_only is not None
    assert "state directory" in folder_read_only
    assert "read-only" in folder_read_only
    file_read_only = ledger_file_problem(state, db, writable=lambda path: path != str(db))
    assert file_read_only == f"the ledger file {db} is read-only; Telic must write to it"


@pytest.mark.parametrize(("content", "says"), [(GARBAGE, "not an SQLite"), (CORRUPT, "cannot")])
async def test_opening_a_broken_store_fails_with_a_ledger_error_and_changes_nothing(
    tmp_path: Path, content: bytes, says: str
) -> None:
    state, db = _state(tmp_path, content)
    with pytest.raises(LedgerError) as refused:
        async with open_ledger(f"sqlite://{db}"):
            pytest.fail("a broken store must not open")
    assert says in refused.value.message
    assert "\n" not in refused.value.message
    assert refused.value.code == "ledger_error"
    assert db.read_bytes() == content
    assert sorted(p.name for p in state.iterdir()) == ["ledger.sqlite3"]
