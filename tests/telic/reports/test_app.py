"""The web view: ``/`` leads to ``/runs``; the index tells runs apart and filters them; a run's
page is its report followed by its whole trace."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from telic.ledger import Ledger, open_ledger
from telic.reports import reports_app, root_redirect

from .recorded import cancelled, completed, fixed_clock, partial

pytestmark = pytest.mark.anyio


def _client(ledger: Ledger) -> httpx2.AsyncClient:
    runs = reports_app(lambda: ledger, token=None, prefix="", clock=fixed_clock())
    app = Starlette(routes=[Mount("/runs", app=runs), root_redirect("/runs/")])
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://test", follow_redirects=True
    )


async def test_the_root_leads_to_the_index_of_runs() -> None:
    async with open_ledger("memory://") as ledger, _client(ledger) as client:
        root = await client.get("/", follow_redirects=False)
        assert root.status_code == 307
        assert root.headers["location"] == "/runs/"
        assert "<h1>Runs</h1>" in (await client.get("/")).text


async def test_the_index_shows_each_runs_request_mode_status_time_and_repository() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with _client(ledger) as client:
            index = (await client.get("/runs")).text
    assert f'<a href="/runs/{run_id}">Fix the failing parser in src</a>' in index
    assert '<code class="nowrap">analyze_only</code>' in index
    assert "<td><code>/repo</code></td>" in index
    assert '<span class="pill good" title="completed">Completed</span>' in index
    assert '<time class="nowrap" datetime="2026-01-01T00:00:14.000Z">' in index
    assert "2026-01-01 00:00:14 UTC</time>" in index
    assert "1 shown of the newest 1." in index


async def test_the_index_filters_by_status_and_by_mode() -> None:
    async with open_ledger("memory://") as ledger:
        done, stopped, halfway = (
            await completed(ledger),
            await cancelled(ledger),
            await partial(ledger),
        )
        async with _client(ledger) as client:
            by_status = (await client.get("/runs", params={"status": "cancelled"})).text
            by_mode = (await client.get("/runs", params={"mode": "fix_only"})).text
            both = (await client.get("/runs", params={"status": "", "mode": ""})).text
    assert stopped in by_status
    assert done not in by_status
    assert halfway not in by_status
    assert '<option value="cancelled" selected>Cancelled</option>' in by_status
    assert "No runs match these filters." in by_mode
    assert all(run in both for run in (done, stopped, halfway))


@pytest.mark.parametrize(
    ("query", "why"),
    [({"status": "done"}, "status must be one of"), ({"mode": "yolo"}, "mode must be one of")],
)
async def test_an_unknown_filter_is_refused_and_named(query: dict[str, str], why: str) -> None:
    async with open_ledger("memory://") as ledger, _client(ledger) as client:
        refused = await client.get("/runs", params=query)
    assert refused.status_code == 400
    assert why in refused.text


async def test_a_runs_page_is_its_report_then_its_whole_trace() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        events = (await ledger.page_trace(run_id, 0, 500)).events
        async with _client(ledger) as client:
            page = (await client.get(f"/runs/{run_id}")).text
            markdown = (await client.get(f"/runs/{run_id}", params={"format": "md"})).text
    report, trace = page.split('<main class="trace">')
    assert 'id="timeline"' in report
    assert trace.count("<tr><td>") == len(events)
    assert "accepted frame-1" in trace
    assert "phase_submitted</code></td><td>phase_submitted" not in trace
    assert '<main class="trace">' not in markdown
