"""Regenerate ``docs/report-screenshot.png``: the HTML report of a fresh ``telic demo`` run.

``make screenshot`` runs this. It runs the demo in a temporary folder, writes the run's HTML
report there, has headless Chromium (``.ci/chromium.sh`` installs it) photograph the top of the
page, and removes the folder. Nothing else is read or written.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio

from telic.demo import run_demo
from telic.ledger import open_ledger
from telic.reports import write_report

OUT = Path(__file__).resolve().parent / "report-screenshot.png"
WINDOW = "1280,1500"


async def _report(workdir: Path) -> Path:
    outcome = await run_demo(workdir=workdir)
    if outcome.status != "completed" or not outcome.intact:
        raise SystemExit(f"the demo did not complete ({outcome.status}); no screenshot taken")
    page = workdir / "report.html"
    async with open_ledger(
        f"sqlite://{outcome.state_dir}", repository_root=outcome.repository
    ) as ledger:
        await write_report(ledger, outcome.run_id, "html", page)
    return page


def main() -> int:
    """Take the screenshot; return the exit code."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("screenshot: chromium is not installed (run .ci/chromium.sh)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="telic-screenshot-") as scratch:
        work = Path(scratch)
        page = anyio.run(_report, work / "demo")
        done = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={work / 'profile'}",
                f"--window-size={WINDOW}",
                f"--screenshot={OUT}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if done.returncode != 0 or not OUT.is_file():
        print(f"screenshot: chromium failed ({done.returncode})", file=sys.stderr)
        return 1
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
