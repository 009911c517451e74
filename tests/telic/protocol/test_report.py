"""UserReport: the golden body, round trips, and a negative test for every schema rule."""

from __future__ import annotations

from typing import Any

import pytest

from telic.protocol._canonical import canonical_sha256
from telic.protocol._report import UserReport
from tests.telic.protocol.bodies import changed, first_error_type, load_golden

RUN = "3f2b8c1e-7a4d-4e9b-9c61-2d5f0a8e4b17"
NEXT_ACTION = {
    "id": "NEXT-GRANT",
    "description": "Start a new run with network.read for the staging host to verify there.",
    "requiresAuthorization": True,
}


def golden() -> dict[str, Any]:
    return load_golden("UserReport")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(UserReport, body)


def unfinished(status: str, changes: dict[str, object] | None = None) -> dict[str, Any]:
    """A report with ``status``, no claims, and nothing that explains it, then ``changes``."""
    bare = {
        "terminalStatus": status,
        "completionClaims": [],
        "findingRefs": [],
        "unresolvedRisks": [],
        "nextActions": [],
    }
    return changed(golden(), {**bare, **(changes or {})})


# --------------------------------------------------------------------------------- golden


def test_golden_report_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    report = UserReport.from_wire(body)
    assert report.to_wire() == body
    assert UserReport.from_wire(report.to_wire()) == report
    assert canonical_sha256(report.to_wire()) == canonical_sha256(body)


def test_report_dumps_camel_case_names() -> None:
    wire = UserReport.from_wire(golden()).to_wire()
    assert {"terminalStatus", "completionClaims", "permissionsHonored", "traceRef"} <= wire.keys()
    assert "requiresAuthorization" in wire["nextActions"][0]


def test_a_cancelled_report_needs_no_explanation() -> None:
    assert UserReport.from_wire(unfinished("cancelled")).terminal_status == "cancelled"


@pytest.mark.parametrize("status", ["partial", "blocked", "failed_verification"])
@pytest.mark.parametrize(
    "explanation",
    [
        {"findingRefs": [f"artifact://{RUN}/release-audit-1"]},
        {"unresolvedRisks": ["The staging configuration was not checked."]},
        {"nextActions": [NEXT_ACTION]},
    ],
)
def test_an_unfinished_report_with_any_explanation_is_accepted(
    status: str, explanation: dict[str, object]
) -> None:
    body = unfinished(status, explanation)
    assert UserReport.from_wire(body).terminal_status == status


def test_a_completed_report_may_cite_a_user_reported_claim() -> None:
    body = changed(golden(), {"completionClaims.0.status": "user_reported"})
    assert UserReport.from_wire(body).completion_claims[0].status == "user_reported"


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "…"}, "extra_forbidden"),
        ({"completionClaims.0.source": "model"}, "extra_forbidden"),
        ({"nextActions.0.priority": "high"}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"terminalStatus": "done"}, "literal_error"),
        ({"terminalStatus": "active"}, "literal_error"),
        ({"traceRef": f"artifact://{RUN}/trace"}, "string_pattern_mismatch"),
        ({"traceRef": "trace://"}, "string_pattern_mismatch"),
        ({"summary": ""}, "string_too_short"),
        ({"summary": "√" * 10_923}, "string_too_many_bytes"),
        ({"permissionsHonored": "true"}, "bool_type"),
        ({"completionClaims.0.confidence": -0.1}, "greater_than_equal"),
        ({"completionClaims.0.evidenceRefs": []}, "claim_without_evidence"),
        ({"nextActions.0.requiresAuthorization": None}, "bool_type"),
        ({"rationaleSummary": "ç" * 4_096}, "string_too_many_bytes"),
    ],
)
def test_a_malformed_report_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


# --------------------------------------------------------------------------------- rules


def test_a_completed_report_without_a_claim_is_rejected() -> None:
    assert rejection(changed(golden(), {"completionClaims": []})) == "completed_without_claim"


def test_a_completed_report_with_dishonored_permissions_is_rejected() -> None:
    body = changed(golden(), {"permissionsHonored": False})
    assert rejection(body) == "completed_without_honored_permissions"


def test_a_completed_report_with_an_unverified_claim_is_rejected() -> None:
    body = changed(golden(), {"completionClaims.1.status": "unverified"})
    assert rejection(body) == "completed_with_unbacked_claim"


def test_a_completed_report_with_a_claim_without_evidence_is_rejected() -> None:
    body = changed(
        golden(),
        {"completionClaims.1.status": "user_reported", "completionClaims.1.evidenceRefs": []},
    )
    assert rejection(body) == "completed_with_unbacked_claim"


@pytest.mark.parametrize("status", ["partial", "blocked", "failed_verification"])
def test_an_unfinished_report_without_finding_risk_or_next_action_is_rejected(
    status: str,
) -> None:
    assert rejection(unfinished(status)) == "outcome_without_explanation"
