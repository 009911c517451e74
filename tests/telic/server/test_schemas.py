"""The compact artifact schemas a NextAction carries accept exactly what the registry's do."""

from __future__ import annotations

from typing import get_args

import jsonschema
import pytest

from telic.protocol import json_schema
from telic.protocol._types import HostArtifactType
from telic.server._schemas import _untitled, compact_schema, emitted_schema, inline


@pytest.mark.parametrize("artifact_type", get_args(HostArtifactType))
def test_the_emitted_schema_is_the_registry_schema_shared_and_untitled(artifact_type: str) -> None:
    original = json_schema(artifact_type)
    emitted = emitted_schema(artifact_type)
    jsonschema.Draft202012Validator.check_schema(emitted)
    assert inline(emitted) == inline(_untitled(original))
    assert len(str(emitted)) <= len(str(original))


def test_a_repeated_subschema_is_written_once_and_referenced() -> None:
    word = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+$"}
    schema = {"type": "object", "title": "T", "properties": {"a": word, "b": word}}
    compact = compact_schema(schema)
    assert "title" not in compact
    assert compact["properties"]["a"] == compact["properties"]["b"] == {"$ref": "#/$defs/Shared1"}
    assert compact["$defs"]["Shared1"] == word
    assert inline(compact) == {k: v for k, v in schema.items() if k != "title"}


def test_a_property_named_title_is_kept() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string", "title": "Title"}}}
    assert compact_schema(schema) == {"type": "object", "properties": {"title": {"type": "string"}}}
