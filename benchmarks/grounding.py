"""Grounding speed and memory: ``ground_repository`` on a 100,000-file repository and a real tree.

Two trees are grounded, each with the default budgets and with ``max_inventory_files`` raised
to 100,000 (the hard cap):

* ``git-100k`` — a generated git repository of 100,000 small files in 1,000 directories,
  committed once. It is generated on first use into a cache directory under the system temp
  directory and reused afterwards (delete it, or pass --regenerate, to rebuild it).
* ``site-packages`` — the installed site-packages of the running interpreter, as a plain tree.
  It is copied once into the same cache directory, because a virtual environment often lives
  inside a git work tree and grounding would otherwise ground that work tree instead; outside
  git, ripgrep (or the filesystem walk) lists it.

Every measurement runs in a fresh subprocess: it grounds the tree once to warm the page cache,
then ``--runs`` times, and reports the median wall time of ``ground_repository`` and the peak
RSS of the process (``resource.getrusage``). Results are printed as JSON on stdout.

    python benchmarks/grounding.py [--runs 5] [--regenerate]

This is a measurement, not a test. Targets: ≤ 0.4 s median on git-100k with default budgets,
≤ 2 s with the full inventory, peak RSS ≤ 300 MB.
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

from telic.grounding import GroundingBudget, ground_repository

FILES = 100_000
DIRECTORIES = 1_000
REQUEST = "Investigate why the parser module 417 drops tokens in src/pkg0417/parser_0417_3.py"
CACHE_DIR = Path(tempfile.gettempdir()) / "telic-bench-grounding"
CACHE = CACHE_DIR / f"git-{FILES}"
SITE_COPY = CACHE_DIR / f"site-packages-{sys.version_info.major}.{sys.version_info.minor}"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


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


def _child(root: str, max_inventory: int | None, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", root, "--runs", str(runs)]
    if max_inventory is not None:
        command += ["--max-inventory", str(max_inventory)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--max-inventory", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child, args.max_inventory, args.runs)))
        return
    if args.regenerate or not (CACHE / ".git").is_dir():
        _generate(CACHE)
    if args.regenerate or not SITE_COPY.is_dir():
        _copy_site_packages(SITE_COPY)
    trees = {"git-100k": str(CACHE), "site-packages": str(SITE_COPY)}
    results = {
        f"{name}/{label}": _child(root, limit, args.runs)
        for name, root in trees.items()
        for label, limit in (("default", None), ("inventory-100k", 100_000))
    }
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
                "load_average": [round(value, 2) for value in os.getloadavg()],
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
