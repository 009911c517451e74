"""Ours and the original Telic side by side, in one invocation, interleaved: the host's view.

Each iteration spawns a fresh server per contender (over stdio, with the official MCP client),
times spawn → ``initialize`` and spawn → first ``tools/list``, then drives the five happy paths
in one session, ``report_only`` first (the first run after start), and records the wall time of
every run and every tool call, and the bytes of tool-result text each run returned. The
contenders alternate which goes first from one iteration to the next, so that a change in the
machine's load falls on both.

* ours: ``python -m telic serve`` with ``--ours-args`` appended (e.g. ``--ours-args=--resident``).
  With ``--resident`` every iteration is a fresh session of one resident server, started (and
  stopped) by the script outside the timings, with one state directory: the warm figures a host
  gets once the repository's server runs. The server's start is not in them (see
  ``benchmarks/startup.py`` for the cold one).
* the original, only when ``TELIC_ORIGINAL_CMD`` is set: its server command, split like a shell
  line; ``{repo}`` and ``{state}`` in it are replaced by the repository and a fresh state
  directory. It runs with the repository as its working directory and ``TELIC_REPOSITORY_ROOT``
  and ``TELIC_STATE_DIR`` set, as ours does.

Both are driven by ``telic.cli.drive_mode``, the scripted host the test suite keeps valid against
the Telic 1.0 wire; the host's native work (the demo repository's tests) is recorded once and
replayed. Without ``TELIC_ORIGINAL_CMD`` the script measures ours alone and prints no ratio.

    .venv/bin/python benchmarks/side_by_side.py [--iterations 20] [--no-readme]
    TELIC_ORIGINAL_CMD='node /opt/telic/cli.js serve' .venv/bin/python benchmarks/side_by_side.py

Prints JSON (every figure with median and p95, and each ratio original ÷ ours) and appends one
row per contender to ``benchmarks/README.md``. ``all_runs`` is the whole-run figure: every run of
the five happy paths, the first run after the start included.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _common import append_rows, commit, machine, today
from _mcp import FastWorkspace, TimedTools, emit, full_run, stats, stop_residents
from mcp import Client, StdioServerParameters

from telic.demo import MODES, TelicTools, stdio_parameters

ORIGINAL_ENV = "TELIC_ORIGINAL_CMD"
FIRST = MODES[0]
"""The first run after start: ``report_only``."""


@dataclass
class Contender:
    """One server under test and everything measured of it."""

    name: str
    command: list[str] | None  # None: ours, through ``stdio_parameters``
    extra: list[str] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    start_to_list: list[float] = field(default_factory=list)
    first_run: list[float] = field(default_factory=list)
    start_to_first_run: list[float] = field(default_factory=list)
    later_runs: list[float] = field(default_factory=list)
    all_runs: list[float] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    ground: list[float] = field(default_factory=list)
    text_bytes: dict[str, list[int]] = field(default_factory=dict)

    runtime: Path | None = None
    """Ours with ``--resident``: the runtime directory of its one resident server."""

    @property
    def resident(self) -> bool:
        """Whether this is ours attached to a resident server."""
        return self.command is None and "--resident" in self.extra

    def parameters(self, repo: Path, state: Path) -> StdioServerParameters:
        """How to spawn this contender for ``repo`` with a fresh ``state`` directory (ours with
        ``--resident``: the resident server's state directory and runtime directory)."""
        if self.resident:
            assert self.runtime is not None
            state = self.runtime.with_name("resident-state")
            ours = stdio_parameters(repo, state, env={"TELIC_RUNTIME_DIR": str(self.runtime)})
        else:
            ours = stdio_parameters(repo, state)
        if self.command is None:
            return ours.model_copy(update={"args": [*ours.args, *self.extra]})
        words = [
            w.replace("{repo}", str(repo)).replace("{state}", str(state)) for w in self.command
        ]
        return StdioServerParameters(command=words[0], args=words[1:], env=ours.env, cwd=str(repo))


async def _iteration(who: Contender, workspace: FastWorkspace, state: Path) -> None:
    began = time.perf_counter()
    async with Client(who.parameters(workspace.root, state)) as client:
        who.start.append(time.perf_counter() - began)
        await client.list_tools()
        who.start_to_list.append(time.perf_counter() - began)
        for mode in MODES:
            tools = TimedTools(client)
            run_began = time.perf_counter()
            await full_run(tools, mode, workspace)
            wall = time.perf_counter() - run_began
            who.all_runs.append(wall)
            if mode == FIRST:
                who.first_run.append(wall)
                who.start_to_first_run.append(time.perf_counter() - began)
            else:
                who.later_runs.append(wall)
            for call in tools.calls:
                if call.tool == "telic_submit_artifact":
                    who.submit.append(call.seconds)
                elif call.tool == "telic_ground_context":
                    who.ground.append(call.seconds)
            who.text_bytes.setdefault(mode, []).append(sum(c.text_bytes for c in tools.calls))


FIGURES = (
    ("start", "spawn → initialize"),
    ("start_to_list", "spawn → first tools/list"),
    ("first_run", "first run after start (report_only)"),
    ("start_to_first_run", "spawn → first completed report_only run"),
    ("later_runs", "later runs (plan, analyze, fix, analyze_and_fix)"),
    ("all_runs", "all runs, the first run after the start included"),
    ("submit", "telic_submit_artifact"),
    ("ground", "telic_ground_context"),
)


def _summary(who: Contender) -> dict[str, Any]:
    figures: dict[str, Any] = {key: stats(getattr(who, key)) for key, _ in FIGURES}
    figures["text_kb_per_run"] = {
        mode: round(statistics.median(sizes) / 1000, 1) for mode, sizes in who.text_bytes.items()
    }
    return figures


def _ratios(original: dict[str, Any], ours: dict[str, Any]) -> dict[str, float]:
    """Original ÷ ours for every median: above 1, ours is faster (or smaller)."""
    ratios = {
        key: round(original[key]["median_ms"] / ours[key]["median_ms"], 2)
        for key, _ in FIGURES
        if ours[key].get("median_ms")
    }
    for mode, kb in ours["text_kb_per_run"].items():
        if kb and mode in original["text_kb_per_run"]:
            ratios[f"text_{mode}"] = round(original["text_kb_per_run"][mode] / kb, 2)
    return ratios


_README_FIGURES = ("start_to_list", "first_run", "start_to_first_run", "later_runs", "all_runs")


def _readme_rows(results: dict[str, dict[str, Any]], iterations: int) -> list[list[object]]:
    rows: list[list[object]] = []
    for name, figures in results.items():
        cells = [
            f"{figures[key]['median_ms']:.1f} / {figures[key]['p95_ms']:.1f}"
            for key in _README_FIGURES
        ]
        rows.append([today(), commit(), machine(), name, iterations, *cells])
    return rows


async def main(iterations: int, ours_args: list[str], write_readme: bool) -> None:
    """Measure and print the JSON result."""
    contenders = [Contender("ours " + " ".join(["telic serve", *ours_args]), None, ours_args)]
    original = os.environ.get(ORIGINAL_ENV, "").strip()
    if original:
        contenders.append(Contender("original", shlex.split(original)))
    with tempfile.TemporaryDirectory(prefix="telic-side-") as tmp:
        base = Path(tmp)
        workspaces = {
            who.name: FastWorkspace(base / f"repo-{n}") for n, who in enumerate(contenders)
        }
        try:
            for who in contenders:
                if who.resident:  # start its server outside the timings: one untimed session
                    who.runtime = base / "rt"  # of every mode, so what loads lazily has loaded
                    workspace = workspaces[who.name]
                    async with Client(who.parameters(workspace.root, base)) as c:
                        for mode in MODES:
                            await full_run(TelicTools(c), mode, workspace)
            for i in range(iterations):
                order = contenders if i % 2 == 0 else contenders[::-1]
                for n, who in enumerate(order):
                    await _iteration(who, workspaces[who.name], base / f"state-{i}-{n}")
        finally:
            for who in contenders:
                if who.runtime is not None:
                    stop_residents(who.runtime)
    results = {who.name: _summary(who) for who in contenders}
    out: dict[str, Any] = {"benchmark": "side_by_side", "iterations": iterations, **results}
    if len(contenders) == 2:
        out["ratios_original_over_ours"] = _ratios(results["original"], results[contenders[0].name])
    emit(out)
    if write_readme:
        columns = (
            "date",
            "commit",
            "machine",
            "server",
            "iterations",
            "spawn → tools/list, median / p95 (ms)",
            "first run, report_only (ms)",
            "spawn → first run done (ms)",
            "later runs (ms)",
            "all runs, first included (ms)",
        )
        append_rows(
            "Side by side — `benchmarks/side_by_side.py`",
            columns,
            _readme_rows(results, iterations),
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="fresh servers per contender")
    parser.add_argument(
        "--ours-args", default="", help="extra arguments for our `telic serve` (e.g. --resident)"
    )
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    if options.iterations < 1:
        sys.exit("side_by_side: --iterations must be at least 1")
    anyio.run(main, options.iterations, shlex.split(options.ours_args), not options.no_readme)
