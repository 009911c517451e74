"""Every tool's output schema declares draft-07 and means under it what it means under 2020-12."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.validators import validator_for
from referencing import Registry

from telic.server._args import OUTPUT_DIALECT, SHARED_KEYWORDS
from telic.server.inputs import tool_schemas

OUTPUTS = {name: pair["output"] for name, pair in tool_schemas().items()}


def _keywords(node: Any, found: set[str]) -> set[str]:
    """Every keyword of a schema, descending into subschemas but not into property names."""
    if isinstance(node, list):
        for item in node:
            _keywords(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for child in value.values():
                    _keywords(child, found)
            elif key not in ("const", "default", "description", "required", "type"):
                _keywords(value, found)
    return found


def _refs_have_siblings(node: Any) -> bool:
    if isinstance(node, list):
        return any(_refs_have_siblings(item) for item in node)
    if isinstance(node, dict):
        if "$ref" in node and len(node) > 1:
            return True
        return any(_refs_have_siblings(value) for value in node.values())
    return False


def _instances(schema: dict[str, Any]) -> list[Any]:
    """A minimal valid instance of ``schema`` and, for each required key, one without it."""
    defs = schema.get("$defs", {})

    def build(node: dict[str, Any]) -> Any:
        if "$ref" in node:
            return build(defs[node["$ref"].removeprefix("#/$defs/")])
        if "const" in node:
            return node["const"]
        if "anyOf" in node:
            return build(node["anyOf"][0])
        kind = str(node.get("type"))
        if kind == "object":
            return {key: build(node["properties"][key]) for key in node.get("required", [])}
        if kind == "array":
            return [build(node["items"])] if "items" in node else []
        return {"string": "x", "integer": 1, "boolean": True, "null": None}.get(kind, {})

    valid = build({key: value for key, value in schema.items() if key != "$schema"})
    variants: list[Any] = [valid]
    for key in schema.get("required", []):
        broken = copy.deepcopy(valid)
        del broken[key]
        variants.append(broken)
    for key, value in valid.items():
        broken = copy.deepcopy(valid)
        broken[key] = 12345 if not isinstance(value, int) or isinstance(value, bool) else "x"
        variants.append(broken)
    return variants


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
def test_each_output_schema_declares_draft_07_and_is_a_valid_draft_07_schema(tool: str) -> None:
    schema = OUTPUTS[tool]
    assert schema["$schema"] == OUTPUT_DIALECT
    Draft7Validator.check_schema(schema)


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
def test_each_output_schema_uses_only_keywords_that_mean_the_same_in_both_dialects(
    tool: str,
) -> None:
    schema = OUTPUTS[tool]
    assert _keywords(schema, set()) - {"$schema"} <= SHARED_KEYWORDS
    assert not _refs_have_siblings(schema)  # draft-07 ignores a $ref's siblings; 2020-12 not


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
def test_draft_07_and_2020_12_accept_and_refuse_the_same_results(tool: str) -> None:
    schema = OUTPUTS[tool]
    as_draft_07 = Draft7Validator(schema, registry=Registry())
    as_2020_12 = Draft202012Validator(
        {key: value for key, value in schema.items() if key != "$schema"}, registry=Registry()
    )
    verdicts = [
        (as_draft_07.is_valid(instance), as_2020_12.is_valid(instance))
        for instance in _instances(schema)
    ]
    assert verdicts[0] == (True, True)
    assert all(seven == twenty for seven, twenty in verdicts)
    if schema.get("required"):
        assert (False, False) in verdicts  # the variants do reach a refusal


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
def test_a_client_that_picks_the_validator_by_dialect_picks_draft_07(tool: str) -> None:
    # The official SDK's client calls ``validator_for`` without a default (2020-12 when absent).
    assert validator_for(OUTPUTS[tool]) is Draft7Validator
