"""The run row is sealed by its hash (issue 28, item 5).

Changing any field of a run row behind the ledger's back — its status, mode, phase, topology,
escalation count, repository root, prior run, controller state, version or counters, or
clearing its hash — fails ``verify_run`` at the run, and so does altering its last record or
chain head. A run that does not verify refuses every write (a phase step, a supporting
artifact, trace events, the ``telic hook`` command's direct write) with a ``LedgerError`` (code
``ledger_error``) naming the run and what does not check out, and the store is left exactly as
it was.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Sql
from ledgerkit import artifact, event, only, run_record, start, step

from telic._errors import LedgerError
from telic.ledger import Ledger, Limits, open_ledger, utc_now
from telic.ledger._plans import fix_events, plan_events, probe_for
from telic.ledger._sqlite_sync import connect, transaction

pytestmark = pytest.mark.anyio


def _fresh() -> str:
    return secrets.token_hex(6)


ROW_CHANGES: list[Any] = [
    pytest.param("UPDATE runs SET status = ? WHERE run_id = 'run-1'", "completed", id="status"),
    pytest.param(
        "UPDATE runs SET requested_mode = ? WHERE run_id = 'run-1'", "report_only", id="mode"
    ),
    pytest.param("UPDATE runs SET phase = ? WHERE run_id = 'run-1'", "agent_4_execute", id="phase"),
    pytest.param(
        "UPDATE runs SET repository_root = ? WHERE run_id = 'run-1'", "/srv/other", id="root"
    ),
    pytest.param(
        "UPDATE runs SET controller_state_json = ? WHERE run_id = 'run-1'",
        '{"step":99}',
        id="controller-state",
    ),
    pytest.param("UPDATE runs SET version = ? WHERE run_id = 'run-1'", 7, id="version"),
    pytest.param("UPDATE runs SET topology = ? WHERE run_id = 'run-1'", "micro", id="topology"),
    pytest.param(
        "UPDATE runs SET escalation_count = ? WHERE run_id = 'run-1'", 1, id="escalation-count"
    ),
    pytest.param(
        "UPDATE runs SET prior_run_id = ? WHERE run_id = 'run-1'", "run-0", id="prior-run"
    ),
    pytest.param(
        "UPDATE runs SET updated_at = ? WHERE run_id = 'run-1'",
        "2031-01-01T00:00:00.000Z",
        id="updated-at",
    ),
    pytest.param("UPDATE runs SET run_hash = ? WHERE run_id = 'run-1'", None, id="hash-cleared"),
    pytest.param("UPDATE runs SET chain_head = ? WHERE run_id = 'run-1'", None, id="chain-head"),
    pytest.param(
        "UPDATE trace_events SET decision_summary = ? WHERE run_id = 'run-1' AND sequence = "
        "(SELECT max(sequence) FROM trace_events WHERE run_id = 'run-1')",
        None,
        id="last-event",
    ),
]


def _value(value: Any) -> Any:
    """A fresh value per run where the case leaves it open."""
    return value if value is not None else f"sha256:{_fresh()}"


async def _populated(ledger: Ledger) -> None:
    await start(ledger)
    await step(ledger, "run-1", 1, [artifact("a-1")], [event()])


async def _state(ledger_url: str) -> tuple[Any, ...]:
    async with open_ledger(ledger_url) as ledger:
        run = await ledger.get_run("run-1")
        artifacts = await ledger.list_artifacts("run-1")
        report = await ledger.verify_run("run-1")  # counts every record of the chain
    return run, artifacts, report


WRITES: dict[str, Callable[[Ledger], Awaitable[Any]]] = {
    "commit_step": lambda ledger: ledger.commit_step(
        "run-1", 2, run_record("run-1", 3, updated=3), [artifact("a-2")], [event()]
    ),
    "store_supporting": lambda ledger: ledger.store_supporting("run-1", artifact("ev-9"), []),
    "record_events": lambda ledger: ledger.record_events("run-1", [event("noted")]),
}


@only("sqlite", "postgres")
@pytest.mark.parametrize(("statement", "value"), ROW_CHANGES)
async def test_a_run_row_changed_outside_telic_fails_verify_and_refuses_every_write(
    ledger_url: str, raw_sql: Sql, statement: str, value: Any
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        assert (await ledger.verify_run("run-1")).ok
    await raw_sql(statement, (_value(value),))
    before = await _state(ledger_url)
    async with open_ledger(ledger_url) as ledger:
        report = await ledger.verify_run("run-1")
        assert not report.ok
        assert report.first_broken is not None
        assert report.first_broken.kind in ("run", "event")
        for name, write in WRITES.items():
            with pytest.raises(LedgerError) as caught:
                await write(ledger)
            assert caught.value.code == "ledger_error", name
            assert "Run run-1 does not verify" in caught.value.message
            assert "telic verify run-1" in caught.value.message
    assert await _state(ledger_url) == before


@only("memory")
async def test_the_memory_backend_refuses_a_tampered_run_as_well(ledger_url: str) -> None:
    from dataclasses import replace

    from telic.ledger._memory import MemoryBackend

    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        backend = ledger._backend  # type: ignore[attr-defined]
        assert isinstance(backend, MemoryBackend)

        def edit(state: Any) -> None:
            stored = state.runs["run-1"]
            state.runs["run-1"] = replace(stored, record=replace(stored.record, status="completed"))

        backend.tamper(edit)
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert report.first_broken.kind == "run"
        with pytest.raises(LedgerError, match="does not verify"):
            await ledger.record_events("run-1", [event("noted")])


@only("sqlite")
async def test_the_hooks_direct_write_is_refused_on_a_tampered_run(
    ledger_url: str, state_dir: Path, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
    await raw_sql("UPDATE runs SET requested_mode = ? WHERE run_id = 'run-1'", ("report_only",))
    before = await _state(ledger_url)
    limits = Limits()
    connection = connect(state_dir / "ledger.sqlite3")
    try:
        fixed = fix_events([event("permission_checked")], utc_now)
        with pytest.raises(LedgerError, match="Run run-1 does not verify"):
            transaction(
                connection,
                "run-1",
                probe_for([], fixed, limits),
                lambda probed: plan_events(probed, fixed, limits),
            )
    finally:
        connection.close()
    assert await _state(ledger_url) == before


@only("sqlite")
async def test_a_store_from_before_the_seal_is_sealed_once_when_opened(
    ledger_url: str, state_dir: Path
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
    database = state_dir / "ledger.sqlite3"
    with sqlite3.connect(database) as connection:  # back to schema 2: no hash column
        connection.execute("ALTER TABLE runs DROP COLUMN escalation_count")  # schema 4's
        connection.execute("ALTER TABLE runs DROP COLUMN topology")
        connection.execute("ALTER TABLE runs DROP COLUMN run_hash")
        connection.execute("ALTER TABLE runs DROP COLUMN prior_run_id")  # schema 5's
        connection.execute("DELETE FROM schema_migrations WHERE version >= 3")
    async with open_ledger(ledger_url) as ledger:
        assert (await ledger.verify_run("run-1")).ok
        await step(ledger, "run-1", 2, [artifact("a-2")], [event()])
        assert (await ledger.verify_run("run-1")).ok
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE runs SET run_hash = NULL")
    async with open_ledger(ledger_url) as ledger:  # sealed once: a cleared hash stays broken
        assert not (await ledger.verify_run("run-1")).ok
