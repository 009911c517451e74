"""Opening a ledger: URL selection, a safe state directory, private files, schema versions."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from pathlib import Path

import asyncpg
import pytest
from ledgerkit import artifact, only, start, step

from telic._errors import ContextSecurityError, StoreVersionError, UsageError
from telic.ledger import default_state_dir, open_ledger, resolve_url

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    return root


async def test_a_state_dir_inside_the_repository_is_refused(repo: Path) -> None:
    url = f"sqlite://{repo / '.telic' / 'ledger.sqlite3'}"
    with pytest.raises(ContextSecurityError, match="outside the repository"):
        async with open_ledger(url, repository_root=repo):
            pass
    assert not (repo / ".telic").exists()


async def test_a_state_dir_that_contains_the_repository_is_refused(repo: Path) -> None:
    with pytest.raises(ContextSecurityError, match="must not contain the repository"):
        async with open_ledger(f"sqlite://{repo.parent}", repository_root=repo):
            pass


async def test_a_state_dir_reaching_the_repository_through_a_symlink_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo / "src")
    with pytest.raises(ContextSecurityError, match="outside the repository"):
        async with open_ledger(f"sqlite://{alias / 'state'}", repository_root=repo):
            pass


async def test_a_symlinked_state_dir_is_refused(repo: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-state"
    real.mkdir()
    link = tmp_path / "state-link"
    link.symlink_to(real)
    with pytest.raises(ContextSecurityError, match="symlink"):
        async with open_ledger(f"sqlite://{link}", repository_root=repo):
            pass


async def test_a_symlinked_database_file_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (tmp_path / "elsewhere.sqlite3").touch()
    (state / "ledger.sqlite3").symlink_to(tmp_path / "elsewhere.sqlite3")
    with pytest.raises(ContextSecurityError):
        async with open_ledger(f"sqlite://{state}"):
            pass


async def test_directories_are_private_and_files_are_owner_only(repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with open_ledger(f"sqlite://{state}", repository_root=repo) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1")])
    for path in [state, *state.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


def test_the_default_state_dir_is_named_by_the_repository_real_path(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TELIC_DATABASE_URL", raising=False)
    monkeypatch.delenv("TELIC_STATE_DIR", raising=False)
    alias = tmp_path / "repo-alias"
    alias.symlink_to(repo)
    digest = hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:24]
    expected = tmp_path / "xdg" / "telic" / "repositories" / digest
    assert default_state_dir(repo) == expected
    assert default_state_dir(alias) == expected
    assert resolve_url(None, repo) == f"sqlite://{expected / 'ledger.sqlite3'}"


async def test_the_default_store_is_created_in_the_default_state_dir(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TELIC_DATABASE_URL", raising=False)
    monkeypatch.delenv("TELIC_STATE_DIR", raising=False)
    async with open_ledger(repository_root=repo) as ledger:
        await start(ledger)
    assert (default_state_dir(repo) / "ledger.sqlite3").is_file()


def test_telic_state_dir_overrides_the_default_state_dir(
    monkeypatch: pytest.MonkeyPatch, repo: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("TELIC_DATABASE_URL", raising=False)
    monkeypatch.setenv("TELIC_STATE_DIR", str(tmp_path / "custom"))
    assert resolve_url(None, repo) == f"sqlite://{tmp_path / 'custom' / 'ledger.sqlite3'}"


async def test_the_sqlite_store_uses_wal_full_sync_and_strict_tables(tmp_path: Path) -> None:
    database = tmp_path / "state" / "ledger.sqlite3"
    async with open_ledger(f"sqlite://{database}") as ledger:
        await start(ledger)
    connection = sqlite3.connect(database)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        ).fetchall()
    finally:
        connection.close()
    assert {name for name, _ in tables} >= {"runs", "artifacts", "trace_events"}
    assert all(sql.rstrip().endswith("STRICT") for _, sql in tables)


async def test_telic_database_url_chooses_the_backend(
    monkeypatch: pytest.MonkeyPatch, repo: Path
) -> None:
    monkeypatch.setenv("TELIC_DATABASE_URL", "memory://")
    assert resolve_url(None, repo) == "memory://"
    async with open_ledger(repository_root=repo) as ledger:
        await start(ledger)
        assert (await ledger.get_run("run-1")).version == 1


async def test_an_unknown_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown ledger URL scheme"):
        async with open_ledger("mysql://localhost/db"):
            pass
    with pytest.raises(UsageError):
        async with open_ledger("sqlite://relative/path.sqlite3"):
            pass


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_postgres_on_trio_is_a_clear_usage_error() -> None:
    with pytest.raises(UsageError, match="only on asyncio"):
        async with open_ledger("postgresql://localhost/telic"):
            pass


async def test_reopening_a_store_keeps_its_runs(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'state' / 'ledger.sqlite3'}"
    async with open_ledger(url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1")])
    async with open_ledger(url) as ledger:
        assert (await ledger.get_run("run-1")).version == 2
        assert (await ledger.read_artifact("run-1", "a-1")).record.position == 3
        assert (await ledger.verify_run("run-1")).ok


@only("sqlite", "postgres")
async def test_a_store_from_a_newer_version_is_refused(
    ledger_kind: str, ledger_url: str, state_dir: Path
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    insert = "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')"
    if ledger_kind == "sqlite":
        connection = sqlite3.connect(state_dir / "ledger.sqlite3")
        connection.execute(insert)
        connection.commit()
        connection.close()
    else:
        pg = await asyncpg.connect(ledger_url)
        await pg.execute(insert)
        await pg.close()
    with pytest.raises(StoreVersionError, match="schema version 99"):
        async with open_ledger(ledger_url):
            pass
