"""ProblemFrame and ScenarioSpec: golden bodies, round trips, and one negative test per rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._frame import ClarificationNeeded, ProblemFrame, ScenarioSpec
from tests.telic.protocol.bodies import DELETE, error_type, load_golden, with_change

RUN = "3f9c2a71-8d4e-4b6a-9c2f-1e7d5a0b4c83"
NEEDED = {
    "required": True,
    "reason": "Only the user can choose which dashboard to keep.",
    "requestRef": f"artifact://{RUN}/clarification-1",
}


def golden(name: str) -> dict[str, Any]:
    return load_golden(name)


def frame_rejected_with(body: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as exc:
        ProblemFrame.from_wire(body)
    return error_type(exc)


# --------------------------------------------------------------------------------- golden


@pytest.mark.parametrize("model", [ProblemFrame, ScenarioSpec])
def test_golden_body_validates_round_trips_and_keeps_its_digest(
    model: type[ProblemFrame] | type[ScenarioSpec],
) -> None:
    body = golden(model.__name__)
    parsed = model.from_wire(body)
    assert parsed.to_wire() == body
    assert model.from_wire(parsed.to_wire()) == parsed
    assert canonical_sha256(parsed.to_wire()) == canonical_sha256(body)


def test_frame_dumps_camel_case() -> None:
    wire = ProblemFrame.from_wire(golden("ProblemFrame")).to_wire()
    assert {"knownFacts", "draftAcceptanceCriteria", "applicableRuleRefs", "nonGoals"} <= (
        wire.keys()
    )
    assert "evidenceRequired" in wire["draftAcceptanceCriteria"][0]


# --------------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("knownFacts.1.id", "F-1"),
        ("inferences.0.id", "F-2"),
        ("unknowns.0.id", "I-1"),
        ("draftAcceptanceCriteria.0.id", "U-1"),
        ("draftAcceptanceCriteria.1.id", "AC-1"),
        ("draftAcceptanceCriteria.1.id", "F-1"),
    ],
)
def test_frame_with_duplicate_ids_across_sections_is_rejected(path: str, value: str) -> None:
    assert frame_rejected_with(with_change(golden("ProblemFrame"), path, value)) == (
        "frame_duplicate_id"
    )


# --------------------------------------------------------------------------------- clarification


@pytest.mark.parametrize(
    "classification", ["user_owned_materially_divergent", "permission_expanding"]
)
def test_divergent_unknown_without_clarification_is_rejected(classification: str) -> None:
    body = with_change(golden("ProblemFrame"), "unknowns.0.classification", classification)
    assert frame_rejected_with(body) == "frame_clarification_required"


@pytest.mark.parametrize(
    "classification", ["user_owned_materially_divergent", "permission_expanding"]
)
def test_divergent_unknown_with_a_requested_clarification_is_accepted(classification: str) -> None:
    body = with_change(golden("ProblemFrame"), "unknowns.0.classification", classification)
    frame = ProblemFrame.from_wire(with_change(body, "clarification", NEEDED))
    assert isinstance(frame.clarification, ClarificationNeeded)


def test_frame_without_clarification_may_give_a_reason() -> None:
    body = with_change(golden("ProblemFrame"), "clarification.reason", "Nothing is user-owned.")
    assert ProblemFrame.from_wire(body).clarification.reason == "Nothing is user-owned."


@pytest.mark.parametrize(
    ("clarification", "code"),
    [
        ({"required": True, "reason": "Ask."}, "missing"),
        ({"required": True, "reason": None, "requestRef": NEEDED["requestRef"]}, "string_type"),
        ({"required": True, "reason": "Ask.", "requestRef": "repo://x"}, "string_pattern_mismatch"),
        (
            {"required": False, "reason": None, "requestRef": NEEDED["requestRef"]},
            "extra_forbidden",
        ),
        ({"required": False}, "missing"),
        ({"required": "false", "reason": None}, "clarification_required_type"),
        (
            {"required": 1, **{k: v for k, v in NEEDED.items() if k != "required"}},
            "clarification_required_type",
        ),
        ({"required": 0, "reason": None}, "clarification_required_type"),
        ({"reason": None}, "clarification_required_type"),
    ],
)
def test_malformed_clarification_is_rejected(clarification: dict[str, Any], code: str) -> None:
    body = with_change(golden("ProblemFrame"), "clarification", clarification)
    assert frame_rejected_with(body) == code


# --------------------------------------------------------------------------------- fields


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("knownFacts.0.confidence", 1.0, "extra_forbidden"),
        ("scope.maybe", [], "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("originalRequestRef", "repo://README.md", "string_pattern_mismatch"),
        ("intentMode", "fix_all", "literal_error"),
        ("goal", "", "string_too_short"),
        ("knownFacts.0.provenance", "rumour", "literal_error"),
        ("knownFacts.0.sourceRef", "https://example.com", "string_pattern_mismatch"),
        ("inferences.0.sourceRefs", [], "too_short"),
        ("inferences.0.confidence", 1.5, "less_than_equal"),
        ("unknowns.0.classification", "unknowable", "literal_error"),
        ("unknowns.0.impact", "i" * 4097, "string_too_long"),
        ("draftAcceptanceCriteria.0.stage", "deployment", "literal_error"),
        ("draftAcceptanceCriteria.0.evidenceRequired", [], "too_short"),
        ("constraints", ["c"] * 257, "too_long"),
        ("clarification", DELETE, "missing"),
    ],
)
def test_frame_breaking_a_field_rule_is_rejected(path: str, value: object, code: str) -> None:
    assert frame_rejected_with(with_change(golden("ProblemFrame"), path, value)) == code


def test_snake_case_keys_on_the_wire_are_refused() -> None:
    body = golden("ProblemFrame")
    body["known_facts"] = body.pop("knownFacts")
    with pytest.raises(ValidationError) as exc:
        ProblemFrame.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}


# --------------------------------------------------------------------------------- scenario


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("sourceMap.0.note", "x", "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("problemFrameRef", "repo://frame.json", "string_pattern_mismatch"),
        ("title", "t" * 256, "string_too_long"),
        ("actor", "a" * 513, "string_too_long"),
        ("narrative", "", "string_too_short"),
        ("sourceMap.0.sourceRefs", [], "too_short"),
        ("sourceMap.0.field", "", "string_too_short"),
        ("promptReadinessRubricRef", "trace://rubric", "string_pattern_mismatch"),
        ("observableSymptoms", DELETE, "missing"),
    ],
)
def test_scenario_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        ScenarioSpec.from_wire(with_change(golden("ScenarioSpec"), path, value))
    assert error_type(exc) == code
