"""Ledger commit throughput: phase steps per second with 1 and 8 concurrent writers.

Each writer owns one run and commits steps of one artifact (about 1 KiB of canonical JSON) plus
two trace events, the shape of a typical accepted phase artifact. Writers are tasks sharing one
ledger in one process, on asyncio (``--backend trio`` for trio; PostgreSQL is asyncio only).
Each row also gives the latency of one commit (median and p95 over every writer's commits), and
``reads`` the latency of the reads a controller makes per call on a run of ``--steps`` steps:
``read_changes`` with nothing new, and one ``read_artifact``. Results are printed as JSON on
stdout; nothing is written to ``benchmarks/README.md``.

    python benchmarks/ledger.py [--steps 200] [--postgres URL] [--backend asyncio|trio]

PostgreSQL is measured when --postgres or TELIC_TEST_POSTGRES_URL gives a server; the benchmark
works in a schema of its own and drops it afterwards. This is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import sniffio
from _common import summary

from telic.ledger import Ledger, NewArtifact, NewTraceEvent, RunRecord, open_ledger

WRITER_COUNTS = (1, 8)


def _run(run_id: str, version: int) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        schema_version="1.0",
        repository_root="/srv/bench",
        requested_mode="analyze_and_fix",
        status="running",
        phase="agent_4_execute",
        resume_phase=None,
        version=version,
        prompt_revisions_remaining=1,
        remediations_remaining=1,
        outcome_hint=None,
        created_at="2026-05-20T10:00:00.000Z",
        updated_at="2026-05-20T10:00:00.000Z",
    )


def _artifact(run_id: str, artifact_id: str) -> NewArtifact:
    body = {"schemaVersion": "1.0", "id": artifact_id, "runId": run_id, "summary": "x" * 900}
    return NewArtifact(
        artifact_id=artifact_id,
        type="WorkResult",
        schema_version="1.0",
        producer="executor",
        body=body,
        source_refs=(f"artifact://{run_id}/plan",),
    )


def _events() -> list[NewTraceEvent]:
    return [
        NewTraceEvent(actor="executor", phase="agent_4_execute", event_type="phase_submitted"),
        NewTraceEvent(actor="controller", phase="agent_4_execute", event_type="transition_allowed"),
    ]


async def _writer(ledger: Ledger, run_id: str, steps: int, latencies: list[float]) -> None:
    await ledger.create_run(
        _run(run_id, 1), _artifact(run_id, "request"), _artifact(run_id, run_id), _events()
    )
    for version in range(1, steps + 1):
        started = time.perf_counter()
        await ledger.commit_step(
            run_id, version, _run(run_id, version + 1), [_artifact(run_id, f"s{version}")], []
        )
        latencies.append(time.perf_counter() - started)


async def _reads(ledger: Ledger, run_id: str, rounds: int = 200) -> dict[str, Any]:
    changes = await ledger.read_changes(run_id)
    after_artifact, after_event = changes.artifact_count, changes.event_count
    timings: dict[str, list[float]] = {"read_changes_nothing_new": [], "read_artifact": []}
    for _ in range(rounds):
        started = time.perf_counter()
        await ledger.read_changes(run_id, after_artifact, after_event)
        middle = time.perf_counter()
        await ledger.read_artifact(run_id, "s1")
        timings["read_changes_nothing_new"].append(middle - started)
        timings["read_artifact"].append(time.perf_counter() - middle)
    return {name: summary(values) for name, values in timings.items()}


async def _measure(url: str, writers: int, steps: int) -> dict[str, Any]:
    latencies: list[float] = []
    async with open_ledger(url) as ledger:
        prefix = uuid.uuid4().hex[:8]
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(writers):
                group.start_soon(_writer, ledger, f"bench-{prefix}-{index}", steps, latencies)
        elapsed = time.perf_counter() - started
        reads = await _reads(ledger, f"bench-{prefix}-0") if writers == 1 else None
    commits = writers * steps
    measured: dict[str, Any] = {
        "writers": writers,
        "commits": commits,
        "seconds": round(elapsed, 3),
        "commits_per_second": round(commits / elapsed, 1),
        "commit": summary(latencies),
    }
    if reads is not None:
        measured["reads"] = reads
    return measured


async def _postgres_schema(base: str, sql: str) -> None:
    connection = await asyncpg.connect(base)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


async def main(steps: int, postgres: str | None) -> dict[str, Any]:
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load": round(os.getloadavg()[0], 1),
        },
        "async_backend": sniffio.current_async_library(),
        "steps_per_writer": steps,
        "backends": {},
    }
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as scratch:
        targets: dict[str, str] = {"memory": "memory://"}
        for writers in WRITER_COUNTS:
            targets[f"sqlite-{writers}"] = f"sqlite://{Path(scratch) / f's{writers}'}"
        backends: dict[str, list[dict[str, Any]]] = {"memory": [], "sqlite": []}
        for writers in WRITER_COUNTS:
            backends["memory"].append(await _measure("memory://", writers, steps))
            backends["sqlite"].append(await _measure(targets[f"sqlite-{writers}"], writers, steps))
        if postgres and results["async_backend"] == "asyncio":
            schema = f"bench_{uuid.uuid4().hex[:12]}"
            await _postgres_schema(postgres, f"CREATE SCHEMA {schema}")
            try:
                url = f"{postgres}{'&' if '?' in postgres else '?'}search_path={schema}"
                backends["postgres"] = [await _measure(url, w, steps) for w in WRITER_COUNTS]
            finally:
                await _postgres_schema(postgres, f"DROP SCHEMA {schema} CASCADE")
        elif postgres:
            results["postgres_skipped"] = "asyncpg runs only on asyncio"
        else:
            results["postgres_skipped"] = "no --postgres URL and TELIC_TEST_POSTGRES_URL unset"
        results["backends"] = backends
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=200, help="commits per writer")
    parser.add_argument("--postgres", default=os.environ.get("TELIC_TEST_POSTGRES_URL"))
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    options = parser.parse_args()
    results = anyio.run(main, options.steps, options.postgres, backend=options.backend)
    print(json.dumps(results, indent=2))
