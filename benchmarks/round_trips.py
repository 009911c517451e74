"""Ledger round trips per call: how many ledger methods one service call or observation asks for.

On PostgreSQL every ledger call is a network round trip, so the count is a cost of its own,
beside time. A "read" is a call of ``read_changes``, ``list_artifacts`` or ``get_run``. This
replaces call-count assertions that used to sit in the test suite (a test asserts behaviour; a
count is a measurement). Each figure is counted over ``--runs`` runs of
the analyze_only happy path on the memory ledger, by a counting wrapper around the ledger:

- ``ground``: the first call after ``start_run`` (the run actor starts; no recovery pass);
- ``phase submission``: each of the eight phase artifacts after grounding (a decision type such
  as PromptReview reads its own state once more);
- ``observe after one artifact``: ``TelemetryObserver.observe`` following a run one step;
- ``cached load``: ``Controller.load`` of a run the controller started and still holds;
- ``Controller.get_run``: the run record, artifact list and next action of that run.

Run: ``python benchmarks/round_trips.py [--runs N] [--no-readme]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from typing import Any

import anyio
from _common import append_rows, commit, machine, today

from telic.controller import StartRequest
from telic.ledger import open_ledger
from telic.roles import open_service
from telic.telemetry import TelemetryObserver
from tests.telic.controller.builders import READ, Flow, Run
from tests.telic.controller.counting import CountingLedger
from tests.telic.roles.kit import VERIFY_READ, fake_grounder

PHASES = (
    "ProblemFrame",
    "TaskContract",
    "PromptReview",
    "WorkPlan",
    "Evidence",
    "WorkResult",
    "QualityReview",
    "ReleaseAudit",
    "UserReport",
)


def _bodies(b: Run) -> dict[str, Any]:
    return {
        "ProblemFrame": b.frame,
        "TaskContract": b.contract,
        "PromptReview": b.prompt_review,
        "WorkPlan": lambda: b.plan(nodes=[b.node(tools=["repository.read"])]),
        "Evidence": b.evidence,
        "WorkResult": b.result,
        "QualityReview": lambda: b.quality_review(verifications=["VR-1"]),
        "ReleaseAudit": b.audit,
        "UserReport": lambda: b.report(verifications=["evidence-1"]),
    }


async def _service_run(counts: dict[str, list[int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with open_ledger("memory://") as inner:
            counting = CountingLedger(inner)
            async with open_service(
                ledger=counting.ledger,
                repository_root="/repo",
                state_dir=folder,
                grounder=fake_grounder,
            ) as service:
                started = await service.start_run(
                    StartRequest("Find the retry limit", "analyze_only")
                )
                run_id = started.run.run_id
                details = await service.get_run(run_id)
                b = Run(run_id=run_id, mode="analyze_only")
                b._request_id = details.artifacts[0].artifact_id
                b.permissions = READ
                b.verifications = [VERIFY_READ]
                counting.calls.clear()
                last: Any = await service.ground(
                    run_id, started.next_action.id, started.run.version
                )
                counts.setdefault("ground", []).append(counting.reads())
                bodies = _bodies(b)
                for kind in PHASES:
                    counting.calls.clear()
                    last = await service.submit_artifact(
                        run_id, last.next_action.id, last.run.version, kind, bodies[kind]()
                    )
                    counts.setdefault(f"submit {kind}", []).append(counting.reads())


async def _observer_run(counts: dict[str, list[int]]) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        flow.b.permissions = READ
        await flow.ground()
        counting = CountingLedger(ledger)
        observer = TelemetryObserver(TracerProvider())
        await observer.observe(counting.ledger, flow.b.run_id)
        await flow.submit("ProblemFrame", flow.b.frame())
        counting.calls.clear()
        await observer.observe(counting.ledger, flow.b.run_id)
        counts.setdefault("observe after one artifact", []).append(counting.reads())
        observer.close()


async def _cached_load(counts: dict[str, list[int]]) -> None:
    async with open_ledger("memory://") as ledger:
        counting = CountingLedger(ledger)
        flow = await Flow.start(counting.ledger, "analyze_only")
        counting.calls.clear()
        await flow.controller.load(flow.b.run_id)
        counts.setdefault("cached load", []).append(counting.reads())
        counting.calls.clear()
        await flow.controller.get_run(flow.b.run_id)
        counts.setdefault("Controller.get_run", []).append(counting.reads())


async def measure(runs: int) -> dict[str, dict[str, float]]:
    counts: dict[str, list[int]] = {}
    for _ in range(runs):
        await _service_run(counts)
        await _observer_run(counts)
        await _cached_load(counts)
    result: dict[str, dict[str, float]] = {}
    for name, values in counts.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        result[name] = {"n": len(values), "median": statistics.median(values), "p95": p95}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    found = anyio.run(measure, options.runs)
    results = {"commit": commit(), "machine": machine(), "runs": options.runs, "calls": found}
    json.dump(results, sys.stdout, indent=2)
    print()
    if options.no_readme:
        return
    rows = [
        [today(), results["commit"], results["machine"], name, stats["median"], stats["p95"]]
        for name, stats in found.items()
    ]
    append_rows(
        "Ledger round trips — `benchmarks/round_trips.py`",
        ["date", "commit", "machine", "call", "ledger reads (median)", "p95"],
        rows,
    )


if __name__ == "__main__":
    main()
