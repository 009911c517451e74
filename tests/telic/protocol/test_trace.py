"""TraceEvent: golden body, round trip, and one negative test per rule."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._trace import EVENT_TYPES, RedactionCategory, TraceEvent
from tests.telic.protocol.bodies import error_type, load_golden, with_change

TOOL = {
    "name": "npm test",
    "argumentsRef": None,
    "resultRef": "artifact://3f9c2a71-8d4e-4b6a-9c2f-1e7d5a0b4c83/evidence-1",
    "exitStatus": 0,
}


def golden() -> dict[str, Any]:
    return load_golden("TraceEvent")


def test_golden_event_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    event = TraceEvent.from_wire(body)
    assert event.to_wire() == body
    assert TraceEvent.from_wire(event.to_wire()) == event
    assert canonical_sha256(event.to_wire()) == canonical_sha256(body)


def test_event_dumps_camel_case() -> None:
    wire = TraceEvent.from_wire(golden()).to_wire()
    assert {"eventType", "permissionDecision", "budgetSnapshot", "rationaleSummary"} <= wire.keys()
    assert "transportRetries" in wire["budgetSnapshot"]
    assert "policyRefs" in wire["permissionDecision"]


@pytest.mark.parametrize(
    "event_type", sorted(set(EVENT_TYPES) - {"permission_checked", "broker_decision"})
)
def test_every_other_event_type_is_accepted_with_tool_metadata(event_type: str) -> None:
    body = with_change(with_change(golden(), "eventType", event_type), "tool", TOOL)
    assert TraceEvent.from_wire(body).event_type == event_type


@pytest.mark.parametrize("category", get_args(RedactionCategory))
def test_redactions_of_every_category_are_accepted(category: str) -> None:
    redaction = {
        "id": "redaction-1",
        "targetRef": "artifact://run/evidence-1",
        "category": category,
    }
    assert TraceEvent.from_wire(with_change(golden(), "redactions", [redaction])).redactions


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("budgetSnapshot.tokens", 1, "extra_forbidden"),
        ("permissionDecision.reason", "x", "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("permissionDecision", None, "trace_permission_decision_missing"),
        ("permissionDecision.decision", "maybe", "literal_error"),
        ("permissionDecision.capability", "repository.rename", "literal_error"),
        ("permissionDecision.scope", "", "string_too_short"),
        ("permissionDecision.scope", "s" * 2049, "string_too_long"),
        ("eventType", "tool_decided", "literal_error"),
        ("sequence", -1, "greater_than_equal"),
        ("sequence", 2**53, "less_than_equal"),
        ("actor", "agent_4", "literal_error"),
        ("phase", "agent_4_executing", "literal_error"),
        ("timestamp", "2026-07-15T10:20:03", "timestamp_format"),
        ("budgetSnapshot.transportRetries", 11, "less_than_equal"),
        ("budgetSnapshot.transportRetries", -1, "greater_than_equal"),
        ("budgetSnapshot.promptRevisions", 2, "less_than_equal"),
        ("budgetSnapshot.postExecutionRemediations", 2, "less_than_equal"),
        ("outputRefs", ["artifact://run/x"] * 257, "too_long"),
        ("rationaleSummary", "", "string_too_short"),
        (
            "redactions",
            [{"id": "r-1", "targetRef": "artifact://run/x", "category": "password"}],
            "literal_error",
        ),
        (
            "redactions",
            [{"id": "r-1", "targetRef": "/etc/x", "category": "secret"}],
            "string_pattern_mismatch",
        ),
    ],
)
def test_event_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        TraceEvent.from_wire(with_change(golden(), path, value))
    assert error_type(exc) == code


@pytest.mark.parametrize("event_type", ["tool_started", "tool_finished"])
def test_tool_event_without_tool_metadata_is_rejected(event_type: str) -> None:
    with pytest.raises(ValidationError) as exc:
        TraceEvent.from_wire(with_change(golden(), "eventType", event_type))
    assert error_type(exc) == "trace_tool_missing"


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("name", "", "string_too_short"),
        ("exitStatus", 256, "less_than_equal"),
        ("argumentsRef", "repo://package.json", "string_pattern_mismatch"),
        ("pid", 42, "extra_forbidden"),
    ],
)
def test_tool_metadata_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    tool = with_change(TOOL, path, value)
    body = with_change(with_change(golden(), "eventType", "tool_finished"), "tool", tool)
    with pytest.raises(ValidationError) as exc:
        TraceEvent.from_wire(body)
    assert error_type(exc) == code


def test_snake_case_keys_on_the_wire_are_refused() -> None:
    body = golden()
    body["event_type"] = body.pop("eventType")
    with pytest.raises(ValidationError) as exc:
        TraceEvent.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}
