"""Telic over MCP stdio, this checkout against another source tree, interleaved run by run.

Two ``telic serve`` processes run at once, each with its own state directory (SQLite, the
default ledger) on one demo repository: ``ours`` from this checkout, ``theirs`` from the source
tree ``--against`` names (another checkout of the project, for instance
``git worktree add ../telic-before <commit>``; its ``telic``, ``packets`` and ``actors`` are put
first on the server's ``PYTHONPATH``, with this checkout's installed dependencies). The official
client drives the five happy paths on both, alternating which side goes first: for each mode,
``--runs`` rounds of one run on each side after one warm-up run each. A loaded machine slows
both sides alike, so the ratio holds when the absolute figures do not.

Each side reports per mode the wall time per run, per call by tool name and the server's CPU
time per call (``/proc/<pid>/task/*/schedstat``, including its worker threads but not the git
processes it starts). ``ratio`` is theirs / ours of the run medians, ``cpu_ratio`` that of the
CPU per call (above 1: ours is faster).

    .venv/bin/python benchmarks/mcp_ab.py --against DIR [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, TimedTools, children_of, emit, full_run, stats
from mcp import Client

from telic.cli import MODES, stdio_parameters

SIDES = ("ours", "theirs")


def _cpu_seconds(pid: int) -> float:
    """CPU time ``pid``'s threads have run so far, to the nanosecond (Linux ``schedstat``).

    Finer than ``/proc/<pid>/stat``'s clock ticks (10 ms here, several times a call's cost).
    """
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def _source_path(tree: Path) -> str:
    """The ``PYTHONPATH`` that serves ``tree``'s Telic and its two sibling distributions."""
    entries = [tree, tree / "packets", tree / "actors"]
    return os.pathsep.join(str(entry.resolve()) for entry in entries)


async def _open(
    stack: AsyncExitStack, root: Path, state: Path, env: dict[str, str]
) -> tuple[Any, int]:
    """A connected client and the pid of the server it spawned."""
    before = set(children_of(os.getpid()))
    client = await stack.enter_async_context(Client(stdio_parameters(root, state, env=env)))
    spawned = [pid for pid in children_of(os.getpid()) if pid not in before]
    if len(spawned) != 1:
        raise RuntimeError(f"expected one new server process, found {spawned}")
    return client, spawned[0]


async def main(against: Path, runs: int) -> None:
    """Measure both sides and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-ab-") as tmp:
        base = Path(tmp)
        workspace = FastWorkspace(base / "repo")
        envs = {"ours": {}, "theirs": {"PYTHONPATH": _source_path(against)}}
        results: dict[str, dict[str, Any]] = {side: {} for side in SIDES}
        async with AsyncExitStack() as stack:
            opened = {
                side: await _open(stack, workspace.root, base / f"state-{side}", envs[side])
                for side in SIDES
            }
            for mode in MODES:
                tools = {side: TimedTools(opened[side][0]) for side in SIDES}
                walls: dict[str, list[float]] = {side: [] for side in SIDES}
                cpu = dict.fromkeys(SIDES, 0.0)
                for side in SIDES:
                    await full_run(tools[side], mode, workspace)  # warm-up
                    tools[side].calls.clear()
                for index in range(runs):
                    order = SIDES if index % 2 == 0 else SIDES[::-1]
                    for side in order:
                        pid = opened[side][1]
                        used = _cpu_seconds(pid)
                        began = time.perf_counter()
                        await full_run(tools[side], mode, workspace)
                        walls[side].append(time.perf_counter() - began)
                        cpu[side] += _cpu_seconds(pid) - used
                for side in SIDES:
                    calls = tools[side].calls
                    results[side][mode] = {
                        "calls_per_run": len(calls) // runs,
                        "run": stats(walls[side]),
                        "server_cpu_ms_per_call": round(1e3 * cpu[side] / len(calls), 3),
                        "per_tool": {n: stats(t) for n, t in tools[side].by_tool().items()},
                    }
    ratio = {
        mode: round(
            results["theirs"][mode]["run"]["median_ms"] / results["ours"][mode]["run"]["median_ms"],
            3,
        )
        for mode in MODES
    }
    emit(
        {
            "benchmark": "mcp_ab",
            "against": str(against),
            "runs_per_mode": runs,
            "run_median_ms": {
                side: {mode: results[side][mode]["run"]["median_ms"] for mode in MODES}
                for side in SIDES
            },
            "server_cpu_ms_per_call": {
                side: {mode: results[side][mode]["server_cpu_ms_per_call"] for mode in MODES}
                for side in SIDES
            },
            "ratio_theirs_over_ours": ratio,
            "cpu_ratio_theirs_over_ours": {
                mode: round(
                    results["theirs"][mode]["server_cpu_ms_per_call"]
                    / results["ours"][mode]["server_cpu_ms_per_call"],
                    3,
                )
                for mode in MODES
            },
            "sides": results,
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other source tree")
    parser.add_argument("--runs", type=int, default=20, help="rounds per mode (default 20)")
    options = parser.parse_args()
    anyio.run(main, options.against, options.runs)
