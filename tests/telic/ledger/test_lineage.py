"""A run's link to the run it follows (``prior_run_id``) is stored, listed and sealed.

The link is set when the run row is inserted and every later write keeps it; ``list_runs``
carries it for ``telic runs``; the run-row seal covers it, so clearing it or linking an unlinked
run outside Telic fails ``verify_run``.
"""

from __future__ import annotations

import pytest
from conftest import Sql
from ledgerkit import artifact, event, only, run_record, start, step

from telic._errors import UsageError
from telic.ledger import Ledger, NewArtifact, open_ledger

pytestmark = pytest.mark.anyio

PRIOR = "run-0"


async def _linked(ledger: Ledger) -> None:
    request = artifact("run-1-request", "UserMessage", producer="user")
    envelope = artifact("run-1", "RunEnvelope", producer="controller")
    assert isinstance(request, NewArtifact)
    record = run_record("run-1", prior_run_id=PRIOR)
    await ledger.create_run(record, request, envelope, [event("run_started")])


async def test_the_link_survives_every_step_and_is_listed(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _linked(ledger)
        new = run_record("run-1", 2, updated=1, prior_run_id=PRIOR)
        await ledger.commit_step("run-1", 1, new, [artifact("a-1")], [event()])
        run = await ledger.get_run("run-1")
        assert run.prior_run_id == PRIOR
        assert run.to_wire()["priorRunId"] == PRIOR
        (summary,) = await ledger.list_runs()
        assert summary.prior_run_id == PRIOR
        assert (await ledger.verify_run("run-1")).ok


async def test_a_step_cannot_change_the_link(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _linked(ledger)
        with pytest.raises(UsageError, match="prior_run_id of a run cannot change"):
            await step(ledger, "run-1", 1, [artifact("a-1")], [event()])  # a row without it
        assert (await ledger.get_run("run-1")).prior_run_id == PRIOR


async def test_a_run_that_asked_for_no_addition_has_1_0_keys_only(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        wire = (await ledger.get_run("run-1")).to_wire()
        assert not {"priorRunId", "topology", "escalationCount"} & set(wire)
        (summary,) = await ledger.list_runs()
        assert summary.prior_run_id is None
        assert not {"priorRunId", "topology"} & set(summary.to_wire())


@only("sqlite", "postgres")
@pytest.mark.parametrize("value", [None, "run-9"], ids=["cleared", "relinked"])
async def test_a_link_changed_outside_telic_fails_verify(
    ledger_url: str, raw_sql: Sql, value: str | None
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _linked(ledger)
        assert (await ledger.verify_run("run-1")).ok
    await raw_sql("UPDATE runs SET prior_run_id = ? WHERE run_id = 'run-1'", (value,))
    async with open_ledger(ledger_url) as ledger:
        report = await ledger.verify_run("run-1")
    assert not report.ok
    assert report.first_broken is not None
    assert report.first_broken.kind == "run"
