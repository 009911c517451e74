"""A serial host: every mode, end to end, through the official MCP client over stdio.

Starts ``telic serve`` as a subprocess for a fresh copy of the demo repository and drives one
complete run per mode (report_only, plan_only, analyze_only, fix_only, analyze_and_fix), as a
single-session host model would: next action → author artifact → submit. Checks its own results
and exits non-zero on any failure.

    make install && .venv/bin/python examples/serial_host.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client

from telic.demo import (
    MODES,
    DemoRepository,
    TelicTools,
    drive_mode,
    find_demo_repo,
    stdio_parameters,
)

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"


async def main() -> int:
    failures = 0
    with tempfile.TemporaryDirectory(prefix="telic-serial-") as scratch:
        for mode in MODES:
            base = Path(scratch) / mode
            repo = DemoRepository.create(find_demo_repo(), base / "repo")
            async with Client(stdio_parameters(repo.root, base / "state")) as client:
                tools = TelicTools(client)
                driver = await drive_mode(tools, mode, repo, request=REQUEST, goal="Fix paginate")
                verified = await tools.call("telic_verify_run", run_id=driver.run_id)
            fixed = repo.run_tests()[0] == 0
            ok = (
                driver.action.get("status") == "completed"
                and verified["intact"]
                and fixed == (mode in ("fix_only", "analyze_and_fix"))
            )
            failures += not ok
            print(
                f"{'ok ' if ok else 'BAD'} {mode:<16} version {driver.version:>2}, "
                f"{len(driver.log)} calls, tests {'pass' if fixed else 'fail'}"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
