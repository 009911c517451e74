"""Start-up as a host feels it: ``telic serve`` in-process against ``telic serve --resident``.

Each sample is a new host session with the official MCP client over stdio, timed from the spawn
of the server command:

* ``in-process`` — ``python -m telic serve``, a fresh process and state directory each time;
* ``resident, cold`` — ``serve --resident`` with no resident server running (the last one was
  stopped; its runtime directory keeps what it wrote, as after an idle exit or a reboot of the
  server): the shim starts one, which pays the import floor, and answers the handshake and
  ``tools/list`` itself from the answers the last server wrote, where it can;
* ``resident, warm`` — ``serve --resident`` while the repository's resident server runs: only
  the shim starts (standard library only) and attaches over the Unix socket.

For each: spawn to the ``initialize`` answer, to the first ``tools/list`` answer, and to the end
of the first completed ``report_only`` run (start, ground, four phase artifacts, report). Also the
floor, ``python -c pass`` spawned and awaited the same way, sampled between them; and the
resident server's resident set size after the warm sessions (the memory it keeps).

``--think MS`` waits that long after the first ``tools/list`` before the run, as a host's model
takes time before its first ``telic_start_run``, and adds the run's own time (from its first
call to its end) to each series: what a server does while the host thinks is then off the
run's path.

``--baseline DIR`` adds the resident series of another checkout of Telic (``DIR`` holds its
``telic`` package; it goes first on ``PYTHONPATH``), interleaved with ours, so a before/after
comparison is measured at the same load: ``git worktree add ../before <commit>`` and
``--baseline ../before``.

    .venv/bin/python benchmarks/startup.py [--starts 10] [--baseline DIR] [--warm-only]
        [--think MS] [--no-readme]

Targets (issue 19, 2 cores): spawn to first ``tools/list`` ≤ 250 ms; spawn to the first completed
report_only run ≤ 280 ms (the original TypeScript server: 144 ms and 133 ms + its start).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, row, summary  # type: ignore[import-not-found]
from _mcp import (  # type: ignore[import-not-found]
    FastWorkspace,
    full_run,
    resident_pids,
    rss_kib,
    stop_residents,
)
from mcp import Client

from telic.demo import TelicTools, stdio_parameters


async def _session(
    root: Path,
    state: Path,
    workspace: FastWorkspace,
    runtime: Path | None,
    tree: Path | None = None,
    think: float = 0.0,
) -> tuple[float, float, float, float]:
    env = {"TELIC_RUNTIME_DIR": str(runtime)} if runtime is not None else {}
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])
    args = ["--resident"] if runtime is not None else []
    params = stdio_parameters(root, state, env=env, serve_args=args)
    params.env.pop("PYTHONDONTWRITEBYTECODE", None)  # type: ignore[union-attr]  # as installed
    began = time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - began
        await client.list_tools()
        listed = time.perf_counter() - began
        if think:
            await anyio.sleep(think)  # the host's model, deciding what to do
        started = time.perf_counter()
        await full_run(TelicTools(client), "report_only", workspace)
        ran = time.perf_counter() - began
        alone = time.perf_counter() - started
    return initialized, listed, ran, alone


async def _floor() -> float:
    """``python -c pass``, spawned and awaited: the interpreter's own start at this load."""
    began = time.perf_counter()
    process = await anyio.open_process([sys.executable, "-c", "pass"])
    await process.wait()
    return time.perf_counter() - began


async def measure(
    starts: int, baseline: Path | None = None, warm_only: bool = False, think: float = 0.0
) -> dict[str, Any]:
    """Every sample; the resident servers started here are stopped on the way out.

    ``warm_only`` leaves out the in-process and cold series (seconds each), for many warm
    samples in a short, evenly loaded window."""
    base = Path(tempfile.mkdtemp(prefix="tsb-"))
    results: dict[str, Any] = {}
    trees: dict[str, Path | None] = {"": None}
    if baseline is not None:
        trees["baseline "] = baseline
    runtimes = {label: base / f"rw{n}" for n, label in enumerate(trees)}
    try:
        workspace = FastWorkspace(base / "repo")
        root = workspace.root
        samples: dict[str, list[tuple[float, float, float, float]]] = {}
        if not warm_only:
            samples["in-process"] = []
        for label in trees:
            if not warm_only:
                samples[f"{label}resident, cold"] = []
            samples[f"{label}resident, warm"] = []
        floors: list[float] = []
        colds = {label: base / f"rc{n}" for n, label in enumerate(trees)}
        for label, tree in trees.items():  # start each warm server; a cold one once, stopped
            await _session(root, base / f"warm-state{label}", workspace, runtimes[label], tree)
            if not warm_only:
                try:
                    await _session(root, base / f"cold-state{label}", workspace, colds[label], tree)
                finally:
                    stop_residents(colds[label])
        for index in range(starts):  # interleaved, so load drifts hit every series alike
            floors.append(await _floor())
            if not warm_only:
                samples["in-process"].append(
                    await _session(root, base / f"s{index}", workspace, None, think=think)
                )
            for label, tree in trees.items():
                cold = colds[label]
                if not warm_only:
                    try:
                        samples[f"{label}resident, cold"].append(
                            await _session(
                                root, base / f"cold-state{label}", workspace, cold, tree, think
                            )
                        )
                    finally:
                        stop_residents(cold)
                samples[f"{label}resident, warm"].append(
                    await _session(
                        root, base / f"warm-state{label}", workspace, runtimes[label], tree, think
                    )
                )
        server = resident_pids(runtimes[""])[-1]  # the newest (an edit mid-run starts another)
        results["resident_server_rss_kib"] = rss_kib(server)
        for runtime in runtimes.values():
            stop_residents(runtime)
        results["floor: python -c pass"] = summary(floors)
        for name, rows in samples.items():
            results[name] = {
                "initialize": summary([r[0] for r in rows]),
                "first_tools_list": summary([r[1] for r in rows]),
                "first_report_only_run": summary([r[2] for r in rows]),
                **({"report_only_run_alone": summary([r[3] for r in rows])} if think else {}),
            }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    results["load"] = os.getloadavg()[0]
    return results


def _commit_of(tree: Path) -> str:
    """The baseline checkout's short commit (its path is this machine's, not the README's)."""
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or tree.name  # not a checkout (``git archive``): its name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10, help="samples of each (default 10)")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another checkout's root, measured too"
    )
    parser.add_argument(
        "--warm-only", action="store_true", help="only the warm resident series (and the floor)"
    )
    parser.add_argument(
        "--think", type=float, default=0.0, help="ms between the first tools/list and the run"
    )
    parser.add_argument("--no-readme", action="store_true", help="do not append rows")
    args = parser.parse_args()
    baseline = None if args.baseline is None else args.baseline.resolve()
    result = anyio.run(measure, args.starts, baseline, args.warm_only, args.think / 1000)
    print(json.dumps(result, indent=2))
    if not args.no_readme:
        floor = result["floor: python -c pass"]
        rows = [row("floor: `python -c pass`, spawned and awaited", floor)]
        series = [name for name in result if name.endswith(("cold", "warm"))]
        tag = "" if baseline is None else _commit_of(baseline)
        for name in [*(["in-process"] if "in-process" in result else []), *series]:
            label = name.replace("baseline", f"baseline {tag}")
            rows.append(row(f"{label}: spawn → first tools/list", result[name]["first_tools_list"]))
            paused = f", {args.think:g} ms pause before it" if args.think else ""
            rows.append(
                row(
                    f"{label}: spawn → first completed report_only run{paused}",
                    result[name]["first_report_only_run"],
                )
            )
            if args.think:
                alone = result[name]["report_only_run_alone"]
                rows.append(row(f"{label}: the first report_only run alone{paused}", alone))
        append_rows("Start-up, in-process vs resident — `benchmarks/startup.py`", COLUMNS, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
