"""Telic over MCP streamable HTTP with the official client: latency and throughput.

* ``start`` — spawn ``telic serve --http`` until it announces readiness, then ``initialize``
  and the first ``tools/list``.
* ``runs`` — as ``mcp_stdio.py``: ``--runs`` complete happy-path runs per mode over one
  connection; wall time per run and per tool call by tool name.
* ``throughput`` — 1, 4 and 16 concurrent clients, each on its own connection driving its own
  analyze_only runs back to back for ``--seconds``; accepted ``telic_submit_artifact`` calls
  per second. On SQLite (one server) and, when ``TELIC_TEST_POSTGRES_URL`` is set, on
  PostgreSQL with 1 and 2 server replicas (clients spread round-robin); with ``--memory`` also
  on the memory ledger, which separates the ledger's cost from everything above it.

Every throughput row also says how busy each side was: the server processes' CPU time and this
process's (all the clients share it, on one event loop) as a share of the wall time, and per
tool call. On two cores one server process can use at most one (one interpreter, one event
loop); the clients compete with it for the other.

Only 127.0.0.1 is touched. ``eval "$(bash .ci/postgres.sh)"`` starts a local PostgreSQL.

    .venv/bin/python benchmarks/mcp_http.py [--runs 20] [--seconds 10] [--clients 1,4,16]
        [--sections start,runs,throughput] [--memory]

Targets (issue 10, 2 cores): ≥ 200 accepted submissions/s from 16 clients on SQLite; more with
2 PostgreSQL replicas than with 1.
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
from _mcp import FastWorkspace, TimedTools, cpu_seconds, emit, full_run, server_pid, stats

from telic.demo import MODES, http_client, http_server

SECTIONS = ("start", "runs", "throughput")


async def _start(root: Path, state: Path) -> tuple[float, float]:
    began = time.perf_counter()
    async with http_server(root, state) as url:
        ready = time.perf_counter() - began
        async with http_client(url) as client:
            await client.list_tools()
            listed = time.perf_counter() - began
    return ready, listed


async def _runs(url: str, workspace: FastWorkspace, runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with http_client(url) as client:
        for mode in MODES:
            tools = TimedTools(client)
            await full_run(tools, mode, workspace)
            tools.calls.clear()
            walls = []
            for _ in range(runs):
                began = time.perf_counter()
                await full_run(tools, mode, workspace)
                walls.append(time.perf_counter() - began)
            results[mode] = {
                "calls_per_run": len(tools.calls) // runs,
                "run": stats(walls),
                "per_tool": {name: stats(times) for name, times in tools.by_tool().items()},
            }
    return results


async def _throughput(
    urls: list[str], workspace: FastWorkspace, clients: int, seconds: float
) -> dict[str, Any]:
    """``clients`` connections driving analyze_only runs until ``seconds`` have passed."""
    everyone: list[TimedTools] = []
    async with AsyncExitStack() as stack:
        for i in range(clients):
            client = await stack.enter_async_context(http_client(urls[i % len(urls)]))
            everyone.append(TimedTools(client))
        for tools in everyone:  # warm each connection (and each replica's caches)
            await tools.call("telic_list_runs", limit=1)
        servers = [pid for pid in (server_pid(url) for url in urls) if pid is not None]
        server_cpu = sum(cpu_seconds(pid) for pid in servers)
        client_cpu = time.process_time()
        deadline = time.perf_counter() + seconds
        began = time.perf_counter()
        finished = [0]

        async def drive(tools: TimedTools) -> None:
            while time.perf_counter() < deadline:
                await full_run(tools, "analyze_only", workspace)
                finished[0] += 1

        async with anyio.create_task_group() as tg:
            for tools in everyone:
                tg.start_soon(drive, tools)
        elapsed = time.perf_counter() - began
        server_cpu = sum(cpu_seconds(pid) for pid in servers) - server_cpu
        client_cpu = time.process_time() - client_cpu
    submits = [c for t in everyone for c in t.calls if c.tool == "telic_submit_artifact"]
    accepted = sum(1 for c in submits if c.ok)
    calls = sum(len(t.calls) for t in everyone) - len(everyone)  # less the warm-up calls
    return {
        "clients": clients,
        "servers": len(urls),
        "seconds": round(elapsed, 3),
        "runs_completed": finished[0],
        "accepted_submissions": accepted,
        "accepted_submissions_per_s": round(accepted / elapsed, 1),
        "submit_latency": stats([c.seconds for c in submits]),
        "cpu": _cpu(server_cpu, client_cpu, elapsed, calls, measured=len(servers) == len(urls)),
    }


def _cpu(server: float, client: float, elapsed: float, calls: int, *, measured: bool) -> Any:
    """Server and client CPU time as a share of the wall time, and per tool call."""
    if not measured or elapsed <= 0 or calls <= 0:
        return None
    return {
        "server_percent": round(100 * server / elapsed, 1),
        "clients_percent": round(100 * client / elapsed, 1),
        "server_ms_per_call": round(1e3 * server / calls, 3),
        "clients_ms_per_call": round(1e3 * client / calls, 3),
        "load_1m": round(os.getloadavg()[0], 2),
    }


async def _sweep(
    base: Path,
    workspace: FastWorkspace,
    label: str,
    replicas: int,
    concurrency: list[int],
    seconds: float,
    database_url: str | None,
) -> list[dict[str, Any]]:
    rows = []
    async with AsyncExitStack() as stack:
        urls = [
            await stack.enter_async_context(
                http_server(workspace.root, base / f"{label}-{i}", database_url=database_url)
            )
            for i in range(replicas)
        ]
        for clients in concurrency:
            rows.append({"backend": label} | await _throughput(urls, workspace, clients, seconds))
    return rows


async def main(
    runs: int,
    starts: int,
    seconds: float,
    concurrency: list[int],
    sections: frozenset[str],
    memory: bool,
) -> None:
    """Measure and print the JSON result."""
    postgres = os.environ.get("TELIC_TEST_POSTGRES_URL", "") if "throughput" in sections else ""
    modes: dict[str, Any] = {}
    throughput: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as tmp:
        base = Path(tmp)
        workspace = FastWorkspace(base / "repo")
        ready, listed = [], []
        for i in range(starts if "start" in sections else 0):
            a, b = await _start(workspace.root, base / f"start-{i}")
            ready.append(a)
            listed.append(b)
        if "runs" in sections:
            async with http_server(workspace.root, base / "runs") as url:
                modes = await _runs(url, workspace, runs)
        if "throughput" in sections:
            throughput += await _sweep(
                base, workspace, "sqlite", 1, concurrency, seconds, database_url=None
            )
        if memory and "throughput" in sections:
            throughput += await _sweep(
                base, workspace, "memory", 1, concurrency, seconds, database_url="memory://"
            )
        if postgres.startswith("postgres"):
            for replicas in (1, 2):
                throughput += await _sweep(
                    base,
                    workspace,
                    f"postgresql-{replicas}-replica{'s' if replicas > 1 else ''}",
                    replicas,
                    concurrency,
                    seconds,
                    database_url=postgres,
                )
    medians = sorted(m["run"]["median_ms"] for m in modes.values())
    emit(
        {
            "benchmark": "mcp_http",
            "runs_per_mode": runs,
            "start_to_ready": stats(ready),
            "start_to_list": stats(listed),
            "modes": modes,
            "median_of_mode_medians_ms": medians[len(medians) // 2] if medians else None,
            "throughput": throughput,
            "postgresql": "measured" if postgres.startswith("postgres") else "skipped (no URL)",
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per mode (default 20)")
    parser.add_argument("--starts", type=int, default=5, help="server starts (default 5)")
    parser.add_argument("--seconds", type=float, default=10.0, help="per throughput point")
    parser.add_argument("--clients", default="1,4,16", help="concurrency levels (default 1,4,16)")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help="what to measure, comma-separated (default start,runs,throughput)",
    )
    parser.add_argument(
        "--memory", action="store_true", help="also sweep throughput on the memory ledger"
    )
    options = parser.parse_args()
    levels = [int(n) for n in options.clients.split(",")]
    chosen = frozenset(part.strip() for part in options.sections.split(",") if part.strip())
    if not chosen <= set(SECTIONS):
        parser.error(f"--sections takes some of {', '.join(SECTIONS)}")
    anyio.run(main, options.runs, options.starts, options.seconds, levels, chosen, options.memory)
