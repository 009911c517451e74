"""Cost growth: submit latency at the 10th, 500th and 2,000th artifact of one run, and trace
paging at 10,000 events, on the memory and SQLite ledgers.

Growing a run. A run holds at most 128 Evidence per WorkPlan and three plans, so it is grown the
way long runs grow in practice: by casts. One analyze_only run (its envelope widened to 16
children per node, as ``tests/telic/roles/kit.py`` does) executes a 64-node plan; each of its
first 63 nodes casts 16 children that each return a sealed packet (a CastRecord and an
EvidencePacket, two artifacts per cast), then reports its WorkResult (the last node verifies).
At about 10, 500 and 2,000 artifacts the benchmark submits a burst of Evidence and times each
submission:

- ``service``: through ``open_service`` (the run's actor keeps the run's state between calls);
- ``controller_warm``: through a second, bare ``Controller`` on the same ledger, after its first
  call (it then reads only what others appended);
- ``controller_cold``: that controller's first call, which reads and verifies the whole run (what
  a process that has never seen the run pays once).

Timings on a shared virtual machine swing by half from one run to the next, so each checkpoint
also counts the Python function calls of ``COUNTED`` more submissions on each warm path
(``calls_per_submit``, cProfile over this thread: the event loop, the actors and the controller;
SQLite's own thread is not in it). The count does not depend on load: equal counts at the 10th
and the 2,000th artifact mean no step of a submission walks the run.

Trace paging: a run filled to the 10,000-event limit, then ``get_trace`` pages of 100 at the
start, the middle and the end. Artifact size: Evidence of 1, 8 and 32 KiB of content (its limit
is 32,768 characters). Concurrent runs: 1, 4 and 16 runs in one service, each task submitting 30
Evidence at once.

Run: ``python benchmarks/growth.py [--burst N] [--no-readme]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, commit, machine, row, summary, today

from telic.controller import Controller
from telic.ledger import Ledger, NewTraceEvent, open_ledger
from telic.roles import Service, open_service
from tests.telic.roles.kit import (
    BUDGET,
    EXPLORE,
    ROUTING,
    VERIFY_READ,
    ServiceFlow,
    fake_grounder,
    good_return,
    spawn_perms,
    start_wide_run,
)

NODES = 64
CHILDREN = 16
CHECKPOINTS = (10, 500, 2000)
COUNTED = 2  # submissions per warm path whose calls are counted, at each checkpoint


async def _grow_to(flow: ServiceFlow, target: int, node: list[int]) -> int:
    """Cast and return packets, finishing nodes as their 16 casts are used, until ``target``."""
    service, b = flow.service, flow.b
    count = len((await service.get_run(b.run_id)).artifacts)
    while count < target:
        current = node[0]
        casts = node[1]
        if casts == CHILDREN:
            result = b.result(
                f"result-{current}", node=f"node-{current}", evidence="evidence-1", criteria=()
            )
            await flow.submit("WorkResult", result)
            node[0], node[1] = current + 1, 0
            count += 1
            continue
        admission = await service.cast(
            b.run_id,
            cast_type="explore",
            routing=ROUTING,
            budget=BUDGET,
            brief="Find where the retry limit is defined; see the pointers.",
            pointers=["repo://src/retry.py"],
        )
        await service.return_packet(b.run_id, admission.cast_id, good_return())
        node[1] += 1
        count += 2
    return count


async def _burst(
    flow: ServiceFlow, other: Controller, label: int, burst: int, out: dict[str, list[float]]
) -> None:
    b = flow.b
    for index in range(burst):
        body = b.evidence(f"ev-s-{label}-{index}")
        t0 = time.perf_counter()
        await flow.submit("Evidence", body)
        out.setdefault("service", []).append(time.perf_counter() - t0)
    for index in range(burst + 1):
        body = b.evidence(f"ev-c-{label}-{index}")
        t0 = time.perf_counter()
        await other.submit_artifact(b.run_id, *flow.token(), "Evidence", body)
        seconds = time.perf_counter() - t0
        out.setdefault("controller_cold" if index == 0 else "controller_warm", []).append(seconds)


async def _calls(flow: ServiceFlow, other: Controller, label: int) -> dict[str, float]:
    """Python function calls per submission, on the service and on the warm controller."""
    b = flow.b
    counts: dict[str, float] = {}
    for path in ("service", "controller_warm"):
        profile = cProfile.Profile()
        for index in range(COUNTED):
            body = b.evidence(f"ev-n-{path}-{label}-{index}")
            profile.enable()
            if path == "service":
                await flow.submit("Evidence", body)
            else:
                await other.submit_artifact(b.run_id, *flow.token(), "Evidence", body)
            profile.disable()
        counts[path] = pstats.Stats(profile).total_calls / COUNTED  # type: ignore[attr-defined]
    return counts


async def growth(ledger: Ledger, state_dir: str, burst: int) -> dict[str, Any]:
    """Per-call Evidence latency at each checkpoint."""
    results: dict[str, Any] = {}
    async with open_service(
        ledger=ledger,
        repository_root="/repo",
        state_dir=state_dir,
        grounder=fake_grounder,
        cast_types=[EXPLORE],
    ) as service:
        flow = await _wide_execution(service, ledger)
        node = [1, 0]
        for checkpoint in CHECKPOINTS:
            reached = await _grow_to(flow, checkpoint - 1, node)
            other = Controller(ledger)  # a process that has not seen the run yet
            times: dict[str, list[float]] = {}
            await _burst(flow, other, checkpoint, burst, times)
            results[str(checkpoint)] = {
                "artifacts_before": reached,
                **{name: summary(values) for name, values in times.items()},
                "calls_per_submit": await _calls(flow, other, checkpoint),
            }
    return results


async def _wide_execution(
    service: Service, ledger: Ledger, run_id: str = "wide-run"
) -> ServiceFlow:
    flow = await start_wide_run(service, ledger, workers=1, children=CHILDREN, run_id=run_id)
    b = flow.b
    b.permissions = spawn_perms(CHILDREN)
    b.verifications = [VERIFY_READ]
    await flow.ground()
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    nodes = []
    for index in range(1, NODES):
        # A cast is the node's subagent.spawn, which may mutate: the criterion and its
        # verification go to a last node that runs after every casting one.
        node = b.node(f"node-{index}", criteria=(), tools=["repository.read"], calls=1)
        node["budgets"]["maximumChildren"] = CHILDREN
        node["allowedTools"].append("subagent.spawn")
        nodes.append(node)
    ids = [node["id"] for node in nodes]
    nodes.append(b.node("verify", tools=["repository.read"], calls=1, depends_on=ids))
    plan = b.plan(nodes=nodes)
    plan["globalBudgets"]["maximumSubagentDepth"] = 1
    await flow.submit("WorkPlan", plan)
    await flow.submit("Evidence", b.evidence("evidence-1"))
    return flow


async def sizes(ledger: Ledger, state_dir: str, repeats: int) -> dict[str, Any]:
    """Evidence submit latency by content size (1, 8 and 32 KiB of text: the content limit)."""
    results: dict[str, Any] = {}
    async with open_service(
        ledger=ledger, repository_root="/repo", state_dir=state_dir, grounder=fake_grounder
    ) as service:
        flow = await _wide_execution(service, ledger, "size-run")
        for label, size in (("1 KiB", 1024), ("8 KiB", 8192), ("32 KiB", 32_000)):
            times = []
            for index in range(repeats):
                body = flow.b.evidence(f"ev-{size}-{index}")
                body["content"] = "x" * size
                t0 = time.perf_counter()
                await flow.submit("Evidence", body)
                times.append(time.perf_counter() - t0)
            results[label] = summary(times)
    return results


async def concurrency(ledger: Ledger, state_dir: str, per_run: int) -> dict[str, Any]:
    """1, 4 and 16 runs submitting Evidence at once through one service: latency, throughput."""
    results: dict[str, Any] = {}
    async with open_service(
        ledger=ledger, repository_root="/repo", state_dir=state_dir, grounder=fake_grounder
    ) as service:
        for runs in (1, 4, 16):
            flows = [await _wide_execution(service, ledger, f"c{runs}-{i}") for i in range(runs)]
            times: list[float] = []

            async def drive(flow: ServiceFlow, times: list[float] = times) -> None:
                for index in range(per_run):
                    body = flow.b.evidence(f"ev-c-{index}")
                    t0 = time.perf_counter()
                    await flow.submit("Evidence", body)
                    times.append(time.perf_counter() - t0)

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for flow in flows:
                    group.start_soon(drive, flow)
            elapsed = time.perf_counter() - started
            results[str(runs)] = {
                **summary(times),
                "submissions_per_second": round(runs * per_run / elapsed, 1),
            }
    return results


async def paging(ledger: Ledger, repeats: int) -> dict[str, Any]:
    """``get_trace`` pages of 100 at the start, middle and end of a 10,000-event trace."""
    from tests.telic.controller.builders import Flow

    flow = await Flow.start(ledger, "analyze_only")
    run_id = flow.b.run_id
    run = await ledger.get_run(run_id)
    total = 1
    while total < 10_000:
        size = min(500, 10_000 - total)
        events = [
            NewTraceEvent(
                actor="host",
                phase=run.phase,
                event_type="permission_checked",
                permission_decision={
                    "decision": "allow",
                    "capability": "repository.read",
                    "scope": f"src/file{total + i}.py",
                    "policyRefs": [],
                    "rationaleSummary": "Inside the phase's read scope.",
                },
                decision_summary=f"check {total + i}",
                budget_snapshot={
                    "promptRevisions": 1,
                    "postExecutionRemediations": 1,
                    "transportRetries": 0,
                },
            )
            for i in range(size)
        ]
        await ledger.record_events(run_id, events)
        total += size
    controller = Controller(ledger)
    results: dict[str, Any] = {}
    for name, after in (("first_page", 0), ("middle_page", 5_000), ("last_page", 9_900)):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            page = await controller.get_trace(run_id, after, 100)
            times.append(time.perf_counter() - t0)
            assert len(page.events) == 100
        results[name] = summary(times)
    return results


async def measure(kind: str, burst: int) -> dict[str, Any]:
    """Growth and paging on one ledger kind."""
    with tempfile.TemporaryDirectory() as folder:
        url = "memory://" if kind == "memory" else f"sqlite:///{Path(folder) / 'state'}"
        async with open_ledger(url) as ledger:
            grown = await growth(ledger, folder, burst)
            paged = await paging(ledger, 30)
            sized = await sizes(ledger, folder, 10)
            concurrent = await concurrency(ledger, folder, 30)
    return {
        "growth": grown,
        "trace_paging_10000_events": paged,
        "artifact_size": sized,
        "concurrent_runs": concurrent,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=15, help="Evidence timed per checkpoint")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    results: dict[str, Any] = {"commit": commit(), "machine": machine()}
    for kind in ("memory", "sqlite"):
        results[kind] = anyio.run(measure, kind, options.burst)
    json.dump(results, sys.stdout, indent=2)
    print()
    if options.no_readme:
        return
    rows = []
    for kind, label in (("memory", "memory"), ("sqlite", "SQLite")):
        found = results[kind]
        for checkpoint in CHECKPOINTS:
            at = found["growth"][str(checkpoint)]
            for path in ("service", "controller_warm", "controller_cold"):
                what = f"{label}: Evidence submit at artifact {checkpoint:,}, {path}"
                rows.append(row(what, at[path]))
        for path in ("service", "controller_warm"):
            calls = " / ".join(
                f"{found['growth'][str(c)]['calls_per_submit'][path]:,.0f}" for c in CHECKPOINTS
            )
            what = f"{label}: Python calls per Evidence submit at artifact 10 / 500 / 2,000, {path}"
            rows.append([today(), commit(), machine(), what, calls, "", "deterministic"])
        for page, stats in found["trace_paging_10000_events"].items():
            rows.append(row(f"{label}: get_trace {page.replace('_', ' ')} of 10,000", stats))
        for size, stats in found["artifact_size"].items():
            rows.append(row(f"{label}: Evidence submit, {size} of content, service", stats))
        for runs, stats in found["concurrent_runs"].items():
            rate = f"{stats['submissions_per_second']:,.0f} submissions/s"
            rows.append(row(f"{label}: {runs} concurrent run(s), service ({rate})", stats))
    append_rows("Cost growth — `benchmarks/growth.py`", COLUMNS, rows)


if __name__ == "__main__":
    main()
