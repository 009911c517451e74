"""PromptReview: the golden body, the exact weighted score, and a negative test per rule."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._review import (
    DimensionScores,
    HardGate,
    PromptReview,
    js_round2,
    weighted_score,
)
from tests.telic.protocol.bodies import changed, first_error_type, load_golden

DIMENSIONS = (
    "intentFidelity",
    "repositoryGrounding",
    "constraintsAndPermissions",
    "testableAcceptance",
    "executionFeasibility",
    "contextEfficiency",
)


def golden() -> dict[str, Any]:
    return load_golden("PromptReview")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(PromptReview, body)


def with_scores(body: dict[str, Any], *values: float) -> dict[str, Any]:
    """Set the six dimension scores and the overall score that matches them."""
    scores = dict(zip(DIMENSIONS, values, strict=True))
    overall = weighted_score(DimensionScores.from_wire(scores))
    return changed(body, {"dimensionScores": scores, "overallScore": overall})


BLOCKING_FINDING = {
    "id": "F-SCOPE",
    "severity": "blocking",
    "claim": "The objective does not name the failing boundary.",
    "sourceRefs": ["artifact://3f2b8c1e-7a4d-4e9b-9c61-2d5f0a8e4b17/frame-1"],
    "rubricDimension": "intentFidelity",
    "requiredCorrection": "Name the dashboard-to-API boundary in the objective.",
    "preserveFields": ["scope"],
    "correctionFields": ["objective"],
    "rationaleSummary": "The frame names the boundary; the contract lost it.",
}


def revise_body(**finding_changes: object) -> dict[str, Any]:
    finding = {**BLOCKING_FINDING, **finding_changes}
    return changed(golden(), {"decision": "revise", "findings": [finding]})


# --------------------------------------------------------------------------------- golden


def test_golden_review_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    review = PromptReview.from_wire(body)
    assert review.to_wire() == body
    assert PromptReview.from_wire(review.to_wire()) == review
    assert canonical_sha256(review.to_wire()) == canonical_sha256(body)


def test_review_dumps_camel_case_names() -> None:
    wire = PromptReview.from_wire(golden()).to_wire()
    assert {"targetRef", "rubricId", "revisionNumber", "dimensionScores", "hardGates"} <= (
        wire.keys()
    )
    assert set(DIMENSIONS) == wire["dimensionScores"].keys()
    assert "evidenceRefs" in wire["hardGates"][0]


def test_hard_gate_is_the_shape_reviews_share() -> None:
    gate = HardGate.from_wire(golden()["hardGates"][0])
    assert gate.evidence_refs
    assert gate.passed


# --------------------------------------------------------------------------------- score


def test_weighted_score_uses_the_rubric_weights() -> None:
    scores = DimensionScores.from_wire(
        dict(zip(DIMENSIONS, (85, 80, 90, 70, 75, 100), strict=True))
    )
    assert weighted_score(scores) == 81.5


def test_weighted_score_rounds_halves_up_like_javascript_not_to_even() -> None:
    scores = DimensionScores.from_wire(dict(zip(DIMENSIONS, (0, 0, 0, 0, 0, 2.5), strict=True)))
    assert 0.05 * 2.5 * 100 == 12.5
    assert weighted_score(scores) == 0.13
    assert round(0.125, 2) == 0.12  # what Python's own rounding would have said


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.125, 0.13),
        (-0.125, -0.12),
        (80.004999, 80.0),
        (80.005, 80.01),
        (0.004999999999999999, 0.0),
    ],
)
def test_js_round2_matches_math_round_times_100_over_100(value: float, expected: float) -> None:
    assert js_round2(value) == expected


def test_js_round2_is_exact_where_floor_of_x_plus_half_is_not() -> None:
    value = 0.004999999999999999  # value * 100 is the double just below 0.5
    assert value * 100 < 0.5
    assert math.floor(value * 100 + 0.5) / 100 == 0.01
    assert js_round2(value) == 0.0  # Math.round(0.49999999999999994) is 0


def test_an_overall_score_off_by_a_hundredth_is_rejected() -> None:
    body = golden()
    assert rejection(changed(body, {"overallScore": body["overallScore"] + 0.01})) == (
        "overall_score_mismatch"
    )
    assert rejection(changed(body, {"overallScore": body["overallScore"] - 0.01})) == (
        "overall_score_mismatch"
    )


def test_an_unrounded_overall_score_is_rejected() -> None:
    body = with_scores(golden(), 80, 80, 80, 80, 80, 83.3)
    raw = 0.30 * 80 + 0.20 * 80 + 0.15 * 80 + 0.20 * 80 + 0.10 * 80 + 0.05 * 83.3
    assert body["overallScore"] == 80.17 != raw
    assert rejection(changed(body, {"overallScore": raw})) == "overall_score_mismatch"


_score = st.floats(min_value=0, max_value=100, allow_nan=False, allow_infinity=False)


@given(st.tuples(_score, _score, _score, _score, _score, _score))
def test_any_scores_with_their_computed_overall_validate_and_a_hundredth_more_does_not(
    values: tuple[float, float, float, float, float, float],
) -> None:
    body = with_scores(golden(), *values)
    # block with a failed gate, so that only the score arithmetic is under test
    body = changed(body, {"decision": "block", "hardGates.0.passed": False})
    review = PromptReview.from_wire(body)
    assert review.overall_score == body["overallScore"]
    off = changed(body, {"overallScore": body["overallScore"] + 0.01})
    with pytest.raises(ValidationError) as exc:
        PromptReview.from_wire(off)
    expected = "overall_score_mismatch" if off["overallScore"] <= 100 else "less_than_equal"
    assert exc.value.errors()[0]["type"] == expected


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "the score felt right"}, "extra_forbidden"),
        ({"dimensionScores.vibes": 100}, "extra_forbidden"),
        ({"coverage.0.notes": "…"}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"rubricId": "contract-readiness-v2"}, "literal_error"),
        ({"revisionNumber": 2}, "less_than_equal"),
        ({"revisionNumber": -1}, "greater_than_equal"),
        ({"dimensionScores.intentFidelity": 100.5}, "less_than_equal"),
        ({"dimensionScores.contextEfficiency": -1}, "greater_than_equal"),
        ({"dimensionScores.contextEfficiency": "70"}, "float_type"),
        ({"overallScore": True}, "float_type"),
        ({"targetRef": "trace://3f2b8c1e-7a4d-4e9b-9c61-2d5f0a8e4b17"}, "string_pattern_mismatch"),
        ({"coverage.0.contractFields": []}, "too_short"),
        ({"coverage.0.contractFields": ["objective", "hiddenField"]}, "literal_error"),
        ({"coverage.0.status": "mostly"}, "literal_error"),
        ({"hardGates": []}, "too_short"),
        ({"hardGates.0.evidenceRefs": []}, "too_short"),
        ({"findings.0.correctionFields": ["permissions"]}, "literal_error"),
        ({"decision": "approve"}, "literal_error"),
        ({"rationaleSummary": "ü" * 4_096}, "string_too_many_bytes"),
    ],
)
def test_a_malformed_review_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


# --------------------------------------------------------------------------------- decisions


def test_pass_at_79_99_is_rejected() -> None:
    body = with_scores(golden(), 79.99, 79.99, 79.99, 79.99, 79.99, 79.99)
    assert body["overallScore"] == 79.99
    assert rejection(body) == "score_below_pass"


def test_pass_at_exactly_80_is_accepted() -> None:
    body = with_scores(golden(), 80, 80, 80, 80, 80, 80)
    assert PromptReview.from_wire(body).overall_score == 80


def test_pass_with_a_failed_gate_is_rejected() -> None:
    assert rejection(changed(golden(), {"hardGates.0.passed": False})) == "pass_with_failure"


def test_pass_with_a_blocking_finding_is_rejected() -> None:
    assert rejection(changed(golden(), {"findings": [BLOCKING_FINDING]})) == "pass_with_failure"


@pytest.mark.parametrize("status", ["partial", "missing"])
def test_pass_with_coverage_not_all_covered_is_rejected(status: str) -> None:
    assert rejection(changed(golden(), {"coverage.1.status": status})) == (
        "pass_without_full_coverage"
    )


def test_pass_with_empty_coverage_is_rejected() -> None:
    assert rejection(changed(golden(), {"coverage": []})) == "pass_without_full_coverage"


def test_block_with_a_failed_gate_or_blocking_finding_is_accepted() -> None:
    failed = changed(golden(), {"decision": "block", "hardGates.0.passed": False})
    blocking = changed(golden(), {"decision": "block", "findings": [BLOCKING_FINDING]})
    assert PromptReview.from_wire(failed).decision == "block"
    assert PromptReview.from_wire(blocking).decision == "block"


def test_block_without_a_failure_is_rejected() -> None:
    assert rejection(changed(golden(), {"decision": "block"})) == "block_without_failure"


def test_revise_with_a_blocking_correction_is_accepted() -> None:
    review = PromptReview.from_wire(revise_body())
    assert review.decision == "revise"
    assert review.findings[0].correction_fields == ["objective"]


def test_revise_at_revision_number_1_is_rejected() -> None:
    body = changed(revise_body(), {"revisionNumber": 1})
    assert rejection(body) == "revision_budget_exhausted"


def test_revise_without_a_required_correction_is_rejected() -> None:
    assert rejection(revise_body(requiredCorrection=None)) == "revise_without_correction"


def test_revise_whose_correction_is_not_blocking_is_rejected() -> None:
    body = revise_body(severity="warning")
    assert rejection(body) == "revise_without_correction"


def test_revise_without_a_correction_field_is_rejected() -> None:
    assert rejection(revise_body(correctionFields=[])) == "revise_without_correction_field"
