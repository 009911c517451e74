"""The registry is the one door from untrusted JSON to a typed artifact body."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, get_args

import pytest

from telic import SchemaViolation
from telic.protocol import ARTIFACT_MODELS, ArtifactType, json_schema, parse_artifact
from telic.protocol._types import InternalArtifactType
from telic.protocol.schemas import expected_files, schema_dir

GOLDEN = Path(__file__).parent / "golden"


def _golden(artifact_type: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{artifact_type}.json").read_text("utf-8"))
    return data


STORED_TYPES = sorted(set(ARTIFACT_MODELS))


def test_every_protocol_and_internal_type_has_exactly_one_schema() -> None:
    assert set(STORED_TYPES) == set(get_args(ArtifactType)) | set(get_args(InternalArtifactType))


@pytest.mark.parametrize("artifact_type", STORED_TYPES)
def test_every_artifact_type_has_a_golden_body_that_parses_and_round_trips(
    artifact_type: str,
) -> None:
    body = _golden(artifact_type)
    parsed = parse_artifact(artifact_type, body)
    assert parsed.to_wire() == body


def test_an_unknown_artifact_type_is_a_schema_violation() -> None:
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("SecretPlan", {})
    assert raised.value.issues[0].code == "unknown_artifact_type"


def test_a_snake_case_body_is_refused_because_the_wire_is_camel_case() -> None:
    body = _golden("UserMessage")
    body["run_id"] = body.pop("runId")
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("UserMessage", body)
    codes = {issue.code for issue in raised.value.issues}
    assert codes == {"missing", "extra_forbidden"}


def test_issues_name_the_dot_joined_path_and_never_echo_the_value() -> None:
    body = _golden("ProblemFrame")
    secret = "AKIA" + "ABCDEFGHIJKLMNOP-not-a-real-key"
    body["knownFacts"][0]["provenance"] = secret
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("ProblemFrame", body)
    paths = [issue.path for issue in raised.value.issues]
    assert any(path.startswith("knownFacts.0.provenance") for path in paths)
    text = raised.value.message + json.dumps([i.to_wire() for i in raised.value.issues])
    assert secret not in text


def test_a_body_over_two_mebibytes_of_canonical_json_is_refused_before_validation() -> None:
    body = _golden("UserMessage")
    body["padding"] = "x" * 2_097_152
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("UserMessage", body)
    assert raised.value.issues[0].code == "artifact_too_large"


def test_a_body_holding_nan_is_refused_as_not_json() -> None:
    body = _golden("PromptReview")
    body["overallScore"] = float("nan")
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("PromptReview", body)
    assert raised.value.issues[0].code == "not_json"


def test_json_schema_uses_wire_names_and_forbids_unknown_fields() -> None:
    schema = json_schema("TaskContract")
    assert "acceptanceCriteria" in schema["properties"]
    assert "acceptance_criteria" not in schema["properties"]
    assert schema["additionalProperties"] is False
    assert schema["$schema"].endswith("2020-12/schema")


def test_json_schema_returns_a_copy_that_callers_cannot_corrupt() -> None:
    json_schema("WorkPlan")["properties"].clear()
    assert json_schema("WorkPlan")["properties"]


def test_the_committed_schema_files_match_the_models() -> None:
    directory = schema_dir()
    expected = expected_files()
    committed = {p.name for p in directory.glob("*.schema.json")}
    assert committed == set(expected), "run `make schemas`"
    for name, text in expected.items():
        assert (directory / name).read_text("utf-8") == text, f"{name} drifted: run `make schemas`"


def test_the_shared_schema_equals_a_copy_and_refuses_changes() -> None:
    from telic.protocol._registry import shared_json_schema

    shared = shared_json_schema("WorkPlan")
    assert shared is shared_json_schema("WorkPlan")
    assert shared == json_schema("WorkPlan")
    with pytest.raises(TypeError, match="read-only"):
        shared["properties"]["nodes"]["x"] = 1
    with pytest.raises(TypeError, match="read-only"):
        shared["required"].append("x")
    editable = copy.deepcopy(shared)
    editable["required"].append("x")
    assert "x" not in shared["required"]


def test_an_unknown_key_is_named_by_where_it_stands_never_by_its_text() -> None:
    body = _golden("ProblemFrame")
    key = "hidden" + "ChainOfThought"
    body["knownFacts"][0][key] = "x"
    body[key] = "y"
    with pytest.raises(SchemaViolation) as raised:
        parse_artifact("ProblemFrame", body)
    paths = sorted(issue.path for issue in raised.value.issues)
    assert paths == ["(key)", "knownFacts.0.(key)"]
    text = raised.value.message + json.dumps([i.to_wire() for i in raised.value.issues])
    assert key not in text
    assert {issue.code for issue in raised.value.issues} == {"extra_forbidden"}


def test_every_wire_field_name_is_known_and_nothing_else_is() -> None:
    from telic.protocol._registry import wire_names

    names = wire_names()
    assert {"knownFacts", "rationaleSummary", "schemaVersion", "evidenceRefs"} <= names
    assert "hiddenChainOfThought" not in names
    assert "run_id" not in names  # the wire is camelCase only
