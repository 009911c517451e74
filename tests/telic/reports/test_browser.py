"""The HTML report in a real headless Chromium, served by ``telic serve --http``.

A recorded run is written to a SQLite ledger in a state directory; ``telic serve --http`` runs as
a subprocess on a free loopback port over that state directory and serves the report at
``/runs/<id>``; Chromium (Debian's package, see ``.ci/chromium.sh``) loads the page with
``--dump-dom`` and ``--screenshot`` and logs console messages to stderr. Without chromium the
test is skipped locally and fails in CI (``CI=true``). Set ``TELIC_REPORT_SCREENSHOT=<path>``
to keep the screenshot (the README's picture is of the demo run instead: ``make screenshot``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest

from telic.demo import http_server
from telic.ledger import open_ledger
from tests.telic.reports.mirror import full_mirror, write_report
from tests.telic.reports.recorded import completed

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=3000",
]
TOKEN = "browser-test-token"


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is required in CI: run .ci/chromium.sh")
        pytest.skip("chromium is not installed (run .ci/chromium.sh)")
    return found


def _run_chromium(binary: str, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def anyio_backend() -> str:
    """The server is a subprocess; the driving side needs only one backend."""
    return "asyncio"


@pytest.mark.anyio
async def test_the_report_served_by_telic_serve_renders_in_headless_chromium(
    tmp_path: Path,
) -> None:
    binary = _chromium()
    state, repository = tmp_path / "state", tmp_path / "repo"
    repository.mkdir()
    async with open_ledger(f"sqlite:///{state / 'ledger.sqlite3'}") as ledger:
        run_id = await completed(ledger)
    async with http_server(repository, state) as mcp_url:
        url = mcp_url.removesuffix("/mcp") + f"/runs/{run_id}"
        dom, picture = await anyio.to_thread.run_sync(_render, binary, url)
    _check_page(dom.stdout, dom.stderr + picture.stderr, run_id)


@pytest.mark.anyio
@pytest.mark.parametrize("mirrored", [True, False], ids=["mirror-present", "mirror-absent"])
async def test_the_report_mirror_served_by_telic_serve_renders_in_headless_chromium(
    tmp_path: Path, mirrored: bool
) -> None:
    binary = _chromium()
    state, repository, mirror = tmp_path / "state", tmp_path / "repo", tmp_path / "mirror"
    repository.mkdir()
    if mirrored:
        full_mirror(mirror)
    else:  # a mirror that lacks the campaign synthesis and whose loop report was edited
        write_report(mirror, "loop", "loop_report", "# Loop\n", digest_of="# Other\n")
    async with http_server(
        repository, state, extra_args=["--reports-mirror", str(mirror)]
    ) as mcp_url:
        base = mcp_url.removesuffix("/mcp") + "/reports/"
        index, _ = await anyio.to_thread.run_sync(_render, binary, base)
        name = "synthesis-c-2026-11" if mirrored else "campaign_synthesis"
        page, picture = await anyio.to_thread.run_sync(_render, binary, base + name)
    assert "<h1>Campaign reports</h1>" in index.stdout
    html = page.stdout
    assert "<dt>Spine prefix</dt><dd><code>" in html
    if mirrored:
        assert index.stdout.count('<span class="pill good">present</span>') == 1
        assert 'data-report-status="stale"' in html
        assert "The spine holds." in html
    else:
        assert '<span class="pill bad">invalid</span>' in index.stdout
        assert '<span class="pill neutral">absent</span>' in index.stdout
        assert 'data-report-status="absent"' in html
        assert "Not generated yet" in html
    assert "<script" not in html
    console = [
        line
        for line in (page.stderr + picture.stderr).splitlines()
        if re.search(r"CONSOLE|Uncaught|Refused to", line)
    ]
    assert console == []


def _render(
    binary: str, url: str
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """Load ``url`` twice in fresh profiles: once dumping the DOM, once taking a screenshot."""
    with tempfile.TemporaryDirectory() as work:
        dom = _run_chromium(binary, str(Path(work) / "p1"), "--dump-dom", url)
        assert dom.returncode == 0, dom.stderr[-2000:]
        shot = Path(work) / "report.png"
        picture = _run_chromium(
            binary, str(Path(work) / "p2"), "--window-size=1280,2600", f"--screenshot={shot}", url
        )
        assert picture.returncode == 0, picture.stderr[-2000:]
        assert shot.stat().st_size > 10_000
        keep = os.environ.get("TELIC_REPORT_SCREENSHOT")
        if keep:
            shutil.copyfile(shot, keep)
    return dom, picture


def _check_page(html: str, logs: str, run_id: str) -> None:
    for element in (
        f"<h1>Run report <code>{run_id}</code></h1>",
        'id="terminal-status"',
        'data-report-status="present"',
        '<svg id="state-path"',
        'id="timeline-table"',
        'id="criteria-table"',
        'id="claims-table"',
        'id="verification-table"',
        'id="permissions-table"',
        'id="budgets-table"',
        'id="packets-table"',
        'id="digest"',
        'id="provenance"',
        'href="#artifact-evidence-1"',
        'id="artifact-evidence-1"',
    ):
        assert element in html, element
    assert "<script" not in html
    console = [
        line for line in logs.splitlines() if re.search(r"CONSOLE|Uncaught|Refused to", line)
    ]
    assert console == []
