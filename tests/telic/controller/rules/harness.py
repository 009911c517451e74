"""Drive a run to any phase, then prove that a violating submission is refused without change.

``refuse`` submits through the driver, asserts the error class and that it names the rule(s) of
the running test's ``rule`` marker, and compares the run before and after: same version, same
artifacts, same trace — except for the DENY records a read-only WorkResult leaves (``deny``).
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from telic._errors import RuleViolation, TelicError
from telic.ledger import Ledger
from tests.telic.controller.builders import FIX, JSON, READ, Flow, criterion

MARKED: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("marked", default=())

VR = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read it back",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}
VR_DIAG = VR | {"id": "VR-DIAG", "stage": "diagnosis", "description": "Find it"}
VR_COMP = VR | {"id": "VR-COMP"}
DIFF_HASH = "sha256:" + "c" * 64


@dataclass(frozen=True)
class Snapshot:
    """What a rejection must leave unchanged."""

    version: int
    artifacts: tuple[Any, ...]
    trace: tuple[str, ...]


async def snapshot(flow: Flow) -> Snapshot:
    """Return the run's version, artifact records and trace event ids."""
    details = await flow.controller.get_run(flow.b.run_id)
    trace = await flow.controller.get_trace(flow.b.run_id, limit=500)
    return Snapshot(details.run.version, details.artifacts, tuple(e.id for e in trace.events))


async def refuse(
    flow: Flow,
    artifact_type: str,
    body: JSON,
    refs: Sequence[str] = (),
    *,
    error: type[TelicError] = RuleViolation,
    rules: Sequence[str] | None = None,
    deny: int = 0,
) -> TelicError:
    """Submit ``body``, expect ``error`` naming the marked rules, and an unchanged run."""
    expected = tuple(rules) if rules is not None else MARKED.get()
    assert expected, "mark the test with @pytest.mark.rule(...) or pass rules="
    before = await snapshot(flow)
    with pytest.raises(error) as caught:
        await flow.controller.submit_artifact(
            flow.b.run_id, *flow.token(), artifact_type, body, list(refs)
        )
    for rule in expected:
        assert rule in caught.value.rules, (rule, caught.value.rules, caught.value.message)
    after = await snapshot(flow)
    assert (after.version, after.artifacts) == (before.version, before.artifacts)
    assert after.trace[: len(before.trace)] == before.trace
    assert len(after.trace) - len(before.trace) == deny
    assert len(caught.value.message) <= 800
    assert len(caught.value.issues) <= 32
    assert all(issue.path or issue.rule for issue in caught.value.issues)
    return caught.value


def fix_result(
    flow: Flow,
    wid: str = "result-1",
    plan: str = "plan-1",
    node: str = "node-1",
    evidence: str = "evidence-1",
    criteria: tuple[str, ...] = ("AC-1",),
    path: str = "src/fix.py",
) -> JSON:
    """A completed write of ``path`` followed by a read-back, with its FileChange."""
    b = flow.b
    actions = [
        b.action("A-1", "repository.write", path, evidence),
        b.action("A-2", "repository.read", path, evidence),
    ]
    files = [
        {
            "path": path,
            "changeType": "created",
            "beforeHash": None,
            "afterHash": DIFF_HASH,
            "diffRef": b.uri(evidence),
        }
    ]
    return b.result(
        wid,
        plan=plan,
        node=node,
        evidence=evidence,
        criteria=criteria,
        actions=actions,
        files=files,
    )


# ------------------------------------------------------------------ reaching a phase


async def framed(
    ledger: Ledger, mode: str = "analyze_only", documents: int = 1, **start: Any
) -> Flow:
    """A grounded run waiting for its ProblemFrame (``start``: more ``Flow.start`` arguments)."""
    flow = await Flow.start(ledger, mode, **start)
    flow.b.permissions = FIX if mode in ("fix_only", "analyze_and_fix") else READ
    flow.b.verifications = [VR]
    if mode in ("report_only", "plan_only"):
        flow.b.verifications = []
        flow.b.permissions = READ if mode == "plan_only" else flow.b.permissions
    if mode == "analyze_and_fix":
        flow.b.criteria = [criterion("AC-1", "diagnosis"), criterion("AC-2", "completion")]
        flow.b.verifications = [VR_DIAG, VR_COMP]
    await flow.ground(documents)
    return flow


async def compiling(ledger: Ledger, mode: str = "analyze_only", **start: Any) -> Flow:
    """A run waiting for its v1 TaskContract."""
    flow = await framed(ledger, mode, **start)
    await flow.submit("ProblemFrame", flow.b.frame())
    return flow


async def reviewing(ledger: Ledger, mode: str = "analyze_only", **start: Any) -> Flow:
    """A run waiting for its PromptReview."""
    flow = await compiling(ledger, mode, **start)
    await flow.submit("TaskContract", flow.b.contract())
    return flow


async def revising(ledger: Ledger) -> Flow:
    """An analyze_only run whose review asked to revise the objective."""
    flow = await reviewing(ledger)
    await flow.submit("PromptReview", flow.b.prompt_review(decision="revise"))
    return flow


async def planning(ledger: Ledger, mode: str = "analyze_only", **start: Any) -> Flow:
    """A run waiting for its first WorkPlan."""
    flow = await reviewing(ledger, mode, **start)
    await flow.submit("PromptReview", flow.b.prompt_review())
    return flow


def first_plan(flow: Flow) -> JSON:
    """The default first plan of the run's mode."""
    b = flow.b
    if b.mode in ("report_only", "plan_only"):
        return b.plan(nodes=[b.node(calls=0)])
    if b.mode == "fix_only":
        return b.plan(nodes=[b.node(tools=["repository.read", "repository.write"], calls=10)])
    if b.mode == "analyze_and_fix":
        return b.plan(nodes=[b.node("diag", ["AC-1"], ["repository.read"], READ)])
    return b.plan(nodes=[b.node(tools=["repository.read"])])


async def executing(
    ledger: Ledger, mode: str = "analyze_only", kind: str = "repository", **start: Any
) -> Flow:
    """A run executing its first plan, with evidence-1 already captured."""
    flow = await planning(ledger, mode, **start)
    await flow.submit("WorkPlan", first_plan(flow))
    await flow.submit("Evidence", flow.b.evidence(kind="diff" if mode == "fix_only" else kind))
    return flow


def first_result(flow: Flow) -> JSON:
    """The default completed result of the first plan."""
    b = flow.b
    if b.mode == "fix_only":
        return fix_result(flow)
    if b.mode == "analyze_and_fix":
        return b.result(node="diag")
    return b.result()


async def judging(ledger: Ledger, mode: str = "analyze_only") -> Flow:
    """A run waiting for its QualityReview (plan-only modes skip execution)."""
    if mode in ("report_only", "plan_only"):
        flow = await planning(ledger, mode)
        await flow.submit("WorkPlan", first_plan(flow))
        return flow
    flow = await executing(ledger, mode)
    await flow.submit("WorkResult", first_result(flow))
    return flow


def passing_review(flow: Flow) -> JSON:
    """The default passing QualityReview of the run's mode."""
    b = flow.b
    if b.mode in ("report_only", "plan_only"):
        return b.quality_review(results=(), evidence="plan-1")
    return b.quality_review(verifications=["VR-1"])


async def auditing(ledger: Ledger, mode: str = "analyze_only") -> Flow:
    """A run waiting for its ReleaseAudit after a passing review."""
    flow = await judging(ledger, mode)
    await flow.submit("QualityReview", passing_review(flow))
    return flow


def releasing_audit(flow: Flow, **over: Any) -> JSON:
    """The default releasing audit of the run's mode."""
    b = flow.b
    if b.mode in ("report_only", "plan_only"):
        return b.audit(results=(), evidence=("plan-1",), **over)
    return b.audit(**over)


async def reporting(ledger: Ledger, mode: str = "analyze_only", decision: str = "release") -> Flow:
    """A run waiting for its UserReport after an audit with ``decision``."""
    flow = await auditing(ledger, mode)
    await flow.submit(
        "ReleaseAudit",
        releasing_audit(flow) if decision == "release" else flow.b.audit(decision=decision),
    )
    return flow


def completed_report(flow: Flow, **over: Any) -> JSON:
    """The default completed report after a release."""
    b = flow.b
    if b.mode in ("report_only", "plan_only"):
        return b.report(evidence=("plan-1",)) | over
    return b.report(verifications=["evidence-1"]) | over
