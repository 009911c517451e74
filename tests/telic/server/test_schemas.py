"""The compact artifact schemas a NextAction carries accept exactly what the registry's do,
and a session gets each once, in Telic type notation with every kind defined once, then a
reference to the resource that holds it."""

from __future__ import annotations

import gc
import json
from typing import get_args

import jsonschema
import pytest

from telic.controller._phases import PHASES
from telic.protocol import json_schema
from telic.protocol._types import HOST_ARTIFACT_TYPES, ArtifactType, HostArtifactType
from telic.server._schemas import (
    NOTATION_KEY,
    SCHEMA_TYPES,
    SentSchemas,
    _untitled,
    compact_schema,
    emitted_schema,
    full_schema,
    inline,
    notation_fields,
    schema_reference,
    schema_text,
    schema_uri,
    with_rules,
)
from tests.telic.server.notation_decoder import Kinds, compact_object, decode


@pytest.mark.parametrize("artifact_type", get_args(HostArtifactType))
def test_the_emitted_schema_is_the_registry_schema_shared_and_untitled(artifact_type: str) -> None:
    original = json_schema(artifact_type)
    emitted = emitted_schema(artifact_type)
    jsonschema.Draft202012Validator.check_schema(emitted)
    assert inline(emitted) == inline(_untitled(with_rules(artifact_type, original)))
    # The rules' statements change descriptions only: the schema accepts what the registry's does.
    assert inline(_undescribed(emitted)) == inline(_undescribed(_untitled(original)))
    assert len(str(emitted)) <= len(str(original))
    # What --schemas full sends, as before notation.
    assert emitted == compact_schema(with_rules(artifact_type, original))


def _undescribed(node: object) -> object:
    if isinstance(node, dict):
        # A description is a string; a property *named* description is a schema object.
        return {
            k: _undescribed(v)
            for k, v in node.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_undescribed(v) for v in node]
    return node


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


def test_the_schema_types_are_every_output_a_next_action_can_name() -> None:
    named = {spec.primary for spec in PHASES.values()}
    named |= {kind for spec in PHASES.values() for kind in spec.advertised}
    assert set(SCHEMA_TYPES) == named | set(HOST_ARTIFACT_TYPES)
    assert set(SCHEMA_TYPES) <= set(get_args(ArtifactType))


@pytest.mark.parametrize("artifact_type", SCHEMA_TYPES)
def test_a_reference_is_a_small_valid_schema_naming_the_resource(artifact_type: str) -> None:
    reference = schema_reference(artifact_type)
    jsonschema.Draft202012Validator.check_schema(reference)
    assert reference["$ref"] == schema_uri(artifact_type) == f"telic://schemas/{artifact_type}"
    if artifact_type == "ContextManifest":
        assert reference["description"] == "Written by Telic, not by you."
    else:
        assert reference == {"$ref": schema_uri(artifact_type)}
    assert len(json.dumps(reference)) < 120
    assert json.loads(schema_text(artifact_type)) == emitted_schema(artifact_type)


class _Session:
    """Stands in for an MCP session's channel: weakly referenceable and hashable."""


def test_once_a_session_has_a_schema_it_gets_a_reference() -> None:
    sent, session = SentSchemas("once"), _Session()
    first = sent.emitter(session)
    assert first("TaskContract") is compact_object("TaskContract")
    assert first("TaskContract") == schema_reference("TaskContract")  # a repeat in one result
    first.commit()
    later = sent.emitter(session)
    assert later("TaskContract") == schema_reference("TaskContract")
    evidence = later("Evidence")[NOTATION_KEY]
    assert "alias Id =" in compact_object("Evidence")[NOTATION_KEY]
    assert "alias Id =" not in evidence  # TaskContract's text defined it for this session
    assert sent.emitter(_Session())("TaskContract") is compact_object("TaskContract")


def test_a_result_that_was_never_committed_marks_nothing_as_sent() -> None:
    sent, session = SentSchemas("once"), _Session()
    sent.emitter(session)("WorkPlan")  # built, then the call failed: never sent
    assert sent.emitter(session)("WorkPlan") is compact_object("WorkPlan")


def test_the_manifest_written_by_grounding_is_always_a_reference_in_once_mode() -> None:
    reference = SentSchemas("once").emitter(_Session())("ContextManifest")
    assert reference == schema_reference("ContextManifest")
    assert "Written by Telic" in reference["description"]
    assert SentSchemas("full").emitter(_Session())("ContextManifest") == emitted_schema(
        "ContextManifest"
    )


@pytest.mark.parametrize("session", [None, [], "unhashable-or-unweakrefable"])
def test_without_a_usable_session_or_in_full_mode_every_schema_is_full(session: object) -> None:
    emit = SentSchemas("once").emitter(session)
    for _ in range(2):
        assert emit("UserReport") is emitted_schema("UserReport")
        emit.commit()
    full, kept = SentSchemas("full"), _Session()
    for _ in range(2):
        emit = full.emitter(kept)
        assert emit("UserReport") is emitted_schema("UserReport")
        emit.commit()


def test_a_closed_session_takes_its_memory_with_it() -> None:
    sent, session = SentSchemas("once"), _Session()
    emit = sent.emitter(session)
    emit("Evidence")
    emit.commit()
    assert sent.sessions() == 1
    del session
    gc.collect()
    assert sent.sessions() == 0


_ANALYZE_ONLY = [
    ("ContextManifest", "ClarificationRequest"),
    ("ProblemFrame", "ClarificationRequest"),
    ("TaskContract", "ClarificationRequest"),
    ("PromptReview", "ClarificationRequest"),
    ("WorkPlan", "ClarificationRequest"),
    ("WorkResult", "ClarificationRequest", "Evidence"),
    ("QualityReview", "ClarificationRequest"),
    ("ReleaseAudit",),
    ("UserReport",),
]
"""The types each result of an analyze_only run names, in order (start_run first)."""


def _definitions(text: str) -> list[str]:
    return [
        line.split(" = ")[0].split(":")[0]
        for line in text.split("\n")
        if line.startswith(("type ", "alias ", "field "))
    ]


def test_a_fresh_session_receives_every_definition_once_and_can_decode_every_schema() -> None:
    sent, session = SentSchemas("once"), _Session()
    defined: list[str] = []
    known = Kinds(types={}, aliases={})
    recovered: set[str] = set()
    for kinds in _ANALYZE_ONLY:
        emit = sent.emitter(session)
        for kind in kinds:
            schema = emit(kind)
            if NOTATION_KEY not in schema:
                continue
            text = schema[NOTATION_KEY]
            assert decode(text, known) == full_schema(kind)  # with what came before it only
            recovered.add(kind)
            defined += _definitions(text)
            decoded = decode(text, known)
            types = dict(known.types) | (decoded.get("$defs") or {})
            aliases = dict(known.aliases) | {
                name.removeprefix("alias "): node for name, node in _aliases_of(text).items()
            }
            fields = dict(known.fields) | {
                name.removeprefix("field "): notation_fields()[name.removeprefix("field ")]
                for name in _definitions(text)
                if name.startswith("field ")
            }
            known = Kinds(types=types, aliases=aliases, fields=fields)
        emit.commit()
    assert recovered == set(SCHEMA_TYPES) - {"ContextManifest", "ScenarioSpec"}
    assert len(defined) == len(set(defined)), sorted(d for d in defined if defined.count(d) > 1)
    assert "type PermissionSet" in defined
    assert "alias Id" in defined
    assert "field schemaVersion" in defined


def _aliases_of(text: str) -> dict[str, object]:
    from telic.server._schemas import notation_aliases

    return {
        line.split(" = ")[0]: notation_aliases()[line.split(" = ")[0].removeprefix("alias ")]
        for line in text.split("\n")
        if line.startswith("alias ")
    }
