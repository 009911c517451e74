"""The report API: escaping, descriptors, files, and the read-only HTTP app with its token rule."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import httpx2
import pytest

from telic._errors import NotFound
from telic.ledger import Ledger, open_ledger
from telic.reports import (
    check_report,
    deciding_layer,
    load_run_report,
    render_html,
    render_index,
    render_markdown,
    render_report,
    reports_app,
    write_report,
)

from .recorded import GENERATED_AT, HOSTILE, completed, fixed_clock, partial, running

pytestmark = pytest.mark.anyio


async def test_untrusted_text_is_escaped_in_html_and_markdown() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    page = render_html(data)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page
    text = render_markdown(data)
    assert "<script" not in text.replace("\\<script", "")
    assert "\\<img src=x onerror=alert\\(1\\)\\>" in text
    assert HOSTILE not in text


async def test_the_report_states_terminal_status_decisions_and_provenance() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await partial(ledger)
        verify = await ledger.verify_run(run_id)
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    assert (data.mode, data.terminal_status, data.run_status) == (
        "analyze_only",
        "partial",
        "partial",
    )
    assert [(p.decision, p.deciding_layer) for p in data.permissions] == [
        ("ALLOW", "all layers (mode, authorization, node)"),
        ("DENY", "node"),
    ]
    assert data.provenance.chain_length == verify.records_checked
    assert data.provenance.generated_at == GENERATED_AT
    assert data.risks == ("Not everything was proven",)
    assert data.packets == ()
    assert data.digest == ""
    assert "No evidence packets in this run." in render_html(data)


def test_the_deciding_layer_is_read_from_the_recorded_reason() -> None:
    assert (
        deciding_layer(
            {"decision": "deny", "rationaleSummary": "x is explicitly denied by the mode layer"}
        )
        == "mode"
    )
    assert (
        deciding_layer({"decision": "deny", "rationaleSummary": "bad path"})
        == "target (before any layer)"
    )
    assert deciding_layer({"decision": "allow", "rationaleSummary": ""}) == "all layers"
    assert deciding_layer({"decision": "deny", "decidingLayer": "authorization"}) == "authorization"


async def test_written_reports_are_present_then_stale_then_invalid_when_edited(
    tmp_path: Path,
) -> None:
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)
        out = tmp_path / "report.md"
        missing, text = await check_report(ledger, run_id, out)
        assert (missing.status, text) == ("absent", None)
        written = await write_report(ledger, run_id, "md", out, clock=fixed_clock())
        assert written.status == "present"
        assert written.path == "report.md"
        assert written.source_refs[0].startswith(f"artifact://{run_id}/")
        assert (await check_report(ledger, run_id, out))[0].status == "present"
        await flow.submit("Evidence", flow.b.evidence())
        stale, _ = await check_report(ledger, run_id, out)
        assert stale.status == "stale"
        assert (
            stale.stale_reason == "the ledger has 2 newer records than the report covers (15 of 17)"
        )
        out.write_bytes(out.read_bytes().replace(b"failing", b"passing"))
        assert (await check_report(ledger, run_id, out))[0].status == "invalid"
        out.write_bytes(b"\xff\xfe")
        assert (await check_report(ledger, run_id, out))[0].status == "invalid"
        sealed = await render_report(ledger, run_id, "html", clock=fixed_clock())
        assert sealed.rstrip("\n").rsplit("\n", 1)[-1].startswith("<!-- telic-report {")
        with pytest.raises(NotFound):
            await render_report(ledger, "no-such-run")


def test_the_index_links_each_run_under_its_base() -> None:
    assert "No runs yet." in render_index([])


async def _client(ledger: Ledger, **kwargs: object) -> httpx2.AsyncClient:
    app = reports_app(lambda: ledger, clock=fixed_clock(), **kwargs)  # type: ignore[arg-type]
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://test")


async def test_the_app_serves_the_index_and_reports_in_both_formats() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with await _client(ledger, token=None) as client:
            index = await client.get("/runs")
            assert index.status_code == 200
            assert f'href="/runs/{run_id}"' in index.text
            page = await client.get(f"/runs/{run_id}")
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert "script-src" not in page.headers["content-security-policy"]
            assert 'data-report-status="present"' in page.text
            assert "<svg" in page.text
            md = await client.get(f"/runs/{run_id}", params={"format": "md"})
            assert md.headers["content-type"].startswith("text/markdown")
            assert md.text.startswith("> **Report present")
            assert (
                await client.get(f"/runs/{run_id}", params={"format": "pdf"})
            ).status_code == 400
            assert (await client.get("/runs/nope")).status_code == 404
            assert (await client.get("/runs/%3Cx%3E")).status_code == 404
            assert (await client.post("/runs")).status_code == 405


async def test_a_configured_token_is_required_on_every_route() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with await _client(ledger, token="s3cret") as client:
            for path in ("/runs", f"/runs/{run_id}"):
                refused = await client.get(path)
                assert refused.status_code == 401
                assert refused.headers["www-authenticate"].startswith("Bearer")
                wrong = await client.get(path, headers={"Authorization": "Bearer nope"})
                assert wrong.status_code == 401
                ok = await client.get(path, headers={"Authorization": "Bearer s3cret"})
                assert ok.status_code == 200


async def test_a_report_mirror_shows_absent_then_present_then_stale(tmp_path: Path) -> None:
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)

        async def provider() -> Ledger:
            return ledger

        app = reports_app(
            provider, token=None, reports_dir=tmp_path, prefix="", clock=fixed_clock()
        )
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
            absent = await client.get(f"/{run_id}")
            assert 'id="report-absent"' in absent.text
            assert "not generated yet" in absent.text
            await write_report(
                ledger, run_id, "html", tmp_path / f"{run_id}.html", clock=fixed_clock()
            )
            assert 'data-report-status="present"' in (await client.get(f"/{run_id}")).text
            await flow.submit("Evidence", flow.b.evidence())
            stale = await client.get(f"/{run_id}")
            assert 'data-report-status="stale"' in stale.text
            assert "2 newer records" in stale.text
            assert f'href="/{run_id}"' in (await client.get("/")).text


async def test_a_result_resting_on_the_hosts_word_about_a_command_says_so() -> None:
    from dataclasses import replace

    from telic.reports._model import SHELL_EXECUTE_NOTE

    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    assert data.verifications
    assert not any(v.host_attested for v in data.verifications)  # repository.read: observed
    assert "host's word" not in render_markdown(data) + render_html(data)
    by_command = replace(
        data,
        verifications=tuple(
            replace(v, capability="shell.execute", host_attested=True) for v in data.verifications
        ),
    )
    text, page = render_markdown(by_command), render_html(by_command)
    assert text.count("host's word") == 1
    section = text.split("## Verification", 1)[1].split("## Permission decisions", 1)[0]
    assert "host's word" in section  # next to the verification it qualifies
    assert 'id="verification-host-word"' in page
    assert 'id="permissions-host-word"' not in page
    assert SHELL_EXECUTE_NOTE.split(":")[0] in text
    permitted = replace(
        data, permissions=tuple(replace(p, host_attested=True) for p in data.permissions)
    )
    assert 'id="permissions-host-word"' in render_html(permitted)


async def test_the_terminal_report_is_the_markdown_without_markup_and_without_controls() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    hostile = dataclasses.replace(data, request="fix it\x1b]0;pwned\x07 \x1b[2J now\u202e|x")
    text = render_markdown(hostile, terminal=True)
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "\u202e" not in text
    assert "fix it\ufffd]0;pwned\ufffd \ufffd[2J now\ufffd\u00a6x" in text
    assert "<a id=" not in text
    assert "](#artifact-" not in text
    assert "**" not in text
    assert "\\_" not in text  # nothing escaped: a terminal shows Markdown as it is
    assert "<!-- telic-report" not in text  # not sealed: it is not a file
    markdown = render_markdown(data)
    assert "<a id=" in markdown
    assert "](#artifact-" in markdown
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        h for h in headings if h.startswith("## ")
    ]


async def test_the_html_report_lists_every_step_and_names_a_changed_one(tmp_path: Path) -> None:
    database = tmp_path / "state" / "ledger.sqlite3"
    async with open_ledger(f"sqlite:///{database}") as ledger:
        run_id = await completed(ledger)
        artifacts = await ledger.list_artifacts(run_id)
        frame = next(a for a in artifacts if a.type == "ProblemFrame")
        connection = sqlite3.connect(database)
        with connection:
            connection.execute(
                "UPDATE artifacts SET producer = 'user' WHERE run_id = ? AND artifact_id = ?",
                (run_id, frame.artifact_id),
            )
        connection.close()
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    html = render_html(data)
    assert sorted(s.artifact_ref for s in data.steps) == sorted(
        f"artifact://{run_id}/{a.artifact_id}" for a in artifacts
    )
    assert {s.artifact_ref.rsplit("/", 1)[1]: s.digest_status for s in data.steps}[
        frame.artifact_id
    ] == "mismatch"
    assert [s.digest_status for s in data.steps].count("ok") == len(artifacts) - 1
    assert '<section id="steps"><h2>Steps (replay)</h2>' in html
    assert html.count('<span class="pill bad">mismatch</span>') == 1


async def test_a_report_links_the_run_it_follows_and_the_runs_that_follow_it() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        data = await load_run_report(ledger, run_id, clock=fixed_clock())
    assert (data.prior_run_id, data.followed_by) == (None, ())
    assert "Follows" not in render_html(data)
    linked = dataclasses.replace(data, prior_run_id="run-0", followed_by=("run-2", "run-3"))
    page = render_html(linked)
    assert '<a class="prior-run" href="run-0"><code>run-0</code></a>' in page
    assert '<a class="followed-by" href="run-3"><code>run-3</code></a>' in page
    text = render_markdown(linked)
    assert "Follows run `run-0`, whose Evidence it may cite." in text
    assert "Followed by run `run-2`, `run-3`." in text
