"""QualityReview: the golden body, round trips, and a negative test for every schema rule."""

from __future__ import annotations

from typing import Any

import pytest

from telic.protocol._canonical import canonical_sha256
from telic.protocol._quality import QualityReview
from tests.telic.protocol.bodies import DELETE, changed, first_error_type, load_golden

RUN = "3f2b8c1e-7a4d-4e9b-9c61-2d5f0a8e4b17"


def golden() -> dict[str, Any]:
    return load_golden("QualityReview")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(QualityReview, body)


def decided(decision: str, changes: dict[str, object] | None = None) -> dict[str, Any]:
    """A valid review with ``decision`` (the golden is proceed_to_fix), then ``changes``."""
    body = golden()
    if decision != "proceed_to_fix":
        body = changed(body, {"decision": decision, "diagnosisGate": DELETE})
    if decision == "remediate":
        order = {
            "id": "REMEDIATION-1",
            "failedCriterionIds": ["AC-DIAGNOSIS"],
            "objective": "Capture the failing request with the network panel open.",
            "allowedCapabilities": [],
            "permissions": golden()["diagnosisGate"]["correctionWorkOrder"]["permissions"],
            "sourceRefs": [f"artifact://{RUN}/result-1"],
            "maximumToolCalls": 4,
            "rationaleSummary": "The first capture missed the request headers.",
        }
        body = changed(body, {"remediationWorkOrder": order, "acceptanceResults.0.status": "fail"})
    return changed(body, changes or {})


BLOCKING = {
    "id": "F-REGRESSION",
    "severity": "blocking",
    "claim": "The login page no longer loads.",
    "sourceRefs": [f"artifact://{RUN}/evidence-browser-2"],
    "rubricDimension": None,
    "requiredCorrection": None,
    "preserveFields": [],
    "rationaleSummary": "Observed in the regression capture.",
}


# --------------------------------------------------------------------------------- golden


def test_golden_review_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    review = QualityReview.from_wire(body)
    assert review.to_wire() == body
    assert QualityReview.from_wire(review.to_wire()) == review
    assert canonical_sha256(review.to_wire()) == canonical_sha256(body)


def test_review_dumps_camel_case_names() -> None:
    wire = QualityReview.from_wire(golden()).to_wire()
    assert {"workPlanRefs", "acceptanceResults", "ruleCompliance", "diagnosisGate"} <= wire.keys()
    gate = wire["diagnosisGate"]
    assert {"directEvidenceRefs", "correctionWorkOrder", "withinApprovedScope"} <= gate.keys()
    assert {"targetCriterionIds", "allowedCapabilities"} <= gate["correctionWorkOrder"].keys()


@pytest.mark.parametrize("decision", ["pass", "remediate", "block", "partial"])
def test_every_decision_has_a_valid_form(decision: str) -> None:
    assert QualityReview.from_wire(decided(decision)).decision == decision


def test_defaults_fill_work_plan_refs_subject_ref_and_diagnosis_gate() -> None:
    body = decided("pass", {"workPlanRefs": DELETE, "ruleCompliance.0.subjectRef": DELETE})
    review = QualityReview.from_wire(body)
    assert review.work_plan_refs == []
    assert review.rule_compliance[0].subject_ref is None
    assert review.diagnosis_gate is None
    wire = review.to_wire()
    assert wire["workPlanRefs"] == []
    assert wire["diagnosisGate"] is None


def test_block_and_partial_need_no_score() -> None:
    for decision in ("block", "partial"):
        assert QualityReview.from_wire(decided(decision, {"score": 0})).score == 0


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "…"}, "extra_forbidden"),
        ({"diagnosisGate.confidence": 0.9}, "extra_forbidden"),
        ({"diagnosisGate.correctionWorkOrder.deadline": "soon"}, "extra_forbidden"),
        ({"verificationResults.0.notes": "…"}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"rubricId": "contract-readiness-v1"}, "literal_error"),
        ({"decision": "approve"}, "literal_error"),
        ({"score": 100.01}, "less_than_equal"),
        ({"remainingRemediations": 2}, "less_than_equal"),
        ({"acceptanceResults": []}, "too_short"),
        ({"hardGates": []}, "too_short"),
        ({"hardGates.0.evidenceRefs": []}, "too_short"),
        ({"ruleCompliance.0.status": "passed"}, "literal_error"),
        ({"verificationResults.0.status": "not_applicable"}, "literal_error"),
        ({"verificationResults.0.capability": "shell.run"}, "literal_error"),
        ({"remediationWorkOrder": DELETE}, "missing"),
        ({"diagnosisGate.status": "likely"}, "literal_error"),
        ({"diagnosisGate.directEvidenceRefs": ["repo://apps/web/.env"]}, "string_pattern_mismatch"),
        ({"diagnosisGate.correctionWorkOrder.targetCriterionIds": []}, "too_short"),
        ({"diagnosisGate.correctionWorkOrder.allowedCapabilities": []}, "too_short"),
        ({"diagnosisGate.correctionWorkOrder.sourceRefs": []}, "too_short"),
        ({"diagnosisGate.correctionWorkOrder.maximumToolCalls": 0}, "greater_than_equal"),
        ({"diagnosisGate.correctionWorkOrder.maximumToolCalls": 1_001}, "less_than_equal"),
        ({"workResultRefs": ["trace://run"]}, "string_pattern_mismatch"),
        ({"rationaleSummary": "ø" * 4_096}, "string_too_many_bytes"),
    ],
)
def test_a_malformed_review_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"remediationWorkOrder.failedCriterionIds": []}, "too_short"),
        ({"remediationWorkOrder.sourceRefs": []}, "too_short"),
        ({"remediationWorkOrder.maximumToolCalls": 0}, "greater_than_equal"),
        ({"remediationWorkOrder.allowedCapabilities": ["root"]}, "literal_error"),
    ],
)
def test_a_malformed_remediation_order_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(decided("remediate", changes)) == code


# --------------------------------------------------------------------------------- rules


def test_a_review_without_plan_or_result_refs_is_rejected() -> None:
    body = changed(golden(), {"workPlanRefs": [], "workResultRefs": []})
    assert rejection(body) == "no_plan_or_result_ref"


def test_a_result_ref_alone_is_enough() -> None:
    assert QualityReview.from_wire(changed(golden(), {"workPlanRefs": []})).work_plan_refs == []


@pytest.mark.parametrize("decision", ["pass", "proceed_to_fix"])
def test_progressing_at_79_99_is_rejected(decision: str) -> None:
    assert rejection(decided(decision, {"score": 79.99})) == "score_below_pass"


@pytest.mark.parametrize("decision", ["pass", "proceed_to_fix"])
def test_progressing_at_exactly_80_is_accepted(decision: str) -> None:
    assert QualityReview.from_wire(decided(decision, {"score": 80})).score == 80


def test_pass_with_a_failed_gate_is_rejected() -> None:
    assert rejection(decided("pass", {"hardGates.0.passed": False})) == "pass_with_failure"


def test_pass_with_a_blocking_finding_is_rejected() -> None:
    assert rejection(decided("pass", {"findings": [BLOCKING]})) == "pass_with_failure"


@pytest.mark.parametrize("status", ["fail", "unverified", "not_applicable"])
def test_pass_with_an_unpassed_acceptance_result_is_rejected(status: str) -> None:
    body = decided("pass", {"acceptanceResults.0.status": status})
    assert rejection(body) == "pass_with_unpassed_criterion"


def test_pass_with_a_failed_acceptance_result_is_rejected() -> None:
    assert rejection(decided("pass", {"acceptanceResults.0.status": "fail"})) == (
        "pass_with_unpassed_criterion"
    )


@pytest.mark.parametrize("status", ["fail", "unverified", "not_applicable"])
def test_pass_with_an_unpassed_rule_check_is_rejected(status: str) -> None:
    body = decided("pass", {"ruleCompliance.0.status": status})
    assert rejection(body) == "pass_with_unpassed_check"


def test_pass_with_a_failed_regression_check_is_rejected() -> None:
    check = {**golden()["ruleCompliance"][0], "id": "REG-1", "subjectRef": None, "status": "fail"}
    assert rejection(decided("pass", {"regressionChecks": [check]})) == "pass_with_unpassed_check"


def test_remediate_with_no_remediation_left_is_rejected() -> None:
    body = decided("remediate", {"remainingRemediations": 0})
    assert rejection(body) == "remediation_budget_exhausted"


def test_remediate_without_a_work_order_is_rejected() -> None:
    assert rejection(decided("remediate", {"remediationWorkOrder": None})) == (
        "remediate_without_order"
    )


@pytest.mark.parametrize("decision", ["pass", "proceed_to_fix", "block", "partial"])
def test_only_remediate_may_carry_a_work_order(decision: str) -> None:
    order = decided("remediate")["remediationWorkOrder"]
    assert rejection(decided(decision, {"remediationWorkOrder": order})) == (
        "order_without_remediate"
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"hardGates.0.passed": False},
        {"findings": [BLOCKING]},
        {"ruleCompliance.0.status": "fail"},
        {"ruleCompliance.0.status": "unverified"},
    ],
)
def test_proceed_to_fix_with_a_failure_is_rejected(changes: dict[str, object]) -> None:
    assert rejection(decided("proceed_to_fix", changes)) == "proceed_with_failure"


def test_proceed_to_fix_may_leave_acceptance_results_unpassed() -> None:
    body = decided("proceed_to_fix", {"acceptanceResults.0.status": "unverified"})
    assert QualityReview.from_wire(body).acceptance_results[0].status == "unverified"


@pytest.mark.parametrize("gate", [None, DELETE])
def test_proceed_to_fix_without_a_diagnosis_gate_is_rejected(gate: object) -> None:
    assert rejection(decided("proceed_to_fix", {"diagnosisGate": gate})) == "proceed_without_gate"


@pytest.mark.parametrize(
    "changes",
    [
        {"diagnosisGate.status": "unsupported", "diagnosisGate.correctionWorkOrder": None},
        {"diagnosisGate.status": "unverified", "diagnosisGate.correctionWorkOrder": None},
        {"diagnosisGate.withinApprovedScope": False},
        {"diagnosisGate.permissionsSufficient": False},
    ],
)
def test_proceed_to_fix_needs_a_sufficient_gate(changes: dict[str, object]) -> None:
    assert rejection(decided("proceed_to_fix", changes)) == "diagnosis_gate_not_sufficient"


@pytest.mark.parametrize("decision", ["pass", "remediate", "block", "partial"])
def test_only_proceed_to_fix_may_carry_a_gate(decision: str) -> None:
    gate = golden()["diagnosisGate"]
    assert rejection(decided(decision, {"diagnosisGate": gate})) == "gate_without_proceed"


def test_a_supported_gate_without_direct_evidence_is_rejected() -> None:
    body = changed(golden(), {"diagnosisGate.directEvidenceRefs": []})
    assert rejection(body) == "supported_gate_without_evidence"


def test_a_supported_gate_without_a_correction_order_is_rejected() -> None:
    body = changed(golden(), {"diagnosisGate.correctionWorkOrder": None})
    assert rejection(body) == "supported_gate_without_order"


@pytest.mark.parametrize("status", ["unsupported", "unverified"])
def test_an_unsupported_gate_may_not_carry_an_order(status: str) -> None:
    body = changed(golden(), {"diagnosisGate.status": status})
    assert rejection(body) == "unsupported_gate_with_order"


def test_the_correction_order_must_cite_every_direct_evidence_ref() -> None:
    extra = f"artifact://{RUN}/evidence-log-1"
    body = changed(
        golden(),
        {"diagnosisGate.directEvidenceRefs": [f"artifact://{RUN}/evidence-browser-1", extra]},
    )
    assert rejection(body) == "order_drops_gate_evidence"
    body["diagnosisGate"]["correctionWorkOrder"]["sourceRefs"].append(extra)
    assert QualityReview.from_wire(body).diagnosis_gate is not None
