"""Every tool's published input schema survives a real strict-mode converter.

The converter is the OpenAI Agents SDK's, called as that SDK calls it for a tool an MCP server
lists (``agents.mcp.util.MCPUtil.to_function_tool`` with ``convert_schemas_to_strict``): it
refuses any ``$ref`` and any object that admits undeclared keys. Only the two free-form objects
(the artifact ``body`` of ``telic_submit_artifact`` and the ``packet`` of
``telic_return_packet``) may make a tool fall back, and nothing else in those two tools.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema

from telic.server._tools import TOOL_NAMES, list_tools
from telic.server.inputs import tool_schemas

SCHEMAS = {name: pair["input"] for name, pair in tool_schemas().items()}
FREE_FORM = {"telic_submit_artifact": "body", "telic_return_packet": "packet"}
"""The tools whose one free-form object argument cannot be strict, and that argument."""
OPEN_OBJECT = "permits undeclared properties"


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Convert as the SDK does for an MCP tool with a non-empty input schema."""
    return ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True)


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_no_input_schema_holds_a_reference(tool: str) -> None:
    text = json.dumps(SCHEMAS[tool])
    assert "$ref" not in text
    assert "$defs" not in text


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_declared_object_is_closed_but_the_free_form_one(tool: str) -> None:
    schema = SCHEMAS[tool]
    free = schema["properties"].get(FREE_FORM.get(tool, ""))
    for node in _objects(schema):
        if node is free:
            assert "additionalProperties" not in node  # a free-form JSON object, on purpose
        else:
            assert node.get("additionalProperties") is False, node


@pytest.mark.parametrize("tool", [name for name in TOOL_NAMES if name not in FREE_FORM])
def test_the_agents_sdk_converts_the_tool_to_strict_mode(tool: str) -> None:
    strict = _strict(SCHEMAS[tool])
    assert strict["additionalProperties"] is False
    assert sorted(strict["required"]) == sorted(SCHEMAS[tool]["properties"])


@pytest.mark.parametrize(("tool", "argument"), sorted(FREE_FORM.items()))
def test_only_the_free_form_argument_keeps_a_tool_from_strict_mode(
    tool: str, argument: str
) -> None:
    with pytest.raises(UserError, match=OPEN_OBJECT):
        _strict(SCHEMAS[tool])
    without = copy.deepcopy(SCHEMAS[tool])
    del without["properties"][argument]
    without["required"] = [name for name in without.get("required", []) if name != argument]
    assert _strict(without)["additionalProperties"] is False


def test_the_listing_publishes_the_committed_schemas_with_closed_world_annotations() -> None:
    for tool in list_tools():
        assert tool.input_schema == SCHEMAS[tool.name]
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is False
