"""Telic over MCP stdio with the official client: server start, full runs, per-call latency.

* ``start`` — spawn ``python -m telic serve`` and finish ``initialize``; ``start_to_list`` —
  spawn to the first ``tools/list`` answer. Each in a fresh process and state directory.
* ``runs`` — for each of the five modes, ``--runs`` complete happy-path runs (after one
  warm-up run) in one server: wall time per run, and per tool call by tool name.

The host is ``telic.cli.drive_mode`` (the test suite's driver); the host's own native work
(running the demo repository's tests) is recorded once and replayed, so it is not timed. Each
mode also reports the server process's CPU time per run and per call (the rest of the wall time
is the client, the pipes and waiting). ``--database-url memory://`` serves from the memory
ledger, which separates the ledger's cost from everything above it.

    .venv/bin/python benchmarks/mcp_stdio.py [--runs 20] [--starts 10] [--database-url URL]

Targets (issue 10, 2 cores): a run ≤ 65 ms median across the modes; ``telic_submit_artifact``
≤ 4 ms median; ``telic_ground_context`` ≤ 15 ms; start to first ``tools/list`` ≤ 400 ms.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, TimedTools, cpu_seconds, emit, full_run, server_pid, stats
from mcp import Client

from telic.demo import MODES, stdio_parameters


async def _start(root: Path, state: Path) -> tuple[float, float]:
    began = time.perf_counter()
    async with Client(stdio_parameters(root, state)) as client:
        initialized = time.perf_counter() - began
        await client.list_tools()
        listed = time.perf_counter() - began
    return initialized, listed


async def _runs(
    root: Path, state: Path, workspace: FastWorkspace, runs: int, database_url: str | None
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    params = stdio_parameters(root, state, database_url=database_url)
    async with Client(params) as client:
        server = server_pid()  # the server this client just spawned
        assert server is not None
        for mode in MODES:
            tools = TimedTools(client)
            await full_run(tools, mode, workspace)  # warm-up: first-call imports and caches
            tools.calls.clear()
            walls = []
            cpu = cpu_seconds(server)
            for _ in range(runs):
                began = time.perf_counter()
                await full_run(tools, mode, workspace)
                walls.append(time.perf_counter() - began)
            cpu = cpu_seconds(server) - cpu
            results[mode] = {
                "calls_per_run": len(tools.calls) // runs,
                "run": stats(walls),
                "server_cpu_ms_per_run": round(1e3 * cpu / runs, 3),
                "server_cpu_ms_per_call": round(1e3 * cpu / len(tools.calls), 3),
                "per_tool": {name: stats(times) for name, times in tools.by_tool().items()},
            }
    return results


async def main(runs: int, starts: int, database_url: str | None) -> None:
    """Measure and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as tmp:
        base = Path(tmp)
        workspace = FastWorkspace(base / "repo")
        initialized, listed = [], []
        for i in range(starts):
            a, b = await _start(workspace.root, base / f"start-{i}")
            initialized.append(a)
            listed.append(b)
        modes = await _runs(workspace.root, base / "state", workspace, runs, database_url)
    every_run = [m["run"]["median_ms"] for m in modes.values()]
    submit = [t for m in modes.values() for t in [m["per_tool"]["telic_submit_artifact"]]]
    emit(
        {
            "benchmark": "mcp_stdio",
            "runs_per_mode": runs,
            "ledger": database_url or "the server's default (SQLite in the state directory)",
            "start": stats(initialized),
            "start_to_list": stats(listed),
            "modes": modes,
            "median_of_mode_medians_ms": round(sorted(every_run)[len(every_run) // 2], 3),
            "submit_median_by_mode_ms": {
                mode: s["median_ms"] for mode, s in zip(modes, submit, strict=True)
            },
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per mode (default 20)")
    parser.add_argument("--starts", type=int, default=10, help="server starts (default 10)")
    parser.add_argument(
        "--database-url", default=None, help="the runs' ledger, e.g. memory:// (default SQLite)"
    )
    options = parser.parse_args()
    anyio.run(main, options.runs, options.starts, options.database_url)
