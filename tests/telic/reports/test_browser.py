"""The HTML report in a real headless Chromium, served over HTTP by the reports app.

The app runs under uvicorn on a free loopback port in a thread; Chromium (Debian's package, see
``.ci/chromium.sh``) loads the page with ``--dump-dom`` and ``--screenshot`` and logs console
messages to stderr. Without chromium the test is skipped locally and fails in CI (``CI=true``).
Set ``TELIC_REPORT_SCREENSHOT=<path>`` to keep the screenshot (``docs/report-screenshot.png``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import uvicorn

from telic.ledger import Ledger, open_ledger
from telic.reports import reports_app
from tests.telic.reports.recorded import completed, fixed_clock

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


def _record(url: str) -> str:
    async def main() -> str:
        async with open_ledger(url) as ledger:
            return await completed(ledger)

    return anyio.run(main)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Serve a recorded run's report from a SQLite ledger; yield (report URL, run id)."""
    url = f"sqlite:///{tmp_path / 'state' / 'ledger.sqlite3'}"
    run_id = _record(url)
    opened: list[Ledger] = []
    holder = open_ledger(url)  # kept referenced: the ledger lives as long as the server

    async def provider() -> Ledger:
        if not opened:  # opened inside the server's event loop, on first use
            opened.append(await holder.__aenter__())
        return opened[0]

    app = reports_app(provider, token=None, clock=fixed_clock())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/runs/{run_id}", run_id
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _run_chromium(binary: str, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_served_report_renders_in_headless_chromium(served: tuple[str, str]) -> None:
    binary = _chromium()
    url, run_id = served
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
    html = dom.stdout
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
        line
        for line in (dom.stderr + picture.stderr).splitlines()
        if re.search(r"CONSOLE|Uncaught|Refused to", line)
    ]
    assert console == []
