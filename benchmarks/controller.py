"""Time per accepted phase artifact, in process, on the memory and SQLite ledgers.

Each run is the analyze_only happy path (eight phase artifacts after grounding, one Evidence
that is not counted). Three ways of submitting are timed:

- ``service``: ``telic.roles.open_service`` — run actor, role actor, controller, ledger;
- ``controller``: the bare ``Controller.submit_artifact``;
- ``split``: the same calls the controller makes, each timed by the benchmark itself so that
  nothing is added to production code: ``load`` (the run's state), ``schema`` (``parse_artifact``
  of the body), ``invariants`` (the rest of ``step``: references, rule checks, transition),
  ``next_action`` and ``commit`` (the ledger transaction, with its fsyncs on SQLite).

Run: ``python benchmarks/controller.py [--runs N] [--no-readme]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, commit, machine, row, summary

from telic.controller import Accepted, StartRequest, SubmitArtifact, Token, next_action, step
from telic.ledger import Ledger, open_ledger
from telic.protocol import parse_artifact
from telic.roles import open_service
from tests.telic.controller.builders import READ, Flow, Run
from tests.telic.roles.kit import VERIFY_READ, fake_grounder

Submit = Callable[[str, Any], Awaitable[Any]]


def _phases(b: Run) -> list[tuple[str, Callable[[], Any], bool]]:
    """(type, body, counted) of the analyze_only happy path after grounding."""
    return [
        ("ProblemFrame", b.frame, True),
        ("TaskContract", b.contract, True),
        ("PromptReview", b.prompt_review, True),
        ("WorkPlan", lambda: b.plan(nodes=[b.node(tools=["repository.read"])]), True),
        ("Evidence", b.evidence, False),
        ("WorkResult", b.result, True),
        ("QualityReview", lambda: b.quality_review(verifications=["VR-1"]), True),
        ("ReleaseAudit", b.audit, True),
        ("UserReport", lambda: b.report(verifications=["evidence-1"]), True),
    ]


def _builder(run_id: str, request_id: str) -> Run:
    b = Run(run_id=run_id, mode="analyze_only")
    b._request_id = request_id
    b.permissions = READ
    b.verifications = [VERIFY_READ]
    return b


async def _controller_run(ledger: Ledger, times: list[float]) -> None:
    flow = await Flow.start(ledger, "analyze_only", new_id=lambda: str(uuid.uuid4()))
    flow.b.permissions, flow.b.verifications = READ, [VERIFY_READ]
    await flow.ground()
    for kind, body, counted in _phases(flow.b):
        value = body()
        started = time.perf_counter()
        await flow.submit(kind, value)
        if counted:
            times.append(time.perf_counter() - started)


async def _split_run(ledger: Ledger, parts: dict[str, list[float]]) -> None:
    flow = await Flow.start(ledger, "analyze_only", new_id=lambda: str(uuid.uuid4()))
    flow.b.permissions, flow.b.verifications = READ, [VERIFY_READ]
    await flow.ground()
    controller, run_id = flow.controller, flow.b.run_id
    clock = time.perf_counter
    for kind, body, counted in _phases(flow.b):
        value = body()
        t0 = clock()
        state = await controller.load(run_id)
        t1 = clock()
        parse_artifact(kind, value)
        t2 = clock()
        now = f"2026-01-01T00:00:{len(state.artifacts) % 60:02d}.000Z"
        outcome = step(state, SubmitArtifact(Token(*flow.token()), kind, value, (), now))
        t3 = clock()
        assert isinstance(outcome, Accepted), outcome
        next_action(outcome.state)
        t4 = clock()
        settled = await controller.settle(run_id, state, outcome, now)
        t5 = clock()
        assert not isinstance(settled, Exception), settled
        flow.last = settled
        if counted:
            # settle() computes the next action again before its ledger transaction.
            for name, seconds in (
                ("load", t1 - t0),
                ("schema", t2 - t1),
                ("invariants", t3 - t2 - (t2 - t1)),
                ("next_action", t4 - t3),
                ("commit", t5 - t4 - (t4 - t3)),
                ("total", (t1 - t0) + (t3 - t2) + (t5 - t4)),
            ):
                parts.setdefault(name, []).append(seconds)


async def _service_runs(ledger: Ledger, state_dir: str, runs: int) -> list[float]:
    times: list[float] = []
    async with open_service(
        ledger=ledger, repository_root="/repo", state_dir=state_dir, grounder=fake_grounder
    ) as service:
        for _ in range(runs):
            started = await service.start_run(StartRequest("Find the retry limit", "analyze_only"))
            run_id = started.run.run_id
            details = await service.get_run(run_id)
            b = _builder(run_id, details.artifacts[0].artifact_id)
            last: Any = await service.ground(run_id, started.next_action.id, started.run.version)
            for kind, body, counted in _phases(b):
                value = body()
                t0 = time.perf_counter()
                last = await service.submit_artifact(
                    run_id, last.next_action.id, last.run.version, kind, value
                )
                if counted:
                    times.append(time.perf_counter() - t0)
    return times


async def measure(kind: str, runs: int) -> dict[str, Any]:
    """All three measurements on one ledger kind."""
    with tempfile.TemporaryDirectory() as folder:
        url = "memory://" if kind == "memory" else f"sqlite:///{Path(folder) / 'state'}"
        async with open_ledger(url) as ledger:
            await _controller_run(ledger, [])  # warm-up: imports, schema caches
            controller: list[float] = []
            parts: dict[str, list[float]] = {}
            for _ in range(runs):
                await _controller_run(ledger, controller)
                await _split_run(ledger, parts)
            service = await _service_runs(ledger, folder, runs)
    return {
        "service": summary(service),
        "controller": summary(controller),
        "split": {name: summary(values) for name, values in parts.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    results: dict[str, Any] = {"commit": commit(), "machine": machine(), "runs": options.runs}
    for kind in ("memory", "sqlite"):
        results[kind] = anyio.run(measure, kind, options.runs)
    json.dump(results, __import__("sys").stdout, indent=2)
    print()
    if options.no_readme:
        return
    rows = []
    for kind, label in (("memory", "memory"), ("sqlite", "SQLite")):
        found = results[kind]
        rows.append(row(f"{label}: per phase artifact, service", found["service"]))
        rows.append(row(f"{label}: per phase artifact, bare Controller", found["controller"]))
        for part in ("load", "schema", "invariants", "next_action", "commit"):
            rows.append(row(f"{label}: split — {part}", found["split"][part]))
    append_rows("Controller core — `benchmarks/controller.py`", COLUMNS, rows)


if __name__ == "__main__":
    main()
