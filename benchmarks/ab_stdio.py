"""Before and after in one invocation: a commit's ``telic`` against the working tree's, over stdio.

``git archive REV telic`` is unpacked into a temporary directory, and each round starts one
``telic serve`` per side (the other side's ``telic`` first on ``PYTHONPATH``), alternating which
goes first, so that both sides see the same load. In each server: one analyze_only run first
(a fresh session: the schemas' notation, the lazily imported modules), then for each of the five
modes a warm-up run and ``--runs`` timed runs. Reported per side: the fresh session's first run,
every later run, ``telic_submit_artifact`` and ``telic_ground_context`` wall times, and the
server's CPU time per call (from ``/proc``, less sensitive to the machine's load than wall time).

    .venv/bin/python benchmarks/ab_stdio.py [--base REV] [--rounds 4] [--runs 3]

``--base`` defaults to ``HEAD``, which against an unchanged tree shows the noise alone. Nothing
is appended to ``benchmarks/README.md``; compare the two sides of one output only.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, TimedTools, cpu_seconds, emit, full_run, server_pid, stats
from mcp import Client

from telic.cli import MODES, stdio_parameters

_ROOT = Path(__file__).resolve().parent.parent


def _export(rev: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", rev, "telic"], cwd=_ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "telic")], check=True)


async def _side(env: dict[str, str], workspace: FastWorkspace, state: Path, runs: int) -> Any:
    got: dict[str, list[float]] = {"first_run": [], "run": [], "submit": [], "ground": []}
    cpu_per_call: list[float] = []
    async with Client(stdio_parameters(workspace.root, state, env=env)) as client:
        server = server_pid()
        assert server is not None
        began = time.perf_counter()
        await full_run(TimedTools(client), "analyze_only", workspace)
        got["first_run"].append(time.perf_counter() - began)
        for mode in MODES:
            tools = TimedTools(client)
            await full_run(tools, mode, workspace)  # warm-up
            tools.calls.clear()
            cpu = cpu_seconds(server)
            for _ in range(runs):
                began = time.perf_counter()
                await full_run(tools, mode, workspace)
                got["run"].append(time.perf_counter() - began)
            cpu_per_call.append((cpu_seconds(server) - cpu) / len(tools.calls))
            by_tool = tools.by_tool()
            got["submit"] += by_tool["telic_submit_artifact"]
            got["ground"] += by_tool.get("telic_ground_context", [])
    return got, cpu_per_call


async def main(base: str, rounds: int, runs: int) -> None:
    """Measure both sides and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-ab-") as name:
        tmp = Path(name)
        _export(base, tmp / "base")
        sides = {"base": {"PYTHONPATH": str(tmp / "base")}, "tree": {}}
        walls: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        workspace = FastWorkspace(tmp / "repo")
        for number in range(rounds):
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for side in order:
                got, per_call = await _side(sides[side], workspace, tmp / f"{side}-{number}", runs)
                for key, values in got.items():
                    walls[side].setdefault(key, []).extend(values)
                cpu[side] += per_call
    emit(
        {
            "benchmark": "ab_stdio",
            "base": base,
            "rounds": rounds,
            "runs_per_mode": runs,
            "sides": {
                side: {
                    **{key: stats(values) for key, values in walls[side].items()},
                    "server_cpu_per_call": stats(cpu[side]),
                }
                for side in sides
            },
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the commit to compare with (HEAD)")
    parser.add_argument("--rounds", type=int, default=4, help="servers per side (default 4)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per mode (default 3)")
    arguments = parser.parse_args()
    anyio.run(main, arguments.base, arguments.rounds, arguments.runs)
