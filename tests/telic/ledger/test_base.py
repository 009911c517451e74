"""The ``Backend`` seam: a mutation is a probe and a pure plan, run as one transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from ledgerkit import artifact, event, start, step

from telic._errors import LedgerConflict, LimitExceeded
from telic.ledger import Commit
from telic.ledger._base import Backend, Plan, Probe, Probed, Selection
from telic.ledger._memory import MemoryBackend
from telic.ledger._paths import prepare_state_dir
from telic.ledger._plans import Ledger

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def opened(ledger_kind: str, ledger_url: str, state_dir: Path) -> AsyncIterator[Backend]:
    """The bare backend of the requested kind, holding one run at version 2 with four artifacts
    (request, envelope, an Evidence after no plan, a ScenarioSpec keyed ``frame-1``)."""
    backend: Backend
    if ledger_kind == "memory":
        backend = MemoryBackend()
    elif ledger_kind == "sqlite":
        from telic.ledger._sqlite import SqliteBackend

        folder = prepare_state_dir(state_dir, None)
        backend = await SqliteBackend.open(folder, folder / "ledger.sqlite3")
    else:
        from telic.ledger._postgres import PostgresBackend

        backend = await PostgresBackend.open(ledger_url)
    try:
        ledger = Ledger(backend)
        await start(ledger)
        scenario = artifact("spec-1", "ScenarioSpec", quota_key="frame-1")
        await step(ledger, "run-1", 1, [artifact("ev-1"), scenario], [event(event_id="e-1")])
        yield backend
    finally:
        await backend.aclose()


async def _stored(backend: Backend) -> tuple[int, int, int]:
    async with backend.read() as reader:
        rows = await reader.read_run("run-1", Selection(artifacts_after=0, events_after=0))
    assert rows is not None
    return rows.run.record.version, len(rows.artifacts), len(rows.events)


def _bump(probed: Probed, expected_version: int) -> Plan:
    """A plan that raises the run's version, fenced at ``expected_version``."""
    assert probed.run is not None
    record = replace(probed.run.record, version=probed.run.record.version + 1)
    return Plan(
        result=Commit(run=record, artifacts=(), events=()),
        run=replace(probed.run, record=record),
        expected_version=expected_version,
        conflict="the fence did not hold",
    )


async def test_a_probe_answers_what_the_plan_needs_from_one_read(
    ledger_kind: str, ledger_url: str, state_dir: Path
) -> None:
    async with opened(ledger_kind, ledger_url, state_dir) as backend:
        seen: list[Probed] = []

        def plan(probed: Probed) -> Plan:
            seen.append(probed)
            assert probed.run is not None
            return Plan(result=Commit(run=probed.run.record, artifacts=(), events=()))

        probe = Probe(
            artifact_ids=["new-1", *(f"new-{n}" for n in range(600)), "ev-1"],
            event_ids=[*(f"e-new-{n}" for n in range(1000)), "e-1"],  # past one IN list
            quota_keys=[("ScenarioSpec", "frame-1"), ("ScenarioSpec", "frame-2"), ("X", "frame-1")],
            evidence=("Evidence", "WorkPlan"),
        )
        await backend.mutate("run-1", probe, plan)
        (probed,) = seen
        assert probed.run is not None
        assert probed.run.record.version == 2
        assert set(probed.artifacts) == {"ev-1"}
        assert probed.artifacts["ev-1"].type == "Evidence"
        assert probed.event_ids == {"e-1"}
        assert probed.quota_keys == {("ScenarioSpec", "frame-1")}
        assert probed.evidence_since_plan == 1
        assert await _stored(backend) == (2, 4, 2)  # a plan without a run row writes nothing


async def test_a_fence_that_does_not_hold_fails_the_whole_transaction(
    ledger_kind: str, ledger_url: str, state_dir: Path
) -> None:
    async with opened(ledger_kind, ledger_url, state_dir) as backend:
        with pytest.raises(LedgerConflict, match="the fence did not hold"):
            await backend.mutate("run-1", Probe(), lambda probed: _bump(probed, 1))
        assert await _stored(backend) == (2, 4, 2)
        await backend.mutate("run-1", Probe(), lambda probed: _bump(probed, 2))
        assert await _stored(backend) == (3, 4, 2)


async def test_a_plan_that_raises_writes_nothing(
    ledger_kind: str, ledger_url: str, state_dir: Path
) -> None:
    async with opened(ledger_kind, ledger_url, state_dir) as backend:

        def refuse(probed: Probed) -> Plan:
            raise LimitExceeded("no room")

        with pytest.raises(LimitExceeded, match="no room"):
            await backend.mutate("run-1", Probe(artifact_ids=["ev-1"]), refuse)
        assert await _stored(backend) == (2, 4, 2)
        ledger = Ledger(backend)
        await step(ledger, "run-1", 2, [artifact("a-3")])  # the backend is still usable
        assert (await ledger.verify_run("run-1")).ok
