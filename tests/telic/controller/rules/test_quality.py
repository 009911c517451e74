"""QualityReview invariants: lineage, progression, coverage, exact evidence and work orders."""

from __future__ import annotations

from typing import Any

import pytest

from telic.ledger import open_ledger
from tests.telic.controller.builders import FIX, JSON, READ, Flow
from tests.telic.controller.rules.harness import executing, judging, planning, refuse

pytestmark = pytest.mark.anyio


def gate(flow: Flow, targets: tuple[str, ...] = ("AC-2",), **order: Any) -> JSON:
    """A supported diagnosis gate whose correction order writes ``src/**``."""
    b = flow.b
    return {
        "id": "GATE-1",
        "status": "supported",
        "rootCause": "The parser skips a token",
        "directEvidenceRefs": [b.uri("evidence-1")],
        "correctionWorkOrder": {
            "id": "CWO-1",
            "targetCriterionIds": list(targets),
            "objective": "Fix the parser",
            "allowedCapabilities": ["repository.read", "repository.write"],
            "permissions": FIX,
            "sourceRefs": [b.uri("evidence-1")],
            "maximumToolCalls": 20,
            "rationaleSummary": "Scoped fix.",
        }
        | order,
        "withinApprovedScope": True,
        "permissionsSufficient": True,
        "rationaleSummary": "Supported diagnosis.",
    }


def proceed(flow: Flow, **order: Any) -> JSON:
    """The analyze_and_fix proceed_to_fix review of the diagnosis."""
    return flow.b.quality_review(
        "QR-01",
        criteria=["AC-1"],
        verifications=["VR-DIAG"],
        decision="proceed_to_fix",
        diagnosisGate=gate(flow, **order),
    )


async def _judging_with_second_evidence(ledger: Any) -> Flow:
    flow = await executing(ledger)
    await flow.submit("Evidence", flow.b.evidence("evidence-2"))
    await flow.submit("WorkResult", flow.b.result())
    return flow


@pytest.mark.rule("QR-REMAINING-REMEDIATIONS")
async def test_remaining_remediations_match_the_counter() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        await refuse(
            flow, "QualityReview", flow.b.quality_review(verifications=["VR-1"], remaining=0)
        )
        await flow.submit("QualityReview", flow.b.quality_review(verifications=["VR-1"]))


@pytest.mark.rule("QR-CONTRACT-LATEST")
async def test_a_review_judges_against_the_latest_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(verifications=["VR-1"], contract="plan-1")
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-CURRENT-WORK")
async def test_a_review_names_exactly_the_latest_plans_results() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        await refuse(
            flow, "QualityReview", flow.b.quality_review(results=(), verifications=["VR-1"])
        )


@pytest.mark.rule("QR-PROGRESSION")
async def test_pass_needs_every_node_completed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        b = flow.b
        read = ["repository.read"]
        await flow.submit(
            "WorkPlan", b.plan(nodes=[b.node("n1", tools=read), b.node("n2", tools=read)])
        )
        await flow.submit("Evidence", b.evidence())
        partial = b.result(node="n1", status="partial")
        await flow.submit("WorkResult", partial)
        await refuse(flow, "QualityReview", b.quality_review(verifications=["VR-1"]))
        partial_review = b.quality_review(decision="partial", verifications=["VR-1"])
        await flow.submit("QualityReview", partial_review)


@pytest.mark.rule("QR-PROCEED-BEFORE-UNLOCK")
async def test_proceed_to_fix_belongs_to_analyze_and_fix() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(
            verifications=["VR-1"], decision="proceed_to_fix", diagnosisGate=gate(flow, ("AC-1",))
        )
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-GATE-BEFORE-PASS")
async def test_analyze_and_fix_cannot_pass_before_its_gate() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger, "analyze_and_fix")
        bad = flow.b.quality_review("QR-01", criteria=["AC-1"], verifications=["VR-DIAG"])
        await refuse(flow, "QualityReview", bad)
        await flow.submit("QualityReview", proceed(flow))


@pytest.mark.rule("QR-PASS-NEEDS-MUTATION")
async def test_a_passing_fix_needs_a_mutation() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger, "fix_only")
        b = flow.b
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
        await flow.submit("Evidence", b.evidence())
        await flow.submit("WorkResult", b.result())
        await refuse(flow, "QualityReview", b.quality_review(verifications=["VR-1"]))


@pytest.mark.rule("QR-STAGE-COVERAGE")
@pytest.mark.parametrize("criteria", [("AC-1", "AC-1"), ("AC-1", "AC-9")])
async def test_acceptance_results_cover_the_stage_once(criteria: tuple[str, ...]) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(criteria=criteria, verifications=["VR-1"], decision="partial")
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-VERIFICATION-COVERAGE")
@pytest.mark.parametrize("problem", ["missing", "capability"])
async def test_verification_results_cover_the_requirements(problem: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(verifications=["VR-1"], decision="partial")
        if problem == "missing":
            bad["verificationResults"] = []
        else:
            bad["verificationResults"][0]["capability"] = "shell.inspect"
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-REQUIRED-VERIFICATION-PASS")
async def test_pass_needs_every_required_verification_to_pass() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        bad = flow.b.quality_review(verifications=["VR-1"])
        bad["verificationResults"][0]["status"] = "unverified"
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-PASS-EXACT-COVERAGE-EVIDENCE")
@pytest.mark.parametrize("evidence", [["evidence-1", "evidence-2"], ["evidence-2"]])
async def test_a_passing_result_repeats_the_coverage_evidence_exactly(evidence: list[str]) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _judging_with_second_evidence(ledger)
        bad = flow.b.quality_review(verifications=["VR-1"])
        bad["acceptanceResults"][0]["evidenceRefs"] = [flow.b.uri(e) for e in evidence]
        await refuse(flow, "QualityReview", bad)
        await flow.submit("QualityReview", flow.b.quality_review(verifications=["VR-1"]))


@pytest.mark.rule("QR-VERIFICATION-BACKED")
async def test_a_passing_verification_is_backed_by_a_read_only_action() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _judging_with_second_evidence(ledger)
        bad = flow.b.quality_review(verifications=["VR-1"])
        bad["verificationResults"][0]["evidenceRefs"] = [flow.b.uri("evidence-2")]
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-RULE-COMPLIANCE")
async def test_rule_compliance_judges_exactly_the_contract_rules() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        check = {
            "id": "RC-1",
            "subjectRef": flow.b.request,
            "description": "Follows the rules",
            "status": "pass",
            "evidenceRefs": [flow.b.uri("evidence-1")],
            "rationaleSummary": "Fine.",
        }
        bad = flow.b.quality_review(verifications=["VR-1"], ruleCompliance=[check])
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("QR-CORRECTION-ORDER")
@pytest.mark.parametrize("problem", ["targets", "unbacked", "permissions"])
async def test_a_correction_order_targets_the_completion_criteria(problem: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger, "analyze_and_fix")
        if problem == "targets":
            bad = proceed(flow, targetCriterionIds=["AC-1"])
        elif problem == "unbacked":
            bad = proceed(flow, allowedCapabilities=["repository.read", "shell.inspect"])
        else:
            wider = FIX | {"repository": {"read": ["**"], "write": ["**"], "delete": ["**"]}}
            bad = proceed(flow, permissions=wider)
        await refuse(flow, "QualityReview", bad)


def _remediate(flow: Flow, **order: Any) -> JSON:
    b = flow.b
    return b.quality_review(
        decision="remediate", verifications=["VR-1"], remediationWorkOrder=b.remediation() | order
    )


@pytest.mark.rule("QR-REMEDIATION-ORDER")
@pytest.mark.parametrize("problem", ["criteria", "permissions", "unbacked", "none"])
async def test_a_remediation_order_stays_in_its_stage_and_authority(problem: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        change: dict[str, Any] = {
            "criteria": {"failedCriterionIds": ["AC-9"]},
            "permissions": {"permissions": FIX},
            "unbacked": {"allowedCapabilities": ["shell.inspect"]},
            "none": {"allowedCapabilities": []},
        }[problem]
        await refuse(flow, "QualityReview", _remediate(flow, **change))
        await flow.submit("QualityReview", _remediate(flow))


@pytest.mark.rule("QR-REMEDIATION-SOURCES")
async def test_a_remediation_order_cites_the_work_it_answers() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        await refuse(flow, "QualityReview", _remediate(flow, sourceRefs=[flow.b.request]))


async def test_read_permissions_are_the_analyze_only_remediation_ceiling() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger, "analyze_and_fix")
        b = flow.b
        order = b.remediation(criteria=("AC-1",), permissions=READ)
        review = b.quality_review(
            "QR-01",
            criteria=["AC-1"],
            verifications=["VR-DIAG"],
            decision="remediate",
            remediationWorkOrder=order,
        )
        await flow.submit("QualityReview", review)
