"""Reports of recorded runs of every terminal status, and the viewer of every report status."""

from __future__ import annotations

import pytest

from telic.ledger import open_ledger
from telic.reports import describe_report, load_run_report, render, view_report

from .recorded import GENERATOR, RECORDERS, fixed_clock, running
from .snapshots import assert_snapshot

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("status", list(RECORDERS))
async def test_a_recorded_run_renders_exactly_its_snapshot(status: str) -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await RECORDERS[status](ledger)
        data = await load_run_report(ledger, run_id, clock=fixed_clock(), generator=GENERATOR)
    assert data.terminal_status == status
    assert_snapshot(f"{status}.md", render(data, "md"))
    assert_snapshot(f"{status}.html", render(data, "html"))


@pytest.mark.parametrize("fmt", ["md", "html"])
async def test_each_report_status_has_its_own_explicit_view(fmt: str) -> None:
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)
        before = await load_run_report(ledger, run_id, clock=fixed_clock(), generator=GENERATOR)
        written = render(before, fmt)  # type: ignore[arg-type]
        await flow.submit("Evidence", flow.b.evidence())
        after = await load_run_report(ledger, run_id, clock=fixed_clock(), generator=GENERATOR)
    cases = {
        "present": (before, written),
        "absent": (before, None),
        "stale": (after, written),
        "invalid": (before, written.replace("Fix the failing parser", "Fix the passing parser")),
    }
    for status, (data, text) in cases.items():
        artifact = describe_report(data, text, path=f"{run_id}.{fmt}")
        assert artifact.status == status
        assert_snapshot(f"view-{status}.{fmt}", view_report(artifact, text, fmt))  # type: ignore[arg-type]
