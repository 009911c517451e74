"""One secret gate under every write path into the ledger (issue 28, item 3).

Telic's own text about a decision (the permission decision's strings, the summary) is redacted
where an event gets its id and time (``fix_events``), before it is hashed, on every write path:
a new run's first events, a phase step, a supporting artifact's events, events alone, and the
``telic hook`` command's direct synchronous SQLite write (the same ``fix_events`` /
``plan_events`` / ``transaction`` it calls). Any other field holding a secret is refused by the
floor every writing plan passes (``_plans.plan``), in that same direct write too. The secrets are
fresh on every run; each write path is tried with one of the kinds, so that every kind is tried
somewhere (every kind at every place is the detector's test, ``tests/telic/test_secrets.py``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ledgerkit import artifact, event, only, run_record, start

from telic.ledger import Ledger, Limits, NewTraceEvent, TraceRecord, open_ledger, utc_now
from telic.ledger._errors import SecretRefused
from telic.ledger._plans import fix_events, plan_events, probe_for
from telic.ledger._sqlite_sync import connect, transaction
from tests.telic.fresh_secrets import NAMES, Fresh, fresh

pytestmark = pytest.mark.anyio


def _checked(planted: Fresh) -> NewTraceEvent:
    """The event a host's Read of a file whose name holds a secret leaves (as the hook's)."""
    path = f"config/{planted.text}/settings.py"
    return event(
        "permission_checked",
        actor="host",
        permission_decision={
            "decision": "allow",
            "capability": "repository.read",
            "scope": path,
            "policyRefs": [],
            "rationaleSummary": f"repository.read on {path} is allowed",
        },
        decision_summary=f"Claude Code Read: repository.read on {path} is allowed",
    )


def _held(records: Any, planted: Fresh) -> list[str]:
    return [repr(record) for record in records if planted.secret in repr(record)]


async def _write(ledger: Ledger, path: str, checked: NewTraceEvent) -> None:
    if path == "create_run":
        await ledger.create_run(
            run_record("run-2"),
            artifact("run-2-request", run_id="run-2"),
            artifact("run-2", "RunEnvelope", run_id="run-2"),
            [checked],
        )
    elif path == "commit_step":
        await ledger.commit_step("run-1", 1, run_record("run-1", 2), [artifact("a-1")], [checked])
    elif path == "store_supporting":
        await ledger.store_supporting("run-1", artifact("a-1"), [checked])
    else:
        await ledger.record_events("run-1", [checked])


WRITE_PATHS = ["create_run", "commit_step", "store_supporting", "record_events"]


@pytest.mark.parametrize(
    ("path", "name"), [(path, NAMES[i % len(NAMES)]) for i, path in enumerate(WRITE_PATHS)]
)
async def test_a_secret_in_a_traced_target_is_stored_redacted_on_every_write_path(
    ledger_url: str, path: str, name: str
) -> None:
    planted = fresh(name)
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await _write(ledger, path, _checked(planted))
        run_id = "run-2" if path == "create_run" else "run-1"
        trace = (await ledger.page_trace(run_id, limit=100)).events
        assert (await ledger.verify_run(run_id)).ok
    stored = [e for e in trace if e.event_type == "permission_checked"]
    assert len(stored) == 1
    decision = stored[0].permission_decision
    assert decision is not None
    marker = f"[redacted:{planted.kind}]"
    assert decision["scope"] == f"config/{marker}/settings.py"
    assert marker in str(decision["rationaleSummary"])
    assert stored[0].decision_summary.startswith(
        f"Claude Code Read: repository.read on config/{marker}"
    )
    assert _held(trace, planted) == []


def _hook_write(db: Path, run_id: str, new: NewTraceEvent) -> None:
    """What ``telic hook`` does to append its decision: no engine, no event loop."""
    limits = Limits()
    connection = connect(db)
    try:
        fixed = fix_events([new], utc_now)
        probe = probe_for([], fixed, limits)
        transaction(connection, run_id, probe, lambda probed: plan_events(probed, fixed, limits))
    finally:
        connection.close()


def _rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT * FROM trace_events ORDER BY sequence").fetchall()


@only("sqlite")
async def test_the_hooks_direct_write_stores_a_secret_path_redacted(
    ledger_url: str, state_dir: Path
) -> None:
    planted = fresh(NAMES[-1])
    db = state_dir / "ledger.sqlite3"
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    _hook_write(db, "run-1", _checked(planted))
    rows = _rows(db)
    assert len(rows) == 2
    assert not any(planted.secret in str(row) for row in rows)
    assert any(f"[redacted:{planted.kind}]" in str(row) for row in rows)
    async with open_ledger(ledger_url) as ledger:
        assert (await ledger.verify_run("run-1")).ok


@only("sqlite")
async def test_the_hooks_direct_write_refuses_a_secret_it_cannot_redact(
    ledger_url: str, state_dir: Path
) -> None:
    planted = fresh("github")
    db = state_dir / "ledger.sqlite3"
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
    before = _rows(db)
    with pytest.raises(SecretRefused) as caught:
        _hook_write(db, "run-1", event("permission_checked", input_refs=(planted.text,)))
    assert caught.value.code == "ledger_secret_refused"
    assert "events.0.input_refs.0" in caught.value.message
    assert planted.secret not in str(caught.value)
    assert _rows(db) == before


async def test_a_redacted_target_longer_than_its_bound_is_cut_to_the_bound(
    ledger_url: str,
) -> None:
    planted = fresh("aws")  # the marker is longer than the key it replaces
    scope = "a" * (2_048 - len(planted.text) - 1) + "/" + planted.text
    decision = {"decision": "allow", "capability": "repository.read", "scope": scope}
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await ledger.record_events(
            "run-1", [event("permission_checked", permission_decision=decision)]
        )
        stored = (await ledger.page_trace("run-1", limit=10)).events[-1]
    assert isinstance(stored, TraceRecord)
    assert stored.permission_decision is not None
    kept = str(stored.permission_decision["scope"])
    assert kept == (scope[: -len(planted.text)] + "[redacted:aws-access-key]")[:2_048]
    assert len(kept) == 2_048
