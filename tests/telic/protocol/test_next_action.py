"""NextAction in its three kinds: golden bodies, round trips, and one negative test per rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._next_action import (
    STOP_CONDITIONS,
    ClarificationAction,
    NextAction,
    PhaseAction,
    TerminalAction,
    instruction_ref,
)
from telic.protocol._types import ACTION_ROLES, ActionRole
from tests.telic.protocol.bodies import DELETE, error_type, load_golden, with_change


def golden(name: str) -> dict[str, Any]:
    return load_golden(name)


def next_action_from_wire(data: object) -> NextAction:
    """Validate a NextAction of any kind by its wire names only, as ``from_wire`` does."""
    return TypeAdapter(NextAction).validate_python(data, by_alias=True, by_name=False)


# --------------------------------------------------------------------------------- golden


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("NextAction", PhaseAction),
        ("NextAction.clarification", ClarificationAction),
        ("NextAction.terminal", TerminalAction),
    ],
)
def test_golden_action_validates_as_its_kind_round_trips_and_keeps_its_digest(
    name: str, model: type[PhaseAction | ClarificationAction | TerminalAction]
) -> None:
    body = golden(name)
    action = next_action_from_wire(body)
    assert type(action) is model
    assert action.to_wire() == body
    assert next_action_from_wire(action.to_wire()) == action
    assert model.from_wire(body) == action
    assert canonical_sha256(action.to_wire()) == canonical_sha256(body)


def test_phase_action_dumps_camel_case_and_carries_the_fixed_stop_conditions() -> None:
    wire = next_action_from_wire(golden("NextAction")).to_wire()
    assert {"instructionRef", "requiredOutputSchema", "remainingBudgets", "workNodeId"} <= (
        wire.keys()
    )
    assert "remainingPlanToolCalls" in wire["remainingBudgets"]
    assert wire["stopConditions"] == list(STOP_CONDITIONS)


@pytest.mark.parametrize("role", ACTION_ROLES)
def test_instruction_ref_of_every_role_is_accepted(role: ActionRole) -> None:
    body = golden("NextAction")
    body.update(logicalRole=role, instructionRef=instruction_ref(role))
    assert isinstance(next_action_from_wire(body), PhaseAction)


def test_dashed_instruction_ref_is_accepted() -> None:
    body = with_change(
        golden("NextAction"), "instructionRef", "artifact://system/roles/scenario-author-v1"
    )
    assert isinstance(next_action_from_wire(body), PhaseAction)


def test_terminal_action_may_report_failed_verification_without_a_report() -> None:
    body = with_change(
        with_change(golden("NextAction.terminal"), "status", "failed_verification"),
        "reportRef",
        None,
    )
    action = next_action_from_wire(body)
    assert isinstance(action, TerminalAction)
    assert action.report_ref is None


# --------------------------------------------------------------------------------- phase


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("remainingBudgets.spare", 1, "extra_forbidden"),
        ("effectivePermissions.browser.download", True, "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("kind", "wait", "union_tag_invalid"),
        ("kind", DELETE, "union_tag_not_found"),
        ("phase", "completed", "literal_error"),
        ("phase", "awaiting_clarification", "literal_error"),
        ("logicalRole", "host", "literal_error"),
        ("instructionRef", "artifact://system/roles/scenario_author-v2", "string_pattern_mismatch"),
        ("instructionRef", "artifact://system/roles/host-v1", "string_pattern_mismatch"),
        ("instructionRef", "artifact://system/roles/executor-v1", "instruction_ref_role_mismatch"),
        ("inputRefs", ["artifact://run/x"] * 257, "too_long"),
        ("contextManifestRef", "repo://AGENTS.md", "string_pattern_mismatch"),
        ("requiredOutputType", "Essay", "literal_error"),
        ("requiredOutputSchema", [], "dict_type"),
        ("additionalOutputSchemas.TraceEvent", {"type": "object"}, "literal_error"),
        ("additionalOutputSchemas.Evidence", "schema", "dict_type"),
        ("workNodeId", "", "string_too_short"),
        ("remainingBudgets.remainingPlanToolCalls", 4001, "less_than_equal"),
        ("remainingBudgets.promptRevisions", 2, "less_than_equal"),
        ("remainingBudgets.postExecutionRemediations", -1, "greater_than_equal"),
        ("remainingBudgets.maximumParallelWorkers", 0, "greater_than_equal"),
        ("remainingBudgets.maximumSubagentDepth", 5, "less_than_equal"),
        ("stopConditions", ["Stop."] * 65, "too_long"),
        ("stopConditions", [""], "string_too_short"),
        ("createdAt", "yesterday", "timestamp_format"),
        ("rationaleSummary", "x" * 4097, "string_too_long"),
    ],
)
def test_phase_action_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        next_action_from_wire(with_change(golden("NextAction"), path, value))
    assert error_type(exc) == code


def test_snake_case_keys_on_the_wire_are_refused() -> None:
    body = golden("NextAction")
    body["logical_role"] = body.pop("logicalRole")
    with pytest.raises(ValidationError) as exc:
        PhaseAction.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}


# --------------------------------------------------------------------------------- others


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("phase", "agent_1_frame", "literal_error"),
        ("clarificationRequestRef", "trace://run", "string_pattern_mismatch"),
        ("effectivePermissions.repository.read", ["**"], "clarification_permissions_not_empty"),
        ("effectivePermissions.shell.inspect", True, "clarification_permissions_not_empty"),
        ("reportRef", None, "extra_forbidden"),
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
    ],
)
def test_clarification_action_breaking_a_rule_is_rejected(
    path: str, value: object, code: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        next_action_from_wire(with_change(golden("NextAction.clarification"), path, value))
    assert error_type(exc) == code


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("phase", "awaiting_clarification", "literal_error"),
        ("phase", "failed_verification", "literal_error"),
        ("status", "active", "literal_error"),
        ("reportRef", DELETE, "missing"),
        ("effectivePermissions", {}, "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
    ],
)
def test_terminal_action_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        next_action_from_wire(with_change(golden("NextAction.terminal"), path, value))
    assert error_type(exc) == code
