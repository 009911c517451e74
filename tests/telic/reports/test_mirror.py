"""The report mirror: campaign reports shown read-only, each in its honest state, with its
provenance (campaign, spine prefix) on the page."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from telic.cli import main
from telic.reports import mirror_app, read_mirror, render_mirror_report

from .mirror import LOOP_TEXT, full_mirror, write_report

pytestmark = pytest.mark.anyio


def _client(folder: Path) -> httpx2.AsyncClient:
    app = Starlette(routes=[Mount("/reports", app=mirror_app(folder))])
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://test", follow_redirects=True
    )


async def test_a_present_report_is_shown_escaped_with_its_provenance(tmp_path: Path) -> None:
    entries = await read_mirror(full_mirror(tmp_path))
    loop = next(e for e in entries if e.name == "loop-c-2026-11")
    assert loop.artifact.status == "present"
    assert (loop.campaign, loop.spine_prefix) == ("c-2026-11", "3f2a9c")
    page = render_mirror_report(loop)
    assert "<b>two</b>" not in page
    assert "&lt;b&gt;two&lt;/b&gt; converged." in page
    assert "<dt>Campaign</dt><dd><code>c-2026-11</code></dd>" in page
    assert "<dt>Spine prefix</dt><dd><code>3f2a9c</code></dd>" in page
    assert 'data-report-status="present"' in page
    assert LOOP_TEXT.rstrip("\n") in render_mirror_report(loop, "md")


async def test_a_stale_report_is_shown_under_its_reason(tmp_path: Path) -> None:
    entries = await read_mirror(full_mirror(tmp_path))
    synthesis = next(e for e in entries if e.artifact.kind == "campaign_synthesis")
    assert synthesis.artifact.status == "stale"
    page = render_mirror_report(synthesis)
    assert "stale: two loops finished after it was generated" in page
    assert "The spine holds." in page


async def test_an_expected_report_missing_from_the_mirror_is_absent(tmp_path: Path) -> None:
    write_report(tmp_path, "loop-only", "loop_report", LOOP_TEXT)
    entries = await read_mirror(tmp_path)
    assert [(e.name, e.artifact.status) for e in entries] == [
        ("loop-only", "present"),
        ("campaign_synthesis", "absent"),
    ]
    page = render_mirror_report(entries[1])
    assert "Not generated yet" in page
    assert "no report of this kind is in the mirror" in page
    assert 'id="report-text"' not in page


async def test_a_descriptor_whose_file_is_gone_is_absent_and_says_which(tmp_path: Path) -> None:
    write_report(tmp_path, "loop", "loop_report", None, digest_of=LOOP_TEXT)
    (entry, _) = await read_mirror(tmp_path)
    assert entry.artifact.status == "absent"
    assert entry.problem == "the descriptor names loop.md, which is not in the mirror"


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("edit", "the file's bytes do not match its sha256"),
        ("descriptor", "the descriptor is not JSON"),
        ("provenance", "the descriptor has no campaign or spinePrefix (its provenance)"),
        ("escape", "the file cannot be read (it leaves the mirror folder)"),
    ],
)
async def test_a_report_that_does_not_verify_is_invalid_and_not_shown(
    tmp_path: Path, damage: str, problem: str
) -> None:
    mirror = tmp_path / "mirror"
    write_report(
        mirror, "loop", "loop_report", LOOP_TEXT, campaign=None if damage == "provenance" else "c-1"
    )
    if damage == "edit":
        (mirror / "loop.md").write_text(LOOP_TEXT.replace("two", "all"), encoding="utf-8")
    elif damage == "descriptor":
        (mirror / "loop.report.json").write_text("{not json", encoding="utf-8")
    elif damage == "escape":
        (tmp_path / "outside.md").write_text(LOOP_TEXT, encoding="utf-8")
        raw = json.loads((mirror / "loop.report.json").read_text(encoding="utf-8"))
        (mirror / "loop.md").unlink()
        (mirror / "loop.md").symlink_to(tmp_path / "outside.md")
        (mirror / "loop.report.json").write_text(json.dumps(raw), encoding="utf-8")
    entry = next(e for e in await read_mirror(mirror) if e.name == "loop")
    assert entry.artifact.status == "invalid"
    assert entry.problem == problem
    page = render_mirror_report(entry)
    assert "converged" not in page
    assert f"invalid: {problem}" in page.replace("&#x27;", "'")


async def test_the_app_lists_the_mirror_and_serves_each_report(tmp_path: Path) -> None:
    async with _client(full_mirror(tmp_path)) as client:
        index = await client.get("/reports/")
        loop = await client.get("/reports/loop-c-2026-11")
        markdown = await client.get("/reports/loop-c-2026-11", params={"format": "md"})
        missing = await client.get("/reports/nope")
    assert index.status_code == 200
    assert 'href="/reports/loop-c-2026-11"' in index.text
    assert index.text.count("<tr><td>") == 2
    assert loop.status_code == 200
    assert "Three loops ran" in loop.text
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert missing.status_code == 404
    assert "The mirror has no report <code>nope</code>" in missing.text


async def test_the_app_says_so_when_the_mirror_folder_is_absent(tmp_path: Path) -> None:
    async with _client(tmp_path / "never-mirrored") as client:
        index = await client.get("/reports/")
    assert index.status_code == 404
    assert 'id="mirror-absent"' in index.text


def test_telic_report_mirror_lists_and_shows_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = str(full_mirror(tmp_path / "mirror"))
    assert main(["report", "--mirror", mirror, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["reports"]
    assert [(r["name"], r["status"], r["campaign"]) for r in listed] == [
        ("loop-c-2026-11", "present", "c-2026-11"),
        ("synthesis-c-2026-11", "stale", "c-2026-11"),
    ]
    assert main(["report", "loop-c-2026-11", "--mirror", mirror]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("# loop\\_report `loop-c-2026-11`")
    assert "- Spine prefix: `3f2a9c`" in shown
    assert "Three loops ran" in shown


def test_telic_report_mirror_refuses_a_missing_folder_and_an_unknown_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--mirror", str(tmp_path / "none")]) == 2
    assert (
        f"report mirror {tmp_path / 'none'} is not a folder that exists" in capsys.readouterr().err
    )
    mirror = str(full_mirror(tmp_path / "mirror"))
    assert main(["report", "nope", "--mirror", mirror]) == 3
    assert f"the report mirror {mirror} has no report 'nope'" in capsys.readouterr().err
