"""ReleaseAudit: the golden body, round trips, and a negative test for every schema rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._audit import ReleaseAudit
from telic.protocol._canonical import canonical_sha256
from tests.telic.protocol.bodies import DELETE, changed, first_error_type, load_golden

RUN = "3f2b8c1e-7a4d-4e9b-9c61-2d5f0a8e4b17"


def golden() -> dict[str, Any]:
    return load_golden("ReleaseAudit")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(ReleaseAudit, body)


EMPTY_PERMISSIONS = {
    "repository": {"read": [], "write": [], "delete": []},
    "shell": {"inspect": False, "executeAllowlist": []},
    "runtime": {"inspect": [], "restart": []},
    "browser": {"inspect": False, "mutateState": False},
    "network": {"readDomains": [], "externalWrite": False},
    "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0},
}
DEFECT = {
    "id": "DEFECT-1",
    "failedCriterionIds": ["AC-COMPLETION"],
    "description": "The completion claim cites a test run made before the final edit.",
    "allowedCapabilities": ["shell.execute"],
    "permissions": {
        **EMPTY_PERMISSIONS,
        "shell": {"inspect": False, "executeAllowlist": ["npm test"]},
    },
    "sourceRefs": [f"artifact://{RUN}/quality-review-2"],
    "maximumToolCalls": 2,
    "returnToRole": "quality_controller",
    "rationaleSummary": "Re-running the focused tests is the smallest fix.",
}
RISK = "The fix was verified only against the local API, not staging."
FINDING = {
    "id": "F-1",
    "severity": "warning",
    "claim": "The staging configuration was not checked.",
    "sourceRefs": [],
    "rubricDimension": None,
    "requiredCorrection": None,
    "preserveFields": [],
    "rationaleSummary": "Out of scope, but worth telling the user.",
}


def decided(decision: str, changes: dict[str, object] | None = None) -> dict[str, Any]:
    """A valid audit with ``decision`` (the golden is release), then ``changes``."""
    body = golden()
    if decision == "remediate":
        body = changed(
            body,
            {
                "decision": decision,
                "remediationDefect": DEFECT,
                "userReportRef": None,
                "claimEvidenceMatrix.1.status": "unsupported",
            },
        )
    elif decision != "release":
        body = changed(body, {"decision": decision, "unresolvedRisks": [RISK]})
    return changed(body, changes or {})


# --------------------------------------------------------------------------------- golden


def test_golden_audit_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    audit = ReleaseAudit.from_wire(body)
    assert audit.to_wire() == body
    assert ReleaseAudit.from_wire(audit.to_wire()) == audit
    assert canonical_sha256(audit.to_wire()) == canonical_sha256(body)


def test_audit_dumps_camel_case_names() -> None:
    wire = ReleaseAudit.from_wire(decided("remediate")).to_wire()
    assert {"userFidelity", "modeCompliance", "claimEvidenceMatrix", "userReportRef"} <= (
        wire.keys()
    )
    assert {"claimId", "criterionIds"} <= wire["claimEvidenceMatrix"][0].keys()
    assert {"failedCriterionIds", "returnToRole"} <= wire["remediationDefect"].keys()


@pytest.mark.parametrize("decision", ["release", "remediate", "partial", "block"])
def test_every_decision_has_a_valid_form(decision: str) -> None:
    assert ReleaseAudit.from_wire(decided(decision)).decision == decision


def test_work_plan_refs_default_to_empty() -> None:
    audit = ReleaseAudit.from_wire(changed(golden(), {"workPlanRefs": DELETE}))
    assert audit.work_plan_refs == []


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "…"}, "extra_forbidden"),
        ({"claimEvidenceMatrix.0.weight": 1}, "extra_forbidden"),
        ({"userFidelity.0.severity": "high"}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"decision": "ship"}, "literal_error"),
        ({"modeCompliance": "partial"}, "literal_error"),
        ({"remainingRemediations": -1}, "greater_than_equal"),
        ({"userFidelity": []}, "too_short"),
        ({"claimEvidenceMatrix.0.criterionIds": []}, "too_short"),
        ({"claimEvidenceMatrix.0.basis": "inferred"}, "literal_error"),
        ({"claimEvidenceMatrix.0.status": "likely"}, "literal_error"),
        ({"qualityReviewRef": DELETE}, "missing"),
        ({"userReportRef": f"trace://{RUN}"}, "string_pattern_mismatch"),
        ({"rationaleSummary": "å" * 4_096}, "string_too_many_bytes"),
    ],
)
def test_a_malformed_audit_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"remediationDefect.returnToRole": "executor"}, "literal_error"),
        ({"remediationDefect.failedCriterionIds": []}, "too_short"),
        ({"remediationDefect.sourceRefs": []}, "too_short"),
        ({"remediationDefect.maximumToolCalls": 1_001}, "less_than_equal"),
        ({"remediationDefect.permissions.network.proxy": "x"}, "extra_forbidden"),
    ],
)
def test_a_malformed_defect_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(decided("remediate", changes)) == code


# --------------------------------------------------------------------------------- rules


def test_claim_ids_must_be_unique() -> None:
    body = changed(golden(), {"claimEvidenceMatrix.1.claimId": "CLAIM-DIAGNOSIS"})
    assert rejection(body) == "duplicate_claim_id"


def test_an_audit_without_plan_or_result_refs_is_rejected() -> None:
    body = changed(golden(), {"workPlanRefs": [], "workResultRefs": []})
    assert rejection(body) == "no_plan_or_result_ref"


@pytest.mark.parametrize(
    "changes",
    [
        {"modeCompliance": "fail"},
        {"userFidelity.0.status": "fail"},
        {"userFidelity.0.status": "unverified"},
        {"userFidelity.0.status": "not_applicable"},
        {"claimEvidenceMatrix.1.status": "unsupported"},
        {"claimEvidenceMatrix.1.status": "contradicted"},
        {"claimEvidenceMatrix.1.status": "unverified"},
        {"findings": [{**FINDING, "severity": "blocking", "sourceRefs": [f"repo://{RUN}"]}]},
    ],
)
def test_release_with_a_failure_is_rejected(changes: dict[str, object]) -> None:
    assert rejection(changed(golden(), changes)) == "release_with_failure"


def test_a_refused_release_names_each_failing_entry_and_the_ways_forward() -> None:
    body = changed(
        golden(), {"modeCompliance": "fail", "claimEvidenceMatrix.1.status": "unverified"}
    )
    with pytest.raises(ValidationError) as caught:
        ReleaseAudit.from_wire(body)
    message = caught.value.errors()[0]["msg"]
    assert "modeCompliance pass (it is fail)" in message
    assert "claimEvidenceMatrix.1.status supported (it is unverified)" in message
    assert "userFidelity" not in message
    assert "decide partial" in message


def test_release_may_carry_a_non_blocking_finding_and_a_risk() -> None:
    body = changed(golden(), {"findings": [FINDING], "unresolvedRisks": [RISK]})
    assert ReleaseAudit.from_wire(body).decision == "release"


def test_remediate_with_no_remediation_left_is_rejected() -> None:
    body = decided("remediate", {"remainingRemediations": 0})
    assert rejection(body) == "remediation_budget_exhausted"


def test_remediate_without_a_defect_is_rejected() -> None:
    body = decided("remediate", {"remediationDefect": None})
    assert rejection(body) == "remediate_without_defect"


def test_remediate_with_a_user_report_ref_is_rejected() -> None:
    body = decided("remediate", {"userReportRef": f"artifact://{RUN}/user-report-1"})
    assert rejection(body) == "remediate_with_report_ref"


@pytest.mark.parametrize("decision", ["release", "partial", "block"])
def test_only_remediate_may_carry_a_defect(decision: str) -> None:
    assert rejection(decided(decision, {"remediationDefect": DEFECT})) == (
        "defect_without_remediate"
    )


@pytest.mark.parametrize("decision", ["release", "partial", "block"])
def test_every_other_decision_needs_a_user_report_ref(decision: str) -> None:
    assert rejection(decided(decision, {"userReportRef": None})) == "report_ref_missing"


@pytest.mark.parametrize("decision", ["partial", "block"])
def test_partial_and_block_without_a_concrete_failure_are_rejected(decision: str) -> None:
    assert rejection(decided(decision, {"unresolvedRisks": []})) == "no_concrete_failure"


@pytest.mark.parametrize("decision", ["partial", "block"])
@pytest.mark.parametrize(
    "failure",
    [
        {"modeCompliance": "fail"},
        {"userFidelity.0.status": "unverified"},
        {"claimEvidenceMatrix.0.status": "contradicted"},
        {"findings": [FINDING]},
        {"unresolvedRisks": [RISK]},
    ],
)
def test_partial_and_block_are_accepted_with_any_one_concrete_failure(
    decision: str, failure: dict[str, object]
) -> None:
    body = decided(decision, {"unresolvedRisks": [], **failure})
    assert ReleaseAudit.from_wire(body).decision == decision
