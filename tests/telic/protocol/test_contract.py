"""TaskContract: the golden body, round trips, and a negative test for every schema rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._contract import VERIFICATION_CAPABILITIES, TaskContract
from tests.telic.protocol.bodies import DELETE, changed, first_error_type, load_golden


def golden() -> dict[str, Any]:
    return load_golden("TaskContract")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(TaskContract, body)


def contract_in(mode: str) -> dict[str, Any]:
    """A valid contract for ``mode``: no diagnosis verification and no writes where not allowed."""
    body = golden()
    completion = copy.deepcopy(body["verificationRequirements"][1])
    changes: dict[str, object] = {"intentMode": mode}
    if mode != "analyze_and_fix":
        changes["verificationRequirements"] = [completion] if mode != "report_only" else []
    if mode in ("report_only", "plan_only", "analyze_only"):
        changes["permissions.repository.write"] = []
    return changed(body, changes)


# --------------------------------------------------------------------------------- golden


def test_golden_contract_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    contract = TaskContract.from_wire(body)
    assert contract.to_wire() == body
    assert TaskContract.from_wire(contract.to_wire()) == contract
    assert canonical_sha256(contract.to_wire()) == canonical_sha256(body)


def test_contract_dumps_camel_case_names() -> None:
    wire = TaskContract.from_wire(golden()).to_wire()
    assert {"runId", "originalRequestRef", "verificationRequirements", "unresolvedQuestions"} <= (
        wire.keys()
    )
    assert {"evidenceRequired"} <= wire["acceptanceCriteria"][0].keys()


@pytest.mark.parametrize(
    "mode", ["report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix"]
)
def test_a_well_formed_contract_is_accepted_in_every_mode(mode: str) -> None:
    assert TaskContract.from_wire(contract_in(mode)).intent_mode == mode


def test_fix_only_may_grant_writes_and_deletes() -> None:
    body = changed(contract_in("fix_only"), {"permissions.repository.delete": ["apps/web/tmp/**"]})
    assert TaskContract.from_wire(body).permissions.repository.delete == ["apps/web/tmp/**"]


def test_verification_capabilities_are_the_six_observing_ones() -> None:
    assert set(VERIFICATION_CAPABILITIES) == {
        "repository.read",
        "shell.inspect",
        "shell.execute",
        "runtime.inspect",
        "browser.inspect",
        "network.read",
    }


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "first I thought…"}, "extra_forbidden"),
        ({"scope.owner": "web team"}, "extra_forbidden"),
        ({"acceptanceCriteria.0.hiddenChainOfThought": "…"}, "extra_forbidden"),
        ({"permissions.shell.sudo": True}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"version": 0}, "greater_than_equal"),
        ({"version": 3}, "less_than_equal"),
        ({"version": 1.0}, "int_type"),
        ({"version": True}, "int_type"),
        ({"intentMode": "fix_everything"}, "literal_error"),
        ({"originalRequestRef": "repo://README.md"}, "string_pattern_mismatch"),
        ({"problemFrameRef": DELETE}, "missing"),
        ({"acceptanceCriteria": []}, "too_short"),
        ({"acceptanceCriteria.0.evidenceRequired": []}, "too_short"),
        ({"constraints": ["x"] * 257}, "too_long"),
        ({"verificationRequirements.0.capability": "repository.write"}, "literal_error"),
        ({"verificationRequirements.0.capability": "runtime.restart"}, "literal_error"),
        ({"verificationRequirements.0.fallback": DELETE}, "missing"),
        ({"assumptions.0.reversible": "yes"}, "bool_type"),
        ({"objective": "x" * 32_769}, "string_too_long"),
        ({"objective": "€" * 10_923}, "string_too_many_bytes"),
        ({"rationaleSummary": ""}, "string_too_short"),
        ({"rationaleSummary": "é" * 4_096}, "string_too_many_bytes"),
        ({"rationaleSummary": "x" * 4_097}, "string_too_long"),
    ],
)
def test_a_malformed_contract_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


def test_a_summary_of_exactly_4096_ascii_chars_is_accepted() -> None:
    body = changed(golden(), {"rationaleSummary": "x" * 4_096})
    assert len(TaskContract.from_wire(body).rationale_summary) == 4_096


def test_snake_case_names_are_unknown_on_the_wire() -> None:
    body = golden()
    body["run_id"] = body.pop("runId")
    with pytest.raises(ValidationError) as exc:
        TaskContract.from_wire(body)
    assert {"extra_forbidden", "missing"} == {error["type"] for error in exc.value.errors()}


def test_errors_do_not_echo_the_rejected_value() -> None:
    body = changed(golden(), {"objective": "sk-secret-" + "€" * 11_000})
    with pytest.raises(ValidationError) as exc:
        TaskContract.from_wire(body)
    assert "sk-secret" not in str(exc.value)


# --------------------------------------------------------------------------------- rules


def test_criterion_ids_must_be_unique() -> None:
    body = changed(golden(), {"acceptanceCriteria.1.id": "AC-DIAGNOSIS"})
    assert rejection(body) == "duplicate_criterion_id"


def test_verification_ids_must_be_unique() -> None:
    body = changed(golden(), {"verificationRequirements.1.id": "VR-DIAGNOSIS"})
    assert rejection(body) == "duplicate_verification_id"


@pytest.mark.parametrize("mode", ["analyze_only", "fix_only", "analyze_and_fix"])
def test_a_verifying_mode_without_a_required_verification_is_rejected(mode: str) -> None:
    body = contract_in(mode)
    for requirement in body["verificationRequirements"]:
        requirement["required"] = False
    assert rejection(body) == "required_verification_missing"


@pytest.mark.parametrize("mode", ["report_only", "plan_only"])
def test_report_and_plan_modes_need_no_verification(mode: str) -> None:
    body = changed(contract_in(mode), {"verificationRequirements": []})
    assert TaskContract.from_wire(body).verification_requirements == []


@pytest.mark.parametrize("missing_stage", ["diagnosis", "completion"])
def test_analyze_and_fix_without_criteria_in_both_stages_is_rejected(missing_stage: str) -> None:
    body = golden()
    body["acceptanceCriteria"] = [
        c for c in body["acceptanceCriteria"] if c["stage"] != missing_stage
    ]
    assert rejection(body) == "stage_criteria_missing"


@pytest.mark.parametrize("optional_index", [0, 1])
def test_analyze_and_fix_without_required_verification_in_both_stages_is_rejected(
    optional_index: int,
) -> None:
    body = changed(golden(), {f"verificationRequirements.{optional_index}.required": False})
    assert rejection(body) == "stage_verification_missing"


@pytest.mark.parametrize("mode", ["report_only", "plan_only", "analyze_only", "fix_only"])
def test_diagnosis_stage_verification_is_only_for_analyze_and_fix(mode: str) -> None:
    body = contract_in(mode)
    diagnosis = copy.deepcopy(golden()["verificationRequirements"][0])
    diagnosis["required"] = False
    body["verificationRequirements"].append(diagnosis)
    assert rejection(body) == "diagnosis_verification_not_allowed"


@pytest.mark.parametrize("mode", ["report_only", "plan_only", "analyze_only"])
@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("permissions.repository.write", ["src/**"]),
        ("permissions.repository.delete", ["tmp/**"]),
        ("permissions.runtime.restart", ["local"]),
        ("permissions.browser.mutateState", True),
        ("permissions.network.externalWrite", True),
    ],
)
def test_a_non_mutating_mode_may_not_grant_a_mutating_permission(
    mode: str, path: str, value: object
) -> None:
    assert rejection(changed(contract_in(mode), {path: value})) == "mutating_permission_not_allowed"
