"""A refused derived value comes back as ``expected``: exactly what would have passed.

Each test breaks one rule whose passing value the controller can compute, checks the issue's
``expected`` (as the wire carries it) and that submitting that value is accepted. ``refuse``
also proves the refusal changed nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from telic._errors import Issue, _bounded_expected, issues_to_wire
from telic.ledger import open_ledger
from tests.telic.controller.rules.harness import (
    auditing,
    completed_report,
    executing,
    framed,
    judging,
    refuse,
    reporting,
    reviewing,
)

pytestmark = pytest.mark.anyio


def _expected(error: Any, rule: str) -> Any:
    (issue,) = [i.to_wire() for i in error.issues if i.rule == rule]
    assert "expected" in issue, issue
    return issue["expected"]


@pytest.mark.rule("PR-COVERAGE")
async def test_a_wrong_coverage_map_is_answered_with_the_map() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        right = flow.b.prompt_review()
        wrong = flow.b.prompt_review()
        wrong["coverage"] = wrong["coverage"][:1]
        expected = _expected(await refuse(flow, "PromptReview", wrong), "PR-COVERAGE")
        assert [e["sourceRef"] for e in expected] == [
            flow.b.request,
            flow.b.uri("frame-1"),
            flow.b.uri("contract-1"),
        ]
        by_ref = {e["sourceRef"]: set(e["contractFields"]) for e in right["coverage"]}
        assert {e["sourceRef"]: set(e["contractFields"]) for e in expected} == by_ref
        right["coverage"] = [{**e, "status": "covered"} for e in expected]
        await flow.submit("PromptReview", right)


@pytest.mark.rule("TC-CONTEXT-REFS")
async def test_missing_context_refs_are_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        frame = flow.b.frame()
        fact = {"id": "F-2", "claim": "x", "provenance": "repository"}
        frame["knownFacts"].append({**fact, "sourceRef": "repo://src/file0.py"})
        await flow.submit("ProblemFrame", frame)
        error = await refuse(flow, "TaskContract", flow.b.contract())
        expected = _expected(error, "TC-CONTEXT-REFS")
        assert expected == ["repo://src/file0.py"]
        await flow.submit("TaskContract", flow.b.contract(contextRefs=expected))


@pytest.mark.rule("QR-STAGE-COVERAGE")
async def test_the_stage_criteria_are_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(criteria=("AC-9",), verifications=["VR-1"], decision="partial")
        error = await refuse(flow, "QualityReview", bad)
        assert _expected(error, "QR-STAGE-COVERAGE") == ["AC-1"]


@pytest.mark.rule("QR-CURRENT-WORK")
async def test_the_current_results_are_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(results=(), verifications=["VR-1"])
        error = await refuse(flow, "QualityReview", bad)
        assert _expected(error, "QR-CURRENT-WORK") == [flow.b.uri("result-1")]


@pytest.mark.rule("RA-LINEAGE")
async def test_the_audit_lineage_is_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        error = await refuse(flow, "ReleaseAudit", flow.b.audit(results=()))
        assert _expected(error, "RA-LINEAGE") == [flow.b.uri("result-1")]


@pytest.mark.rule("UR-VERIFICATION-REFS")
async def test_the_verification_refs_are_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        error = await refuse(flow, "UserReport", completed_report(flow, verificationRefs=[]))
        expected = _expected(error, "UR-VERIFICATION-REFS")
        assert expected
        await flow.submit("UserReport", completed_report(flow, verificationRefs=expected))


@pytest.mark.rule("UR-TRACE-REF")
async def test_the_trace_ref_is_given() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        error = await refuse(flow, "UserReport", completed_report(flow, traceRef="trace://x"))
        assert _expected(error, "UR-TRACE-REF") == f"trace://{flow.b.run_id}"


def test_a_large_expected_value_is_cut_and_the_message_says_so() -> None:
    refs = [f"artifact://run-1/evidence-{i:04d}" for i in range(200)]
    wire = Issue("contextRefs", "invariant", "contextRefs must include…", "X", refs).to_wire()
    shown = wire["expected"]
    assert isinstance(shown, list)
    assert 0 < len(shown) < 200
    assert shown == refs[: len(shown)]
    assert f"first {len(shown)} of 200" in str(wire["message"])
    assert len(str(wire)) < 1600
    assert _bounded_expected("short") == ("short", "")


def test_an_issue_without_expected_keeps_the_1_0_keys() -> None:
    wire = Issue("id", "invariant", "message", "R").to_wire()
    assert set(wire) == {"path", "code", "message", "rule"}


@pytest.mark.rule("RUN-RESUME-LINEAGE")
async def test_the_resumed_lineage_is_given() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await flow.submit("ClarificationRequest", flow.b.clarification())
        await flow.answer("keep")
        error = await refuse(flow, "ProblemFrame", flow.b.frame(), [flow.b.uri("clar-1")])
        expected = _expected(error, "RUN-RESUME-LINEAGE")
        assert expected[0] == flow.b.uri("clar-1")
        await flow.submit("ProblemFrame", flow.b.frame(), expected)


@pytest.mark.rule("WR-COMPLETED-CAPABILITIES")
async def test_the_required_capabilities_are_listed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        error = await refuse(flow, "WorkResult", flow.b.result(actions=[]))
        assert _expected(error, "WR-COMPLETED-CAPABILITIES") == ["repository.read"]


def test_the_expected_values_of_one_refusal_share_one_budget() -> None:
    refs = [f"artifact://run-1/evidence-{i:04d}" for i in range(200)]
    issues = tuple(Issue(f"p{i}", "invariant", "m", "X", refs) for i in range(4))
    wire = issues_to_wire(issues)
    kept = [entry for entry in wire if "expected" in entry]
    assert len(kept) == 1  # the first, cut to 1 KB; the rest say they were left out
    assert all("left out" in str(entry["message"]) for entry in wire[1:])
    assert len(json.dumps(wire)) < 2048
