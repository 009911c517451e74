"""Grounding speed and memory: large trees in-process, and a small repository through the service.

Two large trees are grounded, each with the default budgets and with ``max_inventory_files``
raised to 100,000 (the hard cap):

* ``git-100k`` — a generated git repository of 100,000 small files in 1,000 directories,
  committed once. It is generated on first use into a cache directory under the system temp
  directory and reused afterwards (delete it, or pass --regenerate, to rebuild it).
* ``site-packages`` — the installed site-packages of the running interpreter, as a plain tree.
  It is copied once into the same cache directory, because a virtual environment often lives
  inside a git work tree and grounding would otherwise ground that work tree instead; outside
  git, ripgrep (or the filesystem walk) lists it.

Every measurement runs in a fresh subprocess: it grounds the tree once to warm the page cache,
then ``--runs`` times, and reports the median wall time of ``ground_repository`` and the peak
RSS of the process (``resource.getrusage``).

``small`` is the repository ``telic_ground_context`` is measured on over MCP
(``examples/demo-repo`` committed to a fresh git repository, as ``benchmarks/_mcp.py`` does):
``--small-runs`` analyze_only groundings, after warm-up, of ``ground_repository`` alone and of
``Service.ground`` through ``telic.roles.open_service`` on the memory and the SQLite ledger
(each run started first, outside the timing), on asyncio like the server. It reports median,
p95, min and max, and per ground call the git processes started (counted by an audit hook) and
the ledger writes (calls that mutate the ledger) with the artifacts they store.

Results are printed as JSON on stdout; nothing is written to ``benchmarks/README.md``.

    python benchmarks/grounding.py [--runs 5] [--small-runs 50] [--only small|large] [--regenerate]

This is a measurement, not a test. Targets: ≤ 0.4 s median on git-100k with default budgets,
≤ 2 s with the full inventory, peak RSS ≤ 300 MB; ``telic_ground_context`` on the small
repository ≤ 15 ms over MCP stdio (issue 10), of which this measures the in-process part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import summary

from telic.controller import StartRequest
from telic.grounding import GroundingBudget, ground_repository
from telic.ledger import Ledger, open_ledger
from telic.roles import open_service

FILES = 100_000
DIRECTORIES = 1_000
REQUEST = "Investigate why the parser module 417 drops tokens in src/pkg0417/parser_0417_3.py"
CACHE_DIR = Path(tempfile.gettempdir()) / "telic-bench-grounding"
CACHE = CACHE_DIR / f"git-{FILES}"
SITE_COPY = CACHE_DIR / f"site-packages-{sys.version_info.major}.{sys.version_info.minor}"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo-repo"
SMALL_REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"
LEDGER_WRITES = ("create_run", "commit_step", "store_supporting", "record_events")


def _generate(target: Path) -> None:
    """Write the 100k-file repository and commit it (about a minute, once)."""
    if target.exists():
        shutil.rmtree(target)
    staging = target.with_name(target.name + ".tmp")
    if staging.exists():
        shutil.rmtree(staging)
    per_directory = FILES // DIRECTORIES
    kinds = ("parser", "lexer", "model", "view", "util", "config_loader", "client", "handler")
    for number in range(DIRECTORIES):
        directory = staging / "src" / f"pkg{number:04d}"
        directory.mkdir(parents=True)
        for index in range(per_directory):
            kind = kinds[index % len(kinds)]
            name = f"{kind}_{number:04d}_{index}.py"
            value = number * per_directory + index
            text = f'"""Module {kind} {number}/{index}."""\n\nVALUE = {value}\n'
            (directory / name).write_text(text, encoding="utf-8")
    (staging / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n", encoding="utf-8")
    (staging / "README.md").write_text("# Generated benchmark repository\n", encoding="utf-8")
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(staging)], check=True)
    subprocess.run([*GIT, "-C", str(staging), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(staging), "commit", "-q", "-m", "generated"], check=True)
    staging.rename(target)
    # Let the index age past the racy-git window, then refresh it once, as any working copy
    # that has lived for a second would be; otherwise git status re-hashes every file.
    time.sleep(1.5)
    subprocess.run([*GIT, "-C", str(target), "update-index", "-q", "--really-refresh"], check=True)
    subprocess.run(
        [*GIT, "-C", str(target), "status", "--porcelain"], check=True, capture_output=True
    )


def _copy_site_packages(target: Path) -> None:
    """Copy the interpreter's site-packages to ``target``, outside any git work tree."""
    if target.exists():
        shutil.rmtree(target)
    staging = target.with_name(target.name + ".tmp")
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(sysconfig.get_paths()["purelib"], staging, symlinks=True)
    staging.rename(target)


def _measure(root: str, max_inventory: int | None, runs: int) -> dict[str, Any]:
    """Run inside the child process: ground ``runs`` times after one warm-up."""
    budget = (
        GroundingBudget()
        if max_inventory is None
        else GroundingBudget(max_inventory_files=max_inventory)
    )
    times: list[float] = []
    summary: dict[str, Any] = {}

    async def once() -> None:
        started = time.perf_counter()
        result = await ground_repository(
            run_id="bench-run",
            original_request=REQUEST,
            repository_root=root,
            mode="analyze_only",
            budget=budget,
        )
        times.append(time.perf_counter() - started)
        wire = result.wire
        summary.update(
            inventory_source=wire.inventory_source,
            candidate_files=wire.budget.candidate_files,
            selected_files=wire.budget.selected_files,
            selected_bytes=wire.budget.selected_bytes,
        )

    anyio.run(once)
    times.clear()
    for _ in range(runs):
        anyio.run(once)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "median_seconds": round(statistics.median(times), 4),
        "min_seconds": round(min(times), 4),
        "max_seconds": round(max(times), 4),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        **summary,
    }


class _Counts:
    """Git processes started (seen by an audit hook) and ledger writes, while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.git = 0
        self.writes = 0
        self.artifacts = 0
        sys.addaudithook(self._audit)

    def _audit(self, event: str, arguments: tuple[Any, ...]) -> None:
        if self.on and event == "subprocess.Popen" and Path(str(arguments[0])).name == "git":
            self.git += 1

    def watch(self, ledger: Ledger) -> None:
        """Count the writes of ``ledger`` (its mutating methods, wrapped on the instance)."""
        for name in LEDGER_WRITES:
            method = getattr(ledger, name)

            async def counted(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
                commit = await _method(*args, **kwargs)
                if self.on:
                    self.writes += 1
                    self.artifacts += len(commit.artifacts)
                return commit

            setattr(ledger, name, counted)

    def per_call(self, calls: int) -> dict[str, float]:
        return {
            "git_processes": self.git / calls,
            "ledger_writes": self.writes / calls,
            "artifacts_stored": self.artifacts / calls,
        }


def _demo_copy(target: Path) -> Path:
    """Copy ``examples/demo-repo`` to ``target`` and commit it, as the MCP benchmarks do."""
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([*GIT, "init", "-q", str(target)], check=True)
    subprocess.run([*GIT, "-C", str(target), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(target), "commit", "-q", "-m", "demo"], check=True)
    return target


async def _small_direct(root: Path, runs: int, counts: _Counts) -> dict[str, Any]:
    times: list[float] = []
    for number in range(runs + 5):
        counts.on = number == 5
        started = time.perf_counter()
        await ground_repository(
            run_id="bench-run",
            original_request=SMALL_REQUEST,
            repository_root=root,
            mode="analyze_only",
        )
        if number >= 5:
            times.append(time.perf_counter() - started)
        counts.on = False
    return {**summary(times), **counts.per_call(1)}


async def _small_service(root: Path, state: Path, url: str, runs: int) -> dict[str, Any]:
    counts = _Counts()
    times: list[float] = []
    async with open_ledger(url) as ledger:
        counts.watch(ledger)
        async with open_service(ledger=ledger, repository_root=root, state_dir=state) as service:
            for number in range(runs + 3):
                begun = await service.start_run(StartRequest(SMALL_REQUEST, "analyze_only"))
                counts.on = number >= 3
                started = time.perf_counter()
                await service.ground(begun.run.run_id, begun.next_action.id, begun.run.version)
                if number >= 3:
                    times.append(time.perf_counter() - started)
                counts.on = False
    return {**summary(times), **counts.per_call(runs)}


def _measure_small(runs: int) -> dict[str, Any]:
    """Run inside the child process: the small repository, directly and through the service."""

    async def measure() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="telic-bench-small-") as folder:
            base = Path(folder)
            root = _demo_copy(base / "repo")
            return {
                "ground_repository": await _small_direct(root, runs, _Counts()),
                "service_memory": await _small_service(
                    root, base / "state-memory", "memory://", runs
                ),
                "service_sqlite": await _small_service(
                    root, base / "state-sqlite", f"sqlite:///{base / 'state-sqlite'}", runs
                ),
            }

    result: dict[str, Any] = anyio.run(measure)
    return result


def _child(root: str | None, max_inventory: int | None, runs: int) -> dict[str, Any]:
    """Measure in a fresh interpreter: one tree, or the small repository when ``root`` is None."""
    where = ["--child-small"] if root is None else ["--child", root]
    command = [sys.executable, __file__, *where, "--runs", str(runs)]
    if max_inventory is not None:
        command += ["--max-inventory", str(max_inventory)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per large tree (default 5)")
    parser.add_argument(
        "--small-runs", type=int, default=50, help="runs on the small repository (default 50)"
    )
    parser.add_argument("--only", choices=("small", "large"), help="measure only these")
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--child-small", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--max-inventory", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_small:
        print(json.dumps(_measure_small(args.runs)))
        return
    if args.child:
        print(json.dumps(_measure(args.child, args.max_inventory, args.runs)))
        return
    results: dict[str, Any] = {}
    if args.only != "small":
        if args.regenerate or not (CACHE / ".git").is_dir():
            _generate(CACHE)
        if args.regenerate or not SITE_COPY.is_dir():
            _copy_site_packages(SITE_COPY)
        trees = {"git-100k": str(CACHE), "site-packages": str(SITE_COPY)}
        for name, root in trees.items():
            for label, limit in (("default", None), ("inventory-100k", 100_000)):
                results[f"{name}/{label}"] = _child(root, limit, args.runs)
    if args.only != "large":
        results["small"] = _child(None, None, args.small_runs)
    print(
        json.dumps(
            {
                "python": platform.python_version(),
                "machine": platform.machine(),
                "cpus": os.cpu_count(),
                "git": subprocess.run(
                    ["git", "--version"], capture_output=True, text=True
                ).stdout.strip(),
                "ripgrep": shutil.which("rg") is not None,
                "runs": args.runs,
                "small_runs": args.small_runs,
                "load_average": [round(value, 2) for value in os.getloadavg()],
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
