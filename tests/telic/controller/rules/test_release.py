"""ReleaseAudit and UserReport invariants."""

from __future__ import annotations

from typing import Any

import pytest

from telic._errors import SchemaViolation
from telic.ledger import open_ledger
from tests.telic.controller.builders import JSON, READ, Flow
from tests.telic.controller.rules.harness import (
    auditing,
    completed_report,
    judging,
    refuse,
    reporting,
    reviewing,
)

pytestmark = pytest.mark.anyio


def _defect(flow: Flow, **over: Any) -> JSON:
    return {
        "id": "DEF-1",
        "failedCriterionIds": ["AC-1"],
        "description": "Unproven",
        "allowedCapabilities": ["repository.read"],
        "permissions": READ,
        "sourceRefs": [flow.b.uri("qr-1")],
        "maximumToolCalls": 50,
        "returnToRole": "quality_controller",
        "rationaleSummary": "Again.",
    } | over


async def _after_review(ledger: Any, decision: str, **over: Any) -> Flow:
    flow = await judging(ledger)
    review = flow.b.quality_review(decision=decision, verifications=["VR-1"], remaining=1, **over)
    await flow.submit("QualityReview", review)
    return flow


@pytest.mark.rule("RA-REMAINING-REMEDIATIONS")
async def test_audit_remediations_match_the_counter() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        await refuse(flow, "ReleaseAudit", flow.b.audit(remaining=0))
        await flow.submit("ReleaseAudit", flow.b.audit())


@pytest.mark.rule("RA-ORIGINAL-REQUEST")
async def test_the_audit_judges_the_original_request() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        await refuse(flow, "ReleaseAudit", flow.b.audit(originalRequestRef=flow.b.uri("frame-1")))


@pytest.mark.rule("RA-CONTRACT-LATEST")
async def test_the_audit_judges_the_latest_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        await refuse(flow, "ReleaseAudit", flow.b.audit(contract="plan-1"))


@pytest.mark.rule("RA-LINEAGE")
@pytest.mark.parametrize("over", [{"results": ()}, {"plans": ()}, {"qr": "result-1"}])
async def test_the_audit_names_every_plan_result_and_the_latest_review(over: Any) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        await refuse(flow, "ReleaseAudit", flow.b.audit(**over))


@pytest.mark.rule("RA-USER-FIDELITY")
async def test_fidelity_is_judged_against_the_request_only() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        audit = flow.b.audit()
        audit["userFidelity"][0]["subjectRef"] = flow.b.uri("contract-1")
        await refuse(flow, "ReleaseAudit", audit)


@pytest.mark.rule("RA-DECISION")
@pytest.mark.parametrize("case", ["block_downgraded", "mode_failure"])
async def test_blocks_and_mode_failures_are_never_softened(case: str) -> None:
    async with open_ledger("memory://") as ledger:
        if case == "block_downgraded":
            flow = await _after_review(ledger, "block")
            await refuse(flow, "ReleaseAudit", flow.b.audit(decision="partial"))
            await flow.submit("ReleaseAudit", flow.b.audit(decision="block"))
        else:
            flow = await auditing(ledger)
            bad = flow.b.audit(
                decision="remediate",
                report=None,
                remediationDefect=_defect(flow),
                modeCompliance="fail",
            )
            await refuse(flow, "ReleaseAudit", bad)


@pytest.mark.rule("RA-RELEASE")
@pytest.mark.parametrize("case", ["review_partial", "empty_matrix"])
async def test_release_needs_a_passing_review_and_claims(case: str) -> None:
    async with open_ledger("memory://") as ledger:
        if case == "review_partial":
            flow = await _after_review(ledger, "partial")
            bad = flow.b.audit()
        else:
            flow = await auditing(ledger)
            bad = flow.b.audit(claimEvidenceMatrix=[])
        await refuse(flow, "ReleaseAudit", bad)


@pytest.mark.rule("RA-CRITERIA")
async def test_matrix_criteria_exist_in_the_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        audit = flow.b.audit(decision="partial")
        audit["claimEvidenceMatrix"][0]["criterionIds"] = ["AC-9"]
        await refuse(flow, "ReleaseAudit", audit)


@pytest.mark.rule("RA-RELEASE-COVERAGE")
async def test_release_covers_each_criterion_with_a_direct_claim() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        audit = flow.b.audit()
        audit["claimEvidenceMatrix"][0] |= {
            "basis": "user_reported",
            "evidenceRefs": [flow.b.request],
        }
        await refuse(flow, "ReleaseAudit", audit)


@pytest.mark.rule("RA-DEFECT-SCOPE")
@pytest.mark.parametrize("over", [{"failedCriterionIds": ["AC-9"]}, {"allowedCapabilities": []}])
async def test_a_defect_stays_inside_the_contract(over: Any) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        bad = flow.b.audit(
            decision="remediate", report=None, remediationDefect=_defect(flow, **over)
        )
        await refuse(flow, "ReleaseAudit", bad)
        good = flow.b.audit(decision="remediate", report=None, remediationDefect=_defect(flow))
        await flow.submit("ReleaseAudit", good)


@pytest.mark.rule("RA-DEFECT-SOURCES")
async def test_a_defect_cites_the_review_results_or_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        defect = _defect(flow, sourceRefs=[flow.b.request])
        await refuse(
            flow,
            "ReleaseAudit",
            flow.b.audit(decision="remediate", report=None, remediationDefect=defect),
        )


# ------------------------------------------------------------------ UserReport


@pytest.mark.rule("UR-TRACE-REF")
async def test_the_report_cites_the_runs_aggregate_trace() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        await refuse(
            flow,
            "UserReport",
            completed_report(flow, traceRef=f"trace://{flow.b.run_id}/event-0001"),
        )
        await flow.submit("UserReport", completed_report(flow))


@pytest.mark.rule("UR-STATUS")
@pytest.mark.parametrize("status", ["blocked", "cancelled"])
async def test_the_status_fits_the_audit(status: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        await refuse(flow, "UserReport", flow.b.report(status=status, findings=["audit-1"]))


@pytest.mark.rule("UR-AUDIT-LINK")
async def test_the_report_is_the_one_the_audit_announced() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        await refuse(flow, "UserReport", completed_report(flow) | {"id": "report-2"})


@pytest.mark.rule("UR-AUDIT-LINK")
async def test_permissions_honored_is_never_true_against_a_failed_mode_compliance() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        await flow.submit("ReleaseAudit", flow.b.audit(decision="partial", modeCompliance="fail"))
        bad = flow.b.report(status="partial", findings=["audit-1"], honored=True)
        error = await refuse(flow, "UserReport", bad)
        assert "permissionsHonored is false" in error.issues[0].message
        await flow.submit(
            "UserReport", flow.b.report(status="partial", findings=["audit-1"], honored=False)
        )


async def test_a_report_may_admit_a_breach_the_audit_did_not_record() -> None:
    # Formerly refused (permissionsHonored had to mirror a passing mode compliance): an honest
    # report may always say the permissions were not honoured.
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger, decision="partial")
        await flow.submit(
            "UserReport", flow.b.report(status="partial", findings=["audit-1"], honored=False)
        )
        assert flow.action.phase == "partial"


async def test_after_a_release_an_admitted_breach_ends_partial_not_completed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        with pytest.raises(SchemaViolation):
            await flow.submit("UserReport", completed_report(flow) | {"permissionsHonored": False})
        admitted = completed_report(flow) | {
            "terminalStatus": "partial",
            "permissionsHonored": False,
            "findingRefs": [flow.b.uri("audit-1")],
            "unresolvedRisks": ["A command ran outside the granted permissions"],
        }
        await flow.submit("UserReport", admitted)
        assert flow.action.phase == "partial"


@pytest.mark.rule("UR-EARLY-BLOCK")
async def test_an_early_block_cites_its_review_and_claims_nothing() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        await flow.submit("PromptReview", flow.b.prompt_review(decision="block"))
        await refuse(flow, "UserReport", flow.b.report(status="blocked"))
        await flow.submit("UserReport", flow.b.report(status="blocked", findings=["review-1"]))


@pytest.mark.rule("UR-FINDINGS")
async def test_a_partial_report_cites_its_judgement() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger, decision="partial")
        await refuse(flow, "UserReport", flow.b.report(status="partial"))
        await flow.submit("UserReport", flow.b.report(status="partial", findings=["audit-1"]))


@pytest.mark.rule("UR-CHANGE-REFS")
async def test_change_refs_are_exactly_the_runs_diffs() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        await refuse(
            flow, "UserReport", completed_report(flow, changeRefs=[flow.b.uri("evidence-1")])
        )


@pytest.mark.rule("UR-VERIFICATION-REFS")
async def test_a_completed_report_cites_exactly_the_verification_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        await refuse(flow, "UserReport", completed_report(flow, verificationRefs=[]))


@pytest.mark.rule("UR-FAILED-VERIFICATION")
async def test_failed_verification_needs_a_failed_required_verification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        review = flow.b.quality_review(decision="partial", verifications=["VR-1"])
        review["verificationResults"][0]["status"] = "pass"
        await flow.submit("QualityReview", review)
        await flow.submit("ReleaseAudit", flow.b.audit(decision="partial"))
        bad = flow.b.report(status="failed_verification", findings=["audit-1"])
        await refuse(flow, "UserReport", bad)
        await flow.submit("UserReport", flow.b.report(status="partial", findings=["audit-1"]))


@pytest.mark.rule("UR-CLAIM-MATCHES-AUDIT-MATRIX")
@pytest.mark.parametrize("change", ["text", "evidence", "id", "basis"])
async def test_claims_copy_the_audit_matrix_verbatim(change: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reporting(ledger)
        bad = completed_report(flow)
        claim = bad["completionClaims"][0]
        if change == "text":
            claim["text"] = "The work is done and more"
        elif change == "evidence":
            claim["evidenceRefs"] = [flow.b.uri("evidence-1"), flow.b.uri("plan-1")]
        elif change == "id":
            claim["id"] = "CL-9"
        else:
            claim |= {"status": "user_reported", "evidenceRefs": [flow.b.request]}
        await refuse(flow, "UserReport", bad)


@pytest.mark.rule("UR-RELEASE-CLAIMS")
async def test_a_release_report_repeats_every_supported_claim() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await auditing(ledger)
        audit = flow.b.audit()
        audit["claimEvidenceMatrix"].append(audit["claimEvidenceMatrix"][0] | {"claimId": "CL-2"})
        await flow.submit("ReleaseAudit", audit)
        await refuse(flow, "UserReport", completed_report(flow))
        good = completed_report(flow)
        good["completionClaims"].append(good["completionClaims"][0] | {"id": "CL-2"})
        await flow.submit("UserReport", good)
