"""Fixtures for the ledger tests: one URL per backend, and small record factories.

``ledger_kind`` parametrises a test over memory, SQLite and PostgreSQL together with the async
backend: memory and SQLite run on asyncio and trio, PostgreSQL (asyncpg) on asyncio only.
PostgreSQL tests read ``TELIC_TEST_POSTGRES_URL`` and get a schema of their own; without it they
skip locally and fail in CI (``CI=true``).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import asyncpg
import pytest

# The helper module beside this file is shared with the subprocess scripts.
sys.path.insert(0, str(Path(__file__).parent))


POSTGRES_ENV = "TELIC_TEST_POSTGRES_URL"

BACKEND_COMBINATIONS = [
    pytest.param("memory", "asyncio", id="memory-asyncio"),
    pytest.param("memory", "trio", id="memory-trio"),
    pytest.param("sqlite", "asyncio", id="sqlite-asyncio"),
    pytest.param("sqlite", "trio", id="sqlite-trio"),
    pytest.param("postgres", "asyncio", id="postgres-asyncio", marks=pytest.mark.postgres),
]


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ledger_kind" in metafunc.fixturenames:
        wanted = getattr(metafunc.function, "ledger_kinds", None)
        params = [
            p
            for p in BACKEND_COMBINATIONS
            if wanted is None or p.values[0] in wanted or p.id in wanted
        ]
        # As a marker, so that pytest's own hooks (this one runs first) apply it and let it
        # take precedence over the parametrised ``anyio_backend`` fixture.
        metafunc.definition.add_marker(
            pytest.mark.parametrize(("ledger_kind", "anyio_backend"), params)
        )


def _in_thread(coroutine_factory: Any) -> Any:
    # The test's own event loop may be trio or busy; a private loop in a thread is neither.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine_factory()).result()


def with_search_path(url: str, schema: str) -> str:
    """Return ``url`` with a ``search_path`` server setting (asyncpg passes it through)."""
    return f"{url}{'&' if '?' in url else '?'}search_path={schema}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL whose search path is a fresh schema, dropped after the test."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{POSTGRES_ENV} is not set in CI: the PostgreSQL ledger tests must run")
        pytest.skip(f'{POSTGRES_ENV} is not set (run: eval "$(.ci/postgres.sh)")')
    schema = f"t_{uuid.uuid4().hex[:16]}"

    async def run(sql: str) -> None:
        connection = await asyncpg.connect(base)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    _in_thread(lambda: run(f"CREATE SCHEMA {schema}"))
    try:
        yield with_search_path(base, schema)
    finally:
        _in_thread(lambda: run(f"DROP SCHEMA {schema} CASCADE"))


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A state directory outside any repository."""
    return tmp_path / "state"


@pytest.fixture
def ledger_url(ledger_kind: str, request: pytest.FixtureRequest, state_dir: Path) -> str:
    """The URL of an empty store of the requested kind."""
    if ledger_kind == "memory":
        return "memory://"
    if ledger_kind == "sqlite":
        return f"sqlite://{state_dir / 'ledger.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))


Sql = Callable[[str, tuple[Any, ...]], Awaitable[None]]
"""A statement run directly against the store, bypassing the ledger (``?`` placeholders)."""


@pytest.fixture
def raw_sql(ledger_kind: str, ledger_url: str, state_dir: Path) -> Sql:
    """Run a statement directly against the store, bypassing the ledger (``?`` placeholders)."""

    async def sqlite(statement: str, params: tuple[Any, ...]) -> None:
        connection = sqlite3.connect(state_dir / "ledger.sqlite3")
        try:
            connection.execute(statement, params)
            connection.commit()
        finally:
            connection.close()

    async def postgres(statement: str, params: tuple[Any, ...]) -> None:
        parts = statement.split("?")
        numbered = "".join(f"{p}${i}" for i, p in enumerate(parts[:-1], 1)) + parts[-1]
        connection = await asyncpg.connect(ledger_url)
        try:
            await connection.execute(numbered, *params)
        finally:
            await connection.close()

    return sqlite if ledger_kind == "sqlite" else postgres
