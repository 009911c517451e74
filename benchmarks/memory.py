"""Server memory: idle RSS after start, and peak RSS holding many finished and active runs.

One ``telic serve`` over stdio (official client). After ``initialize`` and ``tools/list`` its
RSS is the idle figure. Then, through the tools only, ``--finished`` runs are driven to
completion (report_only, the shortest happy path; ``--concurrency`` at a time over the one
session) and ``--active`` runs are started and left open after grounding. The server's current
and peak RSS (``/proc/<pid>/status`` VmRSS / VmHWM) are read after each stage.

    .venv/bin/python benchmarks/memory.py [--finished 1000] [--active 50]

Target (issue 10): idle server ≤ 80 MB RSS.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _mcp import REQUEST, FastWorkspace, children_of, emit, full_run, rss_kib
from mcp import Client

from telic.demo import RunDriver, TelicTools, stdio_parameters


def _server_pid() -> int:
    (pid,) = children_of(os.getpid())
    return pid


def _mb(kib: dict[str, int]) -> dict[str, float]:
    return {"rss_mb": round(kib["VmRSS"] / 1024, 1), "peak_rss_mb": round(kib["VmHWM"] / 1024, 1)}


async def main(finished: int, active: int, concurrency: int) -> None:
    """Measure and print the JSON result."""
    stages: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as tmp:
        workspace = FastWorkspace(Path(tmp) / "repo")
        async with Client(stdio_parameters(workspace.root, Path(tmp) / "state")) as client:
            await client.list_tools()
            pid = _server_pid()
            stages["idle"] = _mb(rss_kib(pid))
            tools = TelicTools(client)
            began = time.perf_counter()
            remaining = [finished]

            async def finish_runs() -> None:
                while remaining[0] > 0:
                    remaining[0] -= 1
                    await full_run(tools, "report_only", workspace)

            async with anyio.create_task_group() as tg:
                for _ in range(concurrency):
                    tg.start_soon(finish_runs)
            stages["finished_runs"] = _mb(rss_kib(pid)) | {
                "runs": finished,
                "seconds": round(time.perf_counter() - began, 1),
            }
            for _ in range(active):
                driver = await RunDriver.start(tools, "analyze_only", REQUEST, "Find it")
                await driver.ground()
            stages["with_active_runs"] = _mb(rss_kib(pid)) | {"active": active}
            listed = await tools.call("telic_list_runs", limit=100)
            stages["with_active_runs"]["listed"] = len(listed["runs"])
    emit({"benchmark": "memory", "server": stages})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, default=1000, help="finished runs (1000)")
    parser.add_argument("--active", type=int, default=50, help="active runs (50)")
    parser.add_argument("--concurrency", type=int, default=4, help="runs driven at once (4)")
    options = parser.parse_args()
    anyio.run(main, options.finished, options.active, options.concurrency)
