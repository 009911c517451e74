"""RunEnvelope and UserMessage: golden bodies, round trips, and one negative test per rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._run import RunEnvelope, UserMessage
from tests.telic.protocol.bodies import DELETE, error_type, load_golden, with_change


def golden(name: str) -> dict[str, Any]:
    return load_golden(name)


# --------------------------------------------------------------------------------- golden


@pytest.mark.parametrize("model", [RunEnvelope, UserMessage])
def test_golden_body_validates_round_trips_and_keeps_its_digest(
    model: type[RunEnvelope] | type[UserMessage],
) -> None:
    body = golden(model.__name__)
    parsed = model.from_wire(body)
    assert parsed.to_wire() == body
    assert model.from_wire(parsed.to_wire()) == parsed
    assert canonical_sha256(parsed.to_wire()) == canonical_sha256(body)


def test_run_envelope_dumps_camel_case_and_has_no_id() -> None:
    wire = RunEnvelope.from_wire(golden("RunEnvelope")).to_wire()
    assert {"runId", "originalRequestRef", "workingContext", "policyRefs"} <= wire.keys()
    assert "id" not in wire
    assert "repositoryRoot" in wire["workingContext"]
    assert "executeAllowlist" in wire["authorization"]["granted"]["shell"]


# --------------------------------------------------------------------------------- envelope


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "I secretly think…", "extra_forbidden"),
        ("id", "3f9c2a71-8d4e-4b6a-9c2f-1e7d5a0b4c83", "extra_forbidden"),
        ("workingContext.cwd", "/tmp", "extra_forbidden"),
        ("authorization.granted.shell.sudo", True, "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("runId", "-starts-with-dash", "string_pattern_mismatch"),
        ("createdAt", "2026-07-15 10:00:00", "timestamp_format"),
        ("originalRequestRef", "repo://AGENTS.md", "string_pattern_mismatch"),
        ("followupRequestRefs", ["trace://run"], "string_pattern_mismatch"),
        ("requestedMode", "fix_everything", "literal_error"),
        ("status", "running", "literal_error"),
        ("workingContext.repositoryRoot", "projects/dashboard", "repository_root_not_absolute"),
        ("workingContext.repositoryRoot", "C:projects", "repository_root_not_absolute"),
        ("workingContext.repositoryRoot", "/" + "a" * 4096, "string_too_long"),
        ("workingContext.activeFiles", ["../secrets.txt"], "relative_path"),
        ("workingContext.applicableRuleRefs", ["https://example.com"], "string_pattern_mismatch"),
        ("host.name", "h" * 129, "string_too_long"),
        ("host.version", "", "string_too_short"),
        ("host.nativeSubagents", "yes", "literal_error"),
        ("host.capabilities", ["repository.rename"], "literal_error"),
        ("host.capabilities", ["repository.read"] * 257, "too_long"),
        ("authorization.denied", DELETE, "missing"),
        ("authorization.granted.subagents.maximumChildren", 17, "less_than_equal"),
        ("budgets.promptRevisions", 2, "less_than_equal"),
        ("budgets.promptRevisions", "1", "int_type"),
        ("budgets.promptRevisions", 1.0, "int_type"),
        ("budgets.postExecutionRemediations", -1, "greater_than_equal"),
        ("budgets.maximumParallelWorkers", 0, "greater_than_equal"),
        ("budgets.maximumParallelWorkers", 17, "less_than_equal"),
        ("budgets.maximumSubagentDepth", 5, "less_than_equal"),
        ("policyRefs", DELETE, "missing"),
    ],
)
def test_run_envelope_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        RunEnvelope.from_wire(with_change(golden("RunEnvelope"), path, value))
    assert error_type(exc) == code


@pytest.mark.parametrize(
    "root", ["/srv/repo", "C:\\Users\\dev\\repo", "d:/work/repo", "\\\\server\\share\\repo"]
)
def test_run_envelope_accepts_posix_and_windows_absolute_roots(root: str) -> None:
    body = with_change(golden("RunEnvelope"), "workingContext.repositoryRoot", root)
    assert RunEnvelope.from_wire(body).working_context.repository_root == root


def test_run_envelope_accepts_a_null_mode_and_version() -> None:
    body = with_change(
        with_change(golden("RunEnvelope"), "requestedMode", None), "host.version", None
    )
    envelope = RunEnvelope.from_wire(body)
    assert envelope.requested_mode is None
    assert envelope.host.version is None


def test_snake_case_keys_on_the_wire_are_refused() -> None:
    body = golden("RunEnvelope")
    body["run_id"] = body.pop("runId")
    with pytest.raises(ValidationError) as exc:
        RunEnvelope.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}


def test_validation_errors_do_not_echo_the_rejected_value() -> None:
    secret = "ghp_" + "x" * 36
    with pytest.raises(ValidationError) as exc:
        RunEnvelope.from_wire(with_change(golden("RunEnvelope"), "status", secret))
    assert secret not in str(exc.value)


# --------------------------------------------------------------------------------- message


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("content", "", "string_too_short"),
        ("content", "x" * 32_769, "string_too_long"),
        ("content", None, "string_type"),
        ("runId", DELETE, "missing"),
        ("producer", "user", "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
    ],
)
def test_user_message_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        UserMessage.from_wire(with_change(golden("UserMessage"), path, value))
    assert error_type(exc) == code


def test_user_message_may_hold_exactly_32768_characters() -> None:
    body = with_change(golden("UserMessage"), "content", "é" * 32_768)
    assert len(UserMessage.from_wire(body).content) == 32_768
