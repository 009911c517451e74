"""Start-up as a host feels it: ``telic serve`` in-process against ``telic serve --resident``.

Each sample is a new host session with the official MCP client over stdio, timed from the spawn
of the server command:

* ``in-process`` — ``python -m telic serve``, a fresh process and state directory each time;
* ``resident, cold`` — ``serve --resident`` with no resident server running (a fresh runtime
  directory each time): the shim starts one, which pays the import floor;
* ``resident, warm`` — ``serve --resident`` while the repository's resident server runs: only
  the shim starts (standard library only) and attaches over the Unix socket.

For each: spawn to the ``initialize`` answer, to the first ``tools/list`` answer, and to the end
of the first completed ``report_only`` run (start, ground, four phase artifacts, report). Also the
resident server's resident set size after the warm sessions (the memory it keeps).

    .venv/bin/python benchmarks/startup.py [--starts 10] [--no-readme]

Targets (issue 19, 2 cores): spawn to first ``tools/list`` ≤ 250 ms; spawn to the first completed
report_only run ≤ 280 ms (the original TypeScript server: 144 ms and 133 ms + its start).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, row, summary  # type: ignore[import-not-found]
from _mcp import FastWorkspace, full_run, rss_kib  # type: ignore[import-not-found]
from mcp import Client

from telic.cli import TelicTools, stdio_parameters

_PID = re.compile(r"^Telic MCP resident for .* \(pid (\d+)\)$", re.MULTILINE)


def _servers(runtime: Path) -> list[int]:
    found: list[int] = []
    for log in runtime.glob("*.log"):
        found += [int(pid) for pid in _PID.findall(log.read_text(encoding="utf-8"))]
    return found


def _stop(runtime: Path) -> None:
    for pid in _servers(runtime):
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
            import select

            select.select([handle], [], [], 30)
        finally:
            os.close(handle)


async def _session(
    root: Path, state: Path, workspace: FastWorkspace, runtime: Path | None
) -> tuple[float, float, float]:
    env = {"TELIC_RUNTIME_DIR": str(runtime)} if runtime is not None else {}
    args = ["--resident"] if runtime is not None else []
    params = stdio_parameters(root, state, env=env, serve_args=args)
    params.env.pop("PYTHONDONTWRITEBYTECODE", None)  # type: ignore[union-attr]  # as installed
    began = time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - began
        await client.list_tools()
        listed = time.perf_counter() - began
        await full_run(TelicTools(client), "report_only", workspace)
        ran = time.perf_counter() - began
    return initialized, listed, ran


async def measure(starts: int) -> dict[str, Any]:
    """Every sample; the resident servers started here are stopped on the way out."""
    base = Path(tempfile.mkdtemp(prefix="tsb-"))
    results: dict[str, Any] = {}
    try:
        workspace = FastWorkspace(base / "repo")
        root = workspace.root
        samples: dict[str, list[tuple[float, float, float]]] = {
            "in-process": [],
            "resident, cold": [],
            "resident, warm": [],
        }
        warm_runtime = base / "rw"
        await _session(root, base / "warm-state", workspace, warm_runtime)  # starts it
        for index in range(starts):  # interleaved, so load drifts hit all three alike
            samples["in-process"].append(await _session(root, base / f"s{index}", workspace, None))
            cold = base / f"rc{index}"
            try:
                samples["resident, cold"].append(
                    await _session(root, base / f"c{index}", workspace, cold)
                )
            finally:
                _stop(cold)
            samples["resident, warm"].append(
                await _session(root, base / "warm-state", workspace, warm_runtime)
            )
        server = _servers(warm_runtime)[-1]  # the newest (an edit mid-run starts another)
        results["resident_server_rss_kib"] = rss_kib(server)
        _stop(warm_runtime)
        for name, rows in samples.items():
            results[name] = {
                "initialize": summary([r[0] for r in rows]),
                "first_tools_list": summary([r[1] for r in rows]),
                "first_report_only_run": summary([r[2] for r in rows]),
            }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    results["load"] = os.getloadavg()[0]
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10, help="samples of each (default 10)")
    parser.add_argument("--no-readme", action="store_true", help="do not append rows")
    args = parser.parse_args()
    result = anyio.run(measure, args.starts)
    print(json.dumps(result, indent=2))
    if not args.no_readme:
        rows = []
        for name in ("in-process", "resident, cold", "resident, warm"):
            rows.append(row(f"{name}: spawn → first tools/list", result[name]["first_tools_list"]))
            rows.append(
                row(
                    f"{name}: spawn → first completed report_only run",
                    result[name]["first_report_only_run"],
                )
            )
        append_rows("Start-up, in-process vs resident — `benchmarks/startup.py`", COLUMNS, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
