"""Telic type notation decodes to exactly the JSON Schema it was written from: every artifact
schema, any schema built of the constructs it has a form for, and, through ``json{…}``, any
other construct too."""

from __future__ import annotations

import json
import re
import string
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from telic.server._notation import (
    DRAFT,
    encode,
    expression_text,
    field_key,
    node_text,
    omit,
)
from telic.server._schemas import (
    NOTATION_KEY,
    SCHEMA_TYPES,
    emitted_schema,
    full_schema,
    inline,
    notation_aliases,
    notation_fields,
    schema_uri,
)
from tests.telic.server.notation_decoder import Kinds, NotationError, compact_object, decode

HOST_TYPES = [kind for kind in SCHEMA_TYPES if kind != "ContextManifest"]


@pytest.mark.parametrize("artifact_type", SCHEMA_TYPES)
def test_every_artifact_schema_is_recovered_exactly_from_its_notation(artifact_type: str) -> None:
    encoded = encode(full_schema(artifact_type), notation_aliases(), fields=notation_fields())
    assert encoded is not None
    assert decode(encoded.text, Kinds()) == full_schema(artifact_type)
    assert inline(emitted_schema(artifact_type)) == inline(full_schema(artifact_type))


@pytest.mark.parametrize("artifact_type", HOST_TYPES)
def test_the_compact_object_is_a_valid_schema_naming_the_full_one(artifact_type: str) -> None:
    compact = compact_object(artifact_type)
    jsonschema.Draft202012Validator.check_schema(compact)
    assert compact == {"$ref": schema_uri(artifact_type), NOTATION_KEY: compact[NOTATION_KEY]}
    assert decode(compact[NOTATION_KEY]) == full_schema(artifact_type)
    compact_size = len(json.dumps(compact, ensure_ascii=False).encode())
    assert compact_size < 0.6 * len(json.dumps(emitted_schema(artifact_type)).encode())


def test_a_property_reads_as_a_typescript_field_with_its_description() -> None:
    text = compact_object("QualityReview")[NOTATION_KEY]
    lines = text.split("\n")
    assert lines[0].startswith("{ // Agent 3's review of the executed work against the contract.")
    assert "score: number(0..100) // 80 or more to progress." in lines
    assert "diagnosisGate?: DiagnosisGate | null = null // " in "\n".join(lines)
    assert any(
        line.startswith("decision: pass|proceed_to_fix|remediate|block|partial") for line in lines
    )
    assert "alias Id = string(1..128) /^[A-Za-z0-9][A-Za-z0-9._:-]*$/" in lines


def test_a_description_repeated_verbatim_travels_once_as_a_field() -> None:
    lines = compact_object("QualityReview")[NOTATION_KEY].split("\n")
    assert lines[1] == "schemaVersion"
    assert 'field schemaVersion: "1.0" // Protocol version of this body.' in lines
    # An undescribed property that recurs with one schema is a field too, declared once.
    assert lines.count("rationaleSummary") > 5
    assert "field rationaleSummary: Summary" in lines
    assert not any(line.startswith("rationaleSummary:") for line in lines)


def test_an_enum_member_that_could_read_as_a_type_or_keyword_keeps_its_quotes() -> None:
    values = ["pass", "null", "Alpha", "not bare", "1.0", "repository.read", "runId"]
    schema = _root({"e": {"type": "string", "enum": values}}, ["e"])
    encoded = encode(schema)
    assert encoded is not None
    assert 'e: pass|"null"|"Alpha"|"not bare"|"1.0"|repository.read|runId' in encoded.text
    assert decode(encoded.text) == schema


def test_a_property_with_another_schema_than_its_field_is_written_out() -> None:
    code = {"type": "string", "maxLength": 3, "description": "The code."}
    other = {"type": "string", "maxLength": 4, "description": "The code."}
    first = _root({"code": code}, ["code"])
    second = _root({"code": other, "again": code}, ["code"])
    fields = {"code": code}
    written = encode(first, fields=fields)
    assert written is not None
    assert written.text.split("\n")[1] == "code"
    assert "field code: string(..3) // The code." in written.text
    known = Kinds(fields=written.fields)
    again = encode(second, fields=fields)
    assert again is not None
    written_out = ["code: string(..4) // The code.", "again?: string(..3) // The code."]
    assert again.text.split("\n")[1:3] == written_out  # a field is its name and its schema
    assert "field code" not in again.text
    assert decode(again.text) == second
    assert omit(written.text, [field_key("code")]) == "{\ncode\n}"
    assert decode("{\ncode\n}", known) == first
    with pytest.raises(NotationError, match="a known field, not 'code'"):
        decode("{\ncode\n}")


def test_a_constant_a_format_and_a_one_of_read_as_literals() -> None:
    properties = {
        "required": {"type": "boolean", "const": True},
        "workers": {"type": "integer", "const": 1},
        "at": {"type": "string", "format": "date-time", "minLength": 1},
        "pick": {"oneOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]},
    }
    schema = _root(properties, list(properties))
    schema["$defs"] = {"A": {"type": "object", "additionalProperties": False, "properties": {}}}
    encoded = encode(schema)
    assert encoded is not None
    lines = encoded.text.split("\n")
    assert lines[1:5] == [
        "required: true",
        "workers: 1",
        "at: string<date-time>(1..)",
        "pick: oneOf(A, null)",
    ]
    assert decode(encoded.text) == schema


def test_a_construct_without_a_form_is_written_as_its_json_schema() -> None:
    when = {"type": "string", "format": "Date Time", "description": "When."}
    schema = _root({"at": when, "n": {"type": "integer", "exclusiveMinimum": 0}}, ["at"])
    encoded = encode(schema)
    assert encoded is not None
    assert 'at: json{"type":"string","format":"Date Time"} // When.' in encoded.text
    assert 'n?: json{"type":"integer","exclusiveMinimum":0}' in encoded.text
    assert decode(encoded.text) == schema


def test_an_expression_that_would_not_read_back_is_written_as_its_json_schema() -> None:
    odd = {"type": "string", "minLength": "3"}  # not a number: no string(…) form reads it back
    flag = {"type": "integer", "maximum": True}
    schema = _root({"a": odd, "b": flag, "c": {"type": "string", "maxLength": 3}}, ["a", "b"])
    encoded = encode(schema)
    assert encoded is not None
    assert 'a: json{"type":"string","minLength":"3"}' in encoded.text
    assert 'b: json{"type":"integer","maximum":true}' in encoded.text
    assert "c?: string(..3)" in encoded.text
    assert decode(encoded.text) == schema


def test_a_root_that_is_not_a_closed_object_has_no_notation() -> None:
    assert encode({"$schema": DRAFT, "type": "string"}) is None
    assert encode({"type": "object", "properties": {"a": {"type": "string"}}}) is None


def test_a_kind_the_reader_knows_is_not_written_again() -> None:
    point = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"x": {"type": "number"}},
    }
    first = _root({"p": {"$ref": "#/$defs/Point"}}, ["p"], defs={"Point": point})
    second = _root({"q": {"$ref": "#/$defs/Point"}}, ["q"], defs={"Point": point})
    written = encode(first)
    assert written is not None
    assert dict(written.types) == {"Point": point}
    known = Kinds(types=written.types)
    again = encode(second)
    assert again is not None
    assert dict(again.types) == {"Point": point}
    text = omit(again.text, ["Point"])  # as a session that has Point is sent the schema
    assert "type Point" in again.text
    assert "type Point" not in text
    assert decode(text, known) == second
    with pytest.raises(NotationError, match="'Point'"):
        decode(text)


def test_a_kind_the_session_holds_with_another_body_is_written_in_full() -> None:
    alias = "alias Id = string(1..128) /^[A-Za-z0-9][A-Za-z0-9._:-]*$/"
    whole = compact_object("QualityReview")[NOTATION_KEY]
    assert alias in whole.split("\n")
    same = compact_object("QualityReview", {"Id": node_text(notation_aliases()["Id"])})
    assert alias not in same[NOTATION_KEY].split("\n")
    assert decode(same[NOTATION_KEY], Kinds(aliases={"Id": notation_aliases()["Id"]})) == (
        full_schema("QualityReview")
    )
    other = compact_object("QualityReview", {"Id": node_text({"type": "integer"})})
    assert other[NOTATION_KEY] == whole


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "root object"),
        ("{\na: string", "'}'"),
        ("{\na: Nope\n}", "'Nope'"),
        ("{\na: string(..)\n}", "a bound"),
        ("{\na: string /abc\n}", "ends the pattern"),
        ("{\na: integer(1..2) extra\n}", "end of the line"),
        ("{\na: string\n}\nmystery", "'type' or 'alias'"),
        ("{\na: string\na: string\n}", "twice"),
        ("{\n  a: string\n}", "a property name"),
        ("{\na: x|null\n}", "an enum member"),
        ("{\na\n}", "a known field, not 'a'"),
        ("{\na\n}\nfield a?: string", "a field without '?'"),
        ("{\na: oneOf string\n}", "'(' after 'oneOf'"),
        ("{\na: oneOf(string, null\n}", "')'"),
        ("{\na: string<Date>\n}", "a format name"),
        ("{\na: string<date\n}", "'>'"),
        ("{\na: 1.5\n}", "an integer"),
    ],
)
def test_text_that_is_not_the_notation_is_refused_naming_what_was_expected(
    text: str, expected: str
) -> None:
    with pytest.raises(NotationError, match=re.escape(expected)):
        decode(text)


# ----------------------------------------------------------------- generated schemas round-trip


def _root(
    properties: dict[str, Any],
    required: list[str],
    *,
    defs: dict[str, Any] | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    root: dict[str, Any] = {
        "$schema": DRAFT,
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if required:
        root["required"] = required
    if description is not None:
        root["description"] = description
    if defs:
        root["$defs"] = defs
    return root


_texts = st.text(alphabet=string.printable + "é–\u2028", max_size=24)
# Enum members: any text, words that may go bare, and words that must keep their quotes.
_members = st.one_of(
    _texts,
    st.from_regex(r"[a-z][A-Za-z0-9_.:-]{0,8}", fullmatch=True),
    st.sampled_from(["null", "string", "true", "json", "Alpha", "Word", "a b", "1.0"]),
)
_counts = st.integers(min_value=0, max_value=10**6)
_numbers = st.one_of(_counts, st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))


def _bounded(kind: str, low: str, high: str, values: st.SearchStrategy[Any]) -> Any:
    return st.fixed_dictionaries({"type": st.just(kind)}, optional={low: values, high: values})


_leaves = st.one_of(
    _bounded("string", "minLength", "maxLength", _counts),
    st.fixed_dictionaries(
        {"type": st.just("string"), "pattern": _texts},
        optional={"minLength": _counts, "maxLength": _counts},
    ),
    _bounded("integer", "minimum", "maximum", _counts),
    _bounded("number", "minimum", "maximum", _numbers),
    st.sampled_from([{"type": "boolean"}, {"type": "null"}, {"type": "object"}]),
    st.builds(lambda value: {"type": "string", "const": value}, _texts),
    st.builds(lambda value: {"type": "boolean", "const": value}, st.booleans()),
    st.builds(lambda value: {"type": "integer", "const": value}, st.integers(-(10**6), 10**6)),
    st.fixed_dictionaries(
        {"type": st.just("string"), "format": st.sampled_from(["uuid", "date-time", "uri"])},
        optional={"minLength": _counts, "pattern": _texts},
    ),
    st.builds(
        lambda values: {"type": "string", "enum": values},
        st.lists(_members, min_size=1, max_size=4, unique=True),
    ),
    st.sampled_from([{"$ref": "#/$defs/Alpha"}, {"$ref": "#/$defs/Beta"}]),
    # constructs the notation has no form for
    st.sampled_from(
        [
            {"type": "string", "format": "Not a format"},
            {"oneOf": [{"type": "string"}]},
            {"not": {"type": "null"}},
            {"type": "number", "const": 0.5},
            {"type": "integer", "const": True},
            {},
        ]
    ),
)


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": inner},
            optional={"minItems": _counts, "maxItems": _counts},
        ),
        st.builds(lambda members: {"anyOf": members}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda members: {"oneOf": members}, st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda node, text: {**node, "description": text}, inner, _texts),
    )


_nodes = st.recursive(_leaves, _extend, max_leaves=6)
_names = st.one_of(
    st.from_regex(r"[a-z][A-Za-z0-9_]{0,8}", fullmatch=True), _texts.filter(lambda n: n != "")
)
_property = st.builds(
    lambda node, description, default: {**node, **description, **default},
    _nodes,
    st.one_of(st.just({}), st.builds(lambda text: {"description": text}, _texts)),
    st.one_of(
        st.just({}),
        st.builds(lambda value: {"default": value}, st.one_of(st.none(), _counts, _texts)),
    ),
)


@st.composite
def _objects(draw: st.DrawFn, *, root: bool) -> dict[str, Any]:
    properties = draw(st.dictionaries(_names, _property, min_size=1, max_size=5))
    required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    line = st.text(alphabet=string.ascii_letters + " .,'\"/:", max_size=30)
    description = draw(st.one_of(st.none(), line if root else _texts))
    node = _root(properties, draw(st.permutations(required)), description=description)
    del node["$schema"]
    return node


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    defs = {"Alpha": draw(_objects(root=False)), "Beta": draw(_nodes)}
    root = draw(_objects(root=True))
    root["properties"] = {**root["properties"], "alphaRef": {"$ref": "#/$defs/Alpha"}}
    root["properties"]["betaRef"] = {"$ref": "#/$defs/Beta"}
    return {"$schema": DRAFT, **root, "$defs": defs}


_ALIASES = {"Word": {"type": "string", "minLength": 1, "maxLength": 8}, "Flag": {"type": "boolean"}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), st.booleans(), st.booleans())
def test_any_schema_of_these_constructs_decodes_to_itself(
    schema: dict[str, Any], aliased: bool, fielded: bool
) -> None:
    aliases = _ALIASES if aliased else None
    # Every root property as a field: Alpha's properties of the same names mostly differ.
    fields = {n: p for n, p in schema["properties"].items() if isinstance(p, dict)}
    fields = fields if fielded else {}
    encoded = encode(schema, aliases, fields=fields)
    assert encoded is not None
    assert decode(encoded.text) == schema
    known = Kinds(
        types={"Alpha": schema["$defs"]["Alpha"]}, aliases=encoded.aliases, fields=encoded.fields
    )
    # What a session that holds those kinds is sent: the text without their definitions.
    shortened = omit(encoded.text, ["Alpha", *encoded.aliases, *map(field_key, encoded.fields)])
    assert "type Alpha =" not in shortened
    assert "\nfield " not in shortened
    assert "\nalias " not in shortened
    assert decode(shortened, known) == schema
    assert decode(shortened, known) == schema


# What the encoder must refuse or write as ``json{…}``, since no form of the notation reads it
# back: bounds that are null, booleans or (for lengths and item counts) fractions; references to
# a type the schema does not define; a definition nothing reaches; alias names a reader takes
# for a keyword.
_hostile_leaves = st.one_of(
    _leaves,
    st.builds(
        lambda kind, key, value: {"type": kind, key: value},
        st.sampled_from(["string", "integer", "number"]),
        st.sampled_from(["minLength", "maxLength", "minimum", "maximum"]),
        st.sampled_from([None, True, False, 1.5, "3", -2]),
    ),
    st.builds(
        lambda key, value: {"type": "array", "items": {"type": "null"}, key: value},
        st.sampled_from(["minItems", "maxItems"]),
        st.sampled_from([None, True, 2.5, 3]),
    ),
    st.sampled_from([{"$ref": "#/$defs/Gamma"}, {"$ref": "#/$defs/Word"}, {"$ref": "#/x"}]),
)
_hostile_nodes = st.recursive(_hostile_leaves, _extend, max_leaves=6)


@st.composite
def _hostile_schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(_names, _hostile_nodes, min_size=1, max_size=4))
    schema = _root(properties, draw(st.lists(st.sampled_from(sorted(properties)), unique=True)))
    defs = draw(
        st.dictionaries(st.sampled_from(["Alpha", "Beta", "Word", "string"]), _hostile_nodes)
    )
    if draw(st.booleans()):
        schema["$defs"] = defs  # maybe empty, maybe never referenced
    return schema


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile_schemas(), st.booleans())
def test_the_encoder_writes_text_that_reads_back_exactly_or_no_text(
    schema: dict[str, Any], aliased: bool
) -> None:
    odd_aliases = {"string": {"type": "string"}, "true": {"type": "null"}}
    aliases = {**_ALIASES, **odd_aliases} if aliased else None
    encoded = encode(schema, aliases)
    if encoded is not None:
        assert decode(encoded.text) == schema


def test_a_definition_no_reference_reaches_or_an_empty_defs_has_no_notation() -> None:
    point = {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "additionalProperties": False,
    }
    reached = _root({"p": {"$ref": "#/$defs/Point"}}, ["p"], defs={"Point": point})
    assert encode(reached) is not None
    unreached = _root({"p": {"type": "null"}}, ["p"], defs={"Point": point})
    assert encode(unreached) is None
    assert encode({**_root({"p": {"type": "null"}}, ["p"]), "$defs": {}}) is None
    undefined = _root({"p": {"$ref": "#/$defs/Gone"}}, ["p"])
    encoded = encode(undefined)
    assert encoded is not None
    assert 'p: json{"$ref":"#/$defs/Gone"}' in encoded.text
    assert decode(encoded.text) == undefined


def test_a_union_of_string_constants_is_written_as_json_never_as_an_enum() -> None:
    node = {"anyOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]}
    assert expression_text(node) == "json" + json.dumps(node, separators=(",", ":"))
