"""Telic over MCP stdio, this checkout against another version, interleaved run by run.

The other version is a source tree (``--against DIR``: another checkout of the project, for
instance ``git worktree add ../telic-before <commit>``) or a commit (``--base REV``, default
``HEAD``: its ``telic``, ``packets`` and ``actors`` are unpacked from ``git archive`` into a
temporary directory). Its three packages are put first on the server's ``PYTHONPATH``, with this
checkout's installed dependencies. Per session, two ``telic serve`` processes run at once, each
with its own state directory (SQLite, the default ledger) on one demo repository, and the
official client drives the five happy paths on both, alternating which side goes first: each
side's very first run is a fresh session's (the schemas' notation, the lazily imported modules:
``first_run``), then for each mode one warm-up run and ``--runs`` rounds of one run per side.
A loaded machine slows both sides alike, so the ratio holds when the absolute figures do not.

Each side reports per mode the wall time per run, per call by tool name and the server's CPU
time per call (``/proc/<pid>/task/*/schedstat``, including its worker threads but not the git
processes it starts), and the median of that CPU time across each single call by kind (the tool,
and for ``telic_submit_artifact`` the artifact type) over every mode: what a call of each kind
costs the server, and what the average is made of; ``*_event_loop`` is the share of the server's
main thread, where the SDK, the actors, the controller and the rules run (the rest is SQLite's
thread, committing, and the worker threads). ``ratio`` is theirs / ours of the run
medians, ``cpu_ratio`` that of the CPU per call (above 1: ours is faster). ``--base HEAD``
against an unchanged tree shows the noise alone.

    .venv/bin/python benchmarks/mcp_ab.py [--base REV | --against DIR] [--runs 20] [--sessions 1]
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, TimedTools, children_of, cpu_seconds, emit, full_run, stats
from mcp import Client

from telic.demo import MODES, stdio_parameters

SIDES = ("ours", "theirs")


_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("telic", "packets", "actors")


def _export(rev: str, into: Path) -> Path:
    """Unpack ``rev``'s three packages into ``into`` and compile them, as an install would."""
    archive = subprocess.run(
        ["git", "archive", rev, *_PACKAGES], cwd=_ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True)
    return into


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


async def _session(
    workspace: FastWorkspace,
    state: Path,
    envs: dict[str, dict[str, str]],
    runs: int,
    samples: dict[str, dict[str, Any]],
) -> None:
    """One pair of fresh servers: each side's first run, then every mode's timed runs."""
    async with AsyncExitStack() as stack:
        opened = {
            side: await _open(stack, workspace.root, state / f"state-{side}", envs[side])
            for side in SIDES
        }
        for side in SIDES:
            began = time.perf_counter()
            await full_run(TimedTools(opened[side][0]), "analyze_only", workspace)
            samples[side]["first_run"].append(time.perf_counter() - began)
        for mode in MODES:
            tools = {side: TimedTools(*opened[side]) for side in SIDES}
            for side in SIDES:
                await full_run(tools[side], mode, workspace)  # warm-up
                tools[side].calls.clear()
            cpu = dict.fromkeys(SIDES, 0.0)
            for index in range(runs):
                order = SIDES if index % 2 == 0 else SIDES[::-1]
                for side in order:
                    pid = opened[side][1]
                    used = cpu_seconds(pid)
                    began = time.perf_counter()
                    await full_run(tools[side], mode, workspace)
                    samples[side]["runs"].setdefault(mode, []).append(time.perf_counter() - began)
                    cpu[side] += cpu_seconds(pid) - used
            for side in SIDES:
                got = samples[side]
                got["cpu"][mode] = got["cpu"].get(mode, 0.0) + cpu[side]
                got["calls"][mode] = got["calls"].get(mode, 0) + len(tools[side].calls)
                for name, times in tools[side].by_tool().items():
                    got["tools"].setdefault(mode, {}).setdefault(name, []).extend(times)
                for kind, used_per_call in tools[side].cpu_by_kind().items():
                    got["kinds"].setdefault(kind, []).extend(used_per_call)
                for kind, used_per_call in tools[side].cpu_by_kind(loop=True).items():
                    got["loop_kinds"].setdefault(kind, []).extend(used_per_call)


async def main(against: Path | None, base: str, runs: int, sessions: int) -> None:
    """Measure both sides and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-ab-") as tmp:
        root = Path(tmp)
        tree = against if against is not None else _export(base, root / "base")
        workspace = FastWorkspace(root / "repo")
        envs: dict[str, dict[str, str]] = {
            "ours": {},
            "theirs": {"PYTHONPATH": _source_path(tree)},
        }
        samples: dict[str, dict[str, Any]] = {
            side: {"first_run": [], "runs": {}, "cpu": {}, "calls": {}, "tools": {}}
            | {"kinds": {}, "loop_kinds": {}}
            for side in SIDES
        }
        for number in range(sessions):
            await _session(workspace, root / f"session-{number}", envs, runs, samples)
    results = {
        side: {
            mode: {
                "calls_per_run": got["calls"][mode] // (runs * sessions),
                "run": stats(got["runs"][mode]),
                "server_cpu_ms_per_call": round(1e3 * got["cpu"][mode] / got["calls"][mode], 3),
                "per_tool": {name: stats(t) for name, t in got["tools"][mode].items()},
            }
            for mode in MODES
        }
        for side, got in samples.items()
    }
    by_kind, loop_by_kind = (
        {
            side: {kind: stats(used)["median_ms"] for kind, used in sorted(got[key].items())}
            for side, got in samples.items()
        }
        for key in ("kinds", "loop_kinds")
    )
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
            "against": str(against) if against is not None else f"commit {base}",
            "runs_per_mode": runs,
            "sessions": sessions,
            "first_run": {side: stats(samples[side]["first_run"]) for side in SIDES},
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
            "server_cpu_ms_per_call_by_kind": {
                kind: {
                    "ours": by_kind["ours"][kind],
                    "theirs": by_kind["theirs"].get(kind),
                    "ours_event_loop": loop_by_kind["ours"][kind],
                    "theirs_event_loop": loop_by_kind["theirs"].get(kind),
                    "calls_per_round": len(samples["ours"]["kinds"][kind]) // (runs * sessions),
                }
                for kind in by_kind["ours"]
            },
            "sides": results,
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    other = parser.add_mutually_exclusive_group()
    other.add_argument("--against", type=Path, help="the other source tree")
    other.add_argument("--base", default="HEAD", help="the other version, a commit (HEAD)")
    parser.add_argument("--runs", type=int, default=20, help="rounds per mode (default 20)")
    parser.add_argument("--sessions", type=int, default=1, help="fresh server pairs (default 1)")
    options = parser.parse_args()
    anyio.run(main, options.against, options.base, options.runs, options.sessions)
