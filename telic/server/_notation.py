"""Telic type notation: a JSON Schema as TypeScript-like text, written exactly.

A model reads ``score: number(0..100) // 80 or more to progress.`` more easily, in fewer bytes,
than the JSON Schema object it stands for. This module writes a schema in that notation
(``encode``); a host reads it back exactly: ``decode(encode(schema).text) == schema`` for every
schema the encoder accepts. The encoder writes a form only for a node whose every key the form
carries, so the equality holds by construction; the reader lives with the tests
(``tests/telic/server/notation_decoder.py``), which prove it for every artifact schema and for
generated ones. A construct the notation has no form for is written as ``json{…}``, the node's
own JSON Schema, so nothing is ever approximated.

The grammar is ``docs/protocol.md`` §3.1, "Compact schemas over MCP": a closed root object
block, then a ``type`` line or block per ``$defs`` entry, ``field`` lines for properties written
by name alone and ``alias`` lines for sub-schemas written by name in place. Kinds already sent to
a session are left out of its later texts (``omit``).

Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
_REF: Final = "#/$defs/"
_WORDS: Final = frozenset(
    {"string", "integer", "number", "boolean", "null", "object", "json", "oneOf"}
)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An enum member written without quotes: a lower-case word that no type or keyword spells.
_BARE: Final = re.compile(r"[a-z][A-Za-z0-9_.:-]*")
_NOT_BARE: Final = _WORDS | {"true", "false"}  # also never the name of a type or an alias
_FORMAT: Final = re.compile(r"[a-z][a-z0-9-]*")
FIELD: Final = "field "


@dataclass(frozen=True)
class Encoded:
    """A schema's notation, and the kinds it defines (for the reader to know from then on)."""

    text: str
    types: Mapping[str, Any]
    aliases: Mapping[str, Any]
    fields: Mapping[str, Any] = field(default_factory=dict)


def node_text(node: object) -> str:
    """Canonical compact JSON of a schema node (keys sorted): how kinds are compared."""
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ------------------------------------------------------------------------------------ encoding


@dataclass(frozen=True)
class _Writer:
    types: frozenset[str]  # names a bare word refers to as ``$ref``
    alias_of: Mapping[str, str]  # node text -> alias name (empty while writing an alias)
    aliases: Mapping[str, Any]  # alias name -> node, for checking
    used: set[str]  # alias names written
    fields: Mapping[str, Any] = field(default_factory=dict)  # name -> declared property node
    fields_used: set[str] = field(default_factory=set)  # field names written by name
    any_type: bool = False  # measuring only: a ``$ref`` to any name is written by its name

    def expr(self, node: object) -> tuple[str, bool]:
        """``node`` as an expression, and whether it is a union; ``json{…}`` if need be."""
        written = self._try(node)
        return ("json" + _json(node), False) if written is None else written

    def _try(self, node: object) -> tuple[str, bool] | None:
        if not isinstance(node, dict):
            return None
        alias = self.alias_of.get(node_text(node))
        if alias is not None:
            self.used.add(alias)
            return alias, False
        keys = set(node)
        kind = node.get("type")
        if keys == {"$ref"}:
            ref = node["$ref"]
            if isinstance(ref, str) and ref.startswith(_REF):
                name = ref.removeprefix(_REF)
                if (
                    (self.any_type or name in self.types)
                    and _NAME.fullmatch(name)
                    and name not in _NOT_BARE
                    and name not in self.aliases
                ):
                    return name, False
            return None
        if kind == "string":
            return self._string(node, keys)
        if keys == {"type", "const"} and _literal_const(kind, node["const"]):
            return _json(node["const"]), False
        if kind in ("integer", "number") and keys <= {"type", "minimum", "maximum"}:
            bounds = _range(node, "minimum", "maximum", integers=False)
            return None if bounds is None else (str(kind) + bounds, False)
        if kind in ("boolean", "null", "object") and keys == {"type"}:
            return str(kind), False
        if (
            kind == "array"
            and "items" in node
            and keys <= {"type", "items", "minItems", "maxItems"}
        ):
            bounds = _range(node, "minItems", "maxItems", integers=True)
            if bounds is None:
                return None
            item, union = self.expr(node["items"])
            return (f"({item})" if union else item) + (
                f"[{bounds[1:-1]}]" if bounds else "[]"
            ), False
        if keys == {"oneOf"} and isinstance(node["oneOf"], list) and len(node["oneOf"]) > 1:
            choices = [self.expr(choice)[0] for choice in node["oneOf"]]
            return "oneOf(" + ", ".join(choices) + ")", False
        if keys == {"anyOf"} and isinstance(node["anyOf"], list) and len(node["anyOf"]) > 1:
            members = [self.expr(member) for member in node["anyOf"]]
            if all(text.startswith('"') for text, _ in members):
                return None  # would read as an enum
            return " | ".join(f"({text})" if union else text for text, union in members), True
        return None

    def _string(self, node: dict[str, Any], keys: set[str]) -> tuple[str, bool] | None:
        if keys == {"type", "const"} and isinstance(node["const"], str):
            return _json(node["const"]), False
        if keys == {"type", "enum"}:
            values = node["enum"]
            if (
                isinstance(values, list)
                and len(values) > 1
                and all(isinstance(v, str) for v in values)
            ):
                return "|".join(map(_member, values)), True  # parenthesised as an item
            return None
        if not keys <= {"type", "format", "minLength", "maxLength", "pattern"}:
            return None
        text = "string"
        form = node.get("format")
        if form is not None:
            if not isinstance(form, str) or not _FORMAT.fullmatch(form):
                return None
            text += f"<{form}>"
        bounds = _range(node, "minLength", "maxLength", integers=True)
        if bounds is None:
            return None
        text += bounds
        pattern = node.get("pattern")
        if pattern is not None:
            if not isinstance(pattern, str) or not pattern:
                return None
            text += " /" + _json(pattern)[1:-1].replace("/", "\\/") + "/"
        return text, False


def _literal_const(kind: object, value: object) -> bool:
    """Whether ``{"type": kind, "const": value}`` is written as the bare literal ``value``."""
    if kind == "boolean":
        return isinstance(value, bool)
    return kind == "integer" and isinstance(value, int) and not isinstance(value, bool)


def _member(value: str) -> str:
    """An enum member: bare when it is a lower-case word no keyword spells, else JSON."""
    if _BARE.fullmatch(value) and value not in _NOT_BARE:
        return value
    return _json(value)


def _range(node: dict[str, Any], low_key: str, high_key: str, *, integers: bool) -> str | None:
    """``(low..high)`` of the bounds ``node`` has under these keys, ``""`` when it has neither;
    ``None`` when one is not a number the reader reads back as itself (an integer where
    ``integers``), so that the node is written as ``json{…}``."""
    present = [key for key in (low_key, high_key) if key in node]
    if not present:
        return ""
    for key in present:
        bound = node[key]
        if isinstance(bound, bool) or not isinstance(bound, int if integers else int | float):
            return None
    low, high = node.get(low_key), node.get(high_key)
    return (
        "("
        + ("" if low is None else _json(low))
        + ".."
        + ("" if high is None else _json(high))
        + ")"
    )


def _comment(text: object) -> str | None:
    """`` // text`` for a one-line description; ``None`` when it cannot be one."""
    if isinstance(text, str) and "\n" not in text and "\r" not in text:
        return " // " + text
    return None


def _block_able(node: object, *, root: bool) -> bool:
    if not isinstance(node, dict) or node.get("type") != "object":
        return False
    allowed = {"type", "properties", "required", "additionalProperties", "description"}
    if root:
        allowed |= {"$schema", "$defs"}
        if node.get("$schema") != DRAFT:
            return False
    if not set(node) <= allowed or node.get("additionalProperties") is not False:
        return False
    properties = node.get("properties")
    required = node.get("required", [])
    if not isinstance(properties, dict) or not properties or not isinstance(required, list):
        return False
    if "required" in node and not required:
        return False
    if len(set(required)) != len(required) or not set(required) <= set(properties):
        return False
    return "description" not in node or _comment(node["description"]) is not None


def _block(head: str, node: dict[str, Any], writer: _Writer) -> list[str]:
    comment = _comment(node["description"]) if "description" in node else ""
    lines = [f"{head}{{{comment}"]
    properties: dict[str, Any] = node["properties"]
    required: list[str] = node.get("required", [])
    in_order = [name for name in properties if name in required] == required
    names = (
        list(properties) if in_order else required + [n for n in properties if n not in required]
    )
    for name in names:
        lines.append(_property(name, properties[name], name in required, writer))
    lines.append("}")
    return lines


def _property(name: str, node: object, required: bool, writer: _Writer) -> str:
    declared = writer.fields.get(name)
    if declared is not None and declared == node and node_text(declared) == node_text(node):
        writer.fields_used.add(name)
        return name if required else name + "?"
    label = name if _NAME.fullmatch(name) else _json(name)
    label += ": " if required else "?: "
    if not isinstance(node, dict):
        return label + "json" + _json(node)
    core = dict(node)
    tail = ""
    if "default" in core:
        tail += " = " + _json(core.pop("default"))
    if "description" in core:
        comment = _comment(core["description"])
        if comment is not None:
            del core["description"]
            tail += comment
    text, _ = writer.expr(core)
    return label + text + tail


def expression_text(node: object, aliases: Mapping[str, Any] | None = None) -> str:
    """``node`` as the notation writes it in place, with ``aliases`` by name (for measuring)."""
    table = dict(aliases or {})
    alias_of = {node_text(body): name for name, body in table.items()}
    return _Writer(frozenset(), alias_of, table, set()).expr(node)[0]


def property_texts(
    properties: Iterable[tuple[str, object]], aliases: Mapping[str, Any] | None = None
) -> list[str]:
    """The line of each required property ``(name, schema)``, with ``aliases`` (for measuring)."""
    table = dict(aliases or {})
    alias_of = {node_text(body): name for name, body in table.items()}
    writer = _Writer(frozenset(), alias_of, table, set(), any_type=True)
    return [_property(name, node, True, writer) for name, node in properties]


def _definition(word: str, name: str, node: object, writer: _Writer) -> list[str]:
    head = f"{word} {name} = "
    if word == "type" and _block_able(node, root=False):
        assert isinstance(node, dict)
        return _block(head, node, writer)
    if isinstance(node, dict) and "description" in node:
        comment = _comment(node["description"])
        if comment is not None:
            core = {k: v for k, v in node.items() if k != "description"}
            return [head + writer.expr(core)[0] + comment]
    return [head + writer.expr(node)[0]]


def encode(
    schema: Mapping[str, Any],
    aliases: Mapping[str, Any] | None = None,
    fields: Mapping[str, Any] | None = None,
) -> Encoded | None:
    """Write ``schema`` in the notation; ``None`` when its root is not a closed object.

    ``aliases`` (name → sub-schema) may be written by name wherever that exact sub-schema
    occurs, and ``fields`` (property name → property schema, description included) by their
    property name alone wherever a property of that name has exactly that schema. The result
    decodes to ``schema`` exactly, or ``None`` is returned. Every kind the text uses is defined
    in it; ``omit`` drops those a reader already holds.
    """
    aliases = {
        name: node
        for name, node in (aliases or {}).items()
        if _NAME.fullmatch(name) and name not in _NOT_BARE
    }
    declared = {name: node for name, node in (fields or {}).items() if _NAME.fullmatch(name)}
    body = dict(schema)
    if not _block_able(body, root=True):
        return None
    if "$defs" in body and not (isinstance(body["$defs"], dict) and body["$defs"]):
        return None  # a reader writes ``$defs`` only when a reference reaches one
    defs: dict[str, Any] = dict(body.pop("$defs", None) or {})
    if not all(_NAME.fullmatch(n) and n not in _NOT_BARE and n not in aliases for n in defs):
        return None
    if set(_reached(body, defs)) != set(defs):
        return None  # a definition no reference reaches would not be read back
    return _encode(body, defs, aliases, declared)


def _reached(root: object, defs: Mapping[str, Any]) -> list[str]:
    """Names of ``defs`` that ``root`` references, directly or through other definitions."""
    seen: list[str] = []
    pending = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF):
                name = ref.removeprefix(_REF)
                if name in defs and name not in seen:
                    seen.append(name)
                    pending.append(defs[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return seen


def _encode(
    body: dict[str, Any],
    defs: dict[str, Any],
    aliases: dict[str, Any],
    fields: dict[str, Any],
) -> Encoded:
    writer = _Writer(
        types=frozenset(defs),
        alias_of={node_text(node): name for name, node in aliases.items()},
        aliases=aliases,
        used=set(),
        fields=fields,
    )
    lines = _block("", body, writer)
    written: dict[str, Any] = {}
    for name, node in defs.items():
        lines += _definition("type", name, node, writer)
        written[name] = node
    # A field's own line names no field; the aliases it uses are defined with the others.
    by_value = _Writer(writer.types, writer.alias_of, aliases, writer.used)
    declared: dict[str, Any] = {}
    for name in sorted(writer.fields_used):
        lines.append("field " + _property(name, fields[name], True, by_value))
        declared[name] = fields[name]
    plain = _Writer(writer.types, {}, {}, set())
    defined: dict[str, Any] = {}
    for name in sorted(writer.used):
        lines += _definition("alias", name, aliases[name], plain)
        defined[name] = aliases[name]
    return Encoded("\n".join(lines), written, defined, declared)


def field_key(name: str) -> str:
    """How ``omit`` and a reader's memory name the field ``name`` (apart from types)."""
    return FIELD + name


def omit(text: str, names: Iterable[str]) -> str:
    """``text`` without the ``type``, ``alias`` and ``field`` definitions of ``names``.

    A field is named by ``field_key(name)``. For a reader that already holds those kinds:
    ``decode(omit(text, names), known)`` equals ``decode(text)`` when ``known`` has the same
    bodies under those names.
    """
    dropped = frozenset(names)
    if not dropped:
        return text
    kept: list[str] = []
    skipping = False
    for line in text.split("\n"):
        if skipping:
            skipping = line != "}"
            continue
        if line.startswith(FIELD):
            if FIELD + line[len(FIELD) :].partition(":")[0] not in dropped:
                kept.append(line)
            continue
        for word in ("type ", "alias "):
            if line.startswith(word) and line[len(word) :].partition(" = ")[0] in dropped:
                skipping = word == "type " and line.partition(" = ")[2].startswith("{")
                break
        else:
            kept.append(line)
    return "\n".join(kept)
