"""Telic type notation: a JSON Schema as TypeScript-like text, with an exact decoder.

A model reads ``score: number(0..100) // 80 or more to progress.`` more easily, in fewer bytes,
than the JSON Schema object it stands for. This module writes a schema in that notation
(``encode``) and reads it back (``decode``), exactly: ``decode(encode(schema).text) ==
schema`` for every schema the encoder accepts, and the encoder accepts a schema only after
checking that equality itself. A construct the notation has no form for is written as
``json{…}``, the node's own JSON Schema, so nothing is ever approximated.

The text (``docs/protocol.md`` §3.1, "Compact schemas over MCP"):

- The first block is the root, an object: ``{ // description`` then one property per line, then
  ``}``. ``type Name = …`` lines or blocks follow, one per ``$defs`` entry; ``field name: …``
  lines declare a property written by name alone; ``alias Name = …`` lines name a sub-schema
  that is written in place (an alias is shorthand, not a ``$ref``).
- An object block is closed (``additionalProperties: false``). A property line is ``name: T``,
  or ``name?: T`` when it is not required; then `` = value`` for a JSON default and
  `` // text`` for its description. Required properties are listed in ``required`` order.
  Property lines are not indented: inside a block every line up to ``}`` is one.
- A property line that is only ``name`` (or ``name?``) is the declared ``field name: …``: that
  property's whole schema, default and description included. A description repeated verbatim
  under one property name in several definitions (``schemaVersion: "1.0" // Protocol version…``)
  so travels once.
- ``T`` is ``string``, ``string(1..128)`` (minLength..maxLength, either side may be empty),
  ``string(..64) /regex/`` (a pattern, JSON-string escaped, ``/`` as ``\\/``),
  ``string<date-time>`` (a format, before any bounds); ``integer(0..10)`` and
  ``number(0..100)`` (minimum..maximum); ``boolean``, ``null``, ``object``; ``"1.0"`` (a string
  constant), ``true``, ``false``, ``1`` (a boolean or integer constant); ``pass|"1.0"`` (a
  string enum: a member that is a word starting with a lower-case letter,
  ``[a-z][A-Za-z0-9_.:-]*``, and no keyword, goes without quotes, any other is a JSON string;
  the members are joined by ``|`` without spaces); ``T[]`` and ``T[1..256]`` (an array with
  minItems..maxItems); ``A | B`` (anyOf); ``oneOf(A, B)`` (oneOf); ``(T)``; a ``type`` name (a
  ``$ref`` into ``$defs``); an alias name; ``json{…}`` (the sub-schema as JSON).
- Kinds (types, aliases and fields) already sent to a session need not be written again:
  ``encode`` omits the names it is told the reader ``known``s, and ``decode`` takes them from
  ``known``. The root's ``$defs`` are then exactly the types its references reach.

Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "DRAFT",
    "FIELD",
    "Encoded",
    "Kinds",
    "NotationError",
    "decode",
    "encode",
    "expression_text",
    "field_key",
    "node_text",
    "omit",
    "property_texts",
]

DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
_REF: Final = "#/$defs/"
_WORDS: Final = frozenset(
    {"string", "integer", "number", "boolean", "null", "object", "json", "oneOf"}
)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER: Final = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
# An enum member written without quotes: a lower-case word that no type or keyword spells.
_BARE: Final = re.compile(r"[a-z][A-Za-z0-9_.:-]*")
_NOT_BARE: Final = _WORDS | {"true", "false"}  # also never the name of a type or an alias
_FORMAT: Final = re.compile(r"[a-z][a-z0-9-]*")
_DECODER: Final = json.JSONDecoder()
FIELD: Final = "field "


class NotationError(ValueError):
    """Text that is not Telic type notation; the message names what was expected, and where."""


@dataclass(frozen=True)
class Kinds:
    """Named kinds a reader already holds: ``$defs`` types and aliases, by name."""

    types: Mapping[str, Any] = field(default_factory=dict)
    aliases: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, Any] = field(default_factory=dict)


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


def _copy(node: Any) -> Any:
    """A copy of a JSON value (an alias's expansion must not share its table's objects)."""
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


# ------------------------------------------------------------------------------------ encoding


@dataclass(frozen=True)
class _Writer:
    types: frozenset[str]  # names a bare word refers to as ``$ref``
    alias_of: Mapping[str, str]  # node text -> alias name (empty while writing an alias)
    aliases: Mapping[str, Any]  # alias name -> node, for checking
    used: set[str]  # alias names written
    checked: bool = True  # read every expression back, and write json{…} where it differs
    fields: Mapping[str, Any] = field(default_factory=dict)  # name -> declared property node
    fields_used: set[str] = field(default_factory=set)  # field names written by name

    def expr(self, node: object) -> tuple[str, bool]:
        """``node`` as an expression, and whether it is a union; ``json{…}`` if need be."""
        written = self._try(node)
        if written is not None:
            text, union = written
            if not self.checked:
                return text, union
            try:
                if _Reader(text, self.types, self.aliases).whole_expr() == node:
                    return text, union
            except NotationError:
                pass
        return "json" + _json(node), False

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
                if _NAME.fullmatch(name) and name not in _NOT_BARE and name not in self.aliases:
                    return name, False
            return None
        if kind == "string":
            return self._string(node, keys)
        if keys == {"type", "const"} and _literal_const(kind, node["const"]):
            return _json(node["const"]), False
        if kind in ("integer", "number") and keys <= {"type", "minimum", "maximum"}:
            return str(kind) + _range(node.get("minimum"), node.get("maximum")), False
        if kind in ("boolean", "null", "object") and keys == {"type"}:
            return str(kind), False
        if (
            kind == "array"
            and "items" in node
            and keys <= {"type", "items", "minItems", "maxItems"}
        ):
            item, union = self.expr(node["items"])
            bounds = _range(node.get("minItems"), node.get("maxItems"))
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
        text += _range(node.get("minLength"), node.get("maxLength"))
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


def _range(low: object, high: object) -> str:
    if low is None and high is None:
        return ""
    for bound in (low, high):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float)):
            return "(?)"  # not a number: the check in ``expr`` sends it to json{…}
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
    writer = _Writer(frozenset(), alias_of, table, set(), checked=False)
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
    aliases = dict(aliases or {})
    declared = {name: node for name, node in (fields or {}).items() if _NAME.fullmatch(name)}
    body = dict(schema)
    if not _block_able(body, root=True):
        return None
    defs: dict[str, Any] = dict(body.pop("$defs", None) or {})
    if not all(_NAME.fullmatch(n) and n not in _NOT_BARE and n not in aliases for n in defs):
        return None
    # Unchecked first (the common case: every expression reads back as itself, which the whole
    # text's check proves); if the whole differs, again with every expression checked.
    for checked in (False, True):
        encoded = _encode(body, defs, aliases, declared, checked=checked)
        try:
            if decode(encoded.text) == dict(schema):
                return encoded
        except NotationError:
            pass
    return None


def _encode(
    body: dict[str, Any],
    defs: dict[str, Any],
    aliases: dict[str, Any],
    fields: dict[str, Any],
    *,
    checked: bool,
) -> Encoded:
    writer = _Writer(
        types=frozenset(defs),
        alias_of={node_text(node): name for name, node in aliases.items()},
        aliases=aliases,
        used=set(),
        checked=checked,
        fields=fields,
    )
    lines = _block("", body, writer)
    written: dict[str, Any] = {}
    for name, node in defs.items():
        lines += _definition("type", name, node, writer)
        written[name] = node
    # A field's own line names no field; the aliases it uses are defined with the others.
    by_value = _Writer(writer.types, writer.alias_of, aliases, writer.used, checked=checked)
    declared: dict[str, Any] = {}
    for name in sorted(writer.fields_used):
        lines.append("field " + _property(name, fields[name], True, by_value))
        declared[name] = fields[name]
    plain = _Writer(writer.types, {}, {}, set(), checked=checked)
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


# ------------------------------------------------------------------------------------ decoding


class _Reader:
    """A cursor over one expression."""

    def __init__(self, text: str, types: Iterable[str], aliases: Mapping[str, Any]) -> None:
        self.text = text
        self.at = 0
        self.types = frozenset(types)
        self.aliases = aliases

    def fail(self, expected: str) -> NotationError:
        return NotationError(f"expected {expected} at column {self.at + 1} of {self.text!r}")

    def take(self, token: str) -> bool:
        if self.text.startswith(token, self.at):
            self.at += len(token)
            return True
        return False

    def whole_expr(self) -> Any:
        node = self.union()
        if self.at != len(self.text):
            raise self.fail("the end of the expression")
        return node

    def union(self) -> Any:
        members = [self.postfix()]
        while self.take(" | "):
            members.append(self.postfix())
        return members[0] if len(members) == 1 else {"anyOf": members}

    def postfix(self) -> Any:
        node = self.primary()
        while self.take("["):
            array: dict[str, Any] = {"items": node}
            if not self.take("]"):
                low, high = self.bounds(integers=True)
                if not self.take("]"):
                    raise self.fail("']'")
                if low is not None:
                    array["minItems"] = low
                if high is not None:
                    array["maxItems"] = high
            node = {"type": "array", **array}
        return node

    def bounds(self, *, integers: bool) -> tuple[Any, Any]:
        low, high = self.number(integers), None
        if not self.take(".."):
            raise self.fail("'..'")
        high = self.number(integers)
        if low is None and high is None:
            raise self.fail("a bound")
        return low, high

    def number(self, integers: bool) -> Any:
        found = _NUMBER.match(self.text, self.at)
        if found is None:
            return None
        text = found.group()
        exact = text.isdigit() or (text[0] == "-" and text[1:].isdigit())
        value: int | float = int(text) if exact else float(text)
        if integers and not exact:
            raise self.fail("an integer")
        self.at = found.end()
        return value

    def string_literal(self) -> str:
        try:
            value, end = _DECODER.raw_decode(self.text, self.at)
        except json.JSONDecodeError:
            raise self.fail("a JSON string") from None
        if not isinstance(value, str):
            raise self.fail("a JSON string")
        self.at = end
        return value

    def member(self) -> str:
        """One enum member: a JSON string, or a bare lower-case word."""
        if self.text.startswith('"', self.at):
            return self.string_literal()
        found = _BARE.match(self.text, self.at)
        if found is None or found.group() in _NOT_BARE:
            raise self.fail("an enum member")
        self.at = found.end()
        return found.group()

    def primary(self) -> Any:
        if self.take("("):
            inner = self.union()
            if not self.take(")"):
                raise self.fail("')'")
            return inner
        bare = _BARE.match(self.text, self.at)
        if self.text.startswith('"', self.at) or (
            bare is not None and self.text.startswith("|", bare.end())
        ):
            values = [self.member()]
            while self.take("|"):
                values.append(self.member())
            if len(values) == 1:
                return {"const": values[0], "type": "string"}
            return {"enum": values, "type": "string"}
        if _NUMBER.match(self.text, self.at):
            return {"const": self.number(integers=True), "type": "integer"}
        found = _NAME.match(self.text, self.at)
        if found is None:
            raise self.fail("a type")
        word = found.group()
        self.at = found.end()
        if word in ("true", "false"):
            return {"const": word == "true", "type": "boolean"}
        if word == "oneOf":
            if not self.take("("):
                raise self.fail("'(' after 'oneOf'")
            members = [self.union()]
            while self.take(", "):
                members.append(self.union())
            if not self.take(")"):
                raise self.fail("')'")
            return {"oneOf": members}
        if word == "json":
            try:
                value, self.at = _DECODER.raw_decode(self.text, self.at)
            except json.JSONDecodeError:
                raise self.fail("a JSON value after 'json'") from None
            return value
        if word == "string":
            return self.string_type()
        if word in ("integer", "number"):
            node: dict[str, Any] = {"type": word}
            if self.take("("):
                low, high = self.bounds(integers=False)
                if not self.take(")"):
                    raise self.fail("')'")
                if low is not None:
                    node["minimum"] = low
                if high is not None:
                    node["maximum"] = high
            return node
        if word in _WORDS:
            return {"type": word}
        if word in self.aliases:
            return _copy(self.aliases[word])
        if word in self.types:
            return {"$ref": _REF + word}
        self.at = found.start()
        raise self.fail(f"a known type or alias, not {word!r}")

    def string_type(self) -> dict[str, Any]:
        node: dict[str, Any] = {"type": "string"}
        if self.take("<"):
            form = _FORMAT.match(self.text, self.at)
            if form is None:
                raise self.fail("a format name")
            self.at = form.end()
            if not self.take(">"):
                raise self.fail("'>'")
            node["format"] = form.group()
        if self.take("("):
            low, high = self.bounds(integers=True)
            if not self.take(")"):
                raise self.fail("')'")
            if low is not None:
                node["minLength"] = low
            if high is not None:
                node["maxLength"] = high
        if self.text.startswith(" /", self.at) and not self.text.startswith(" //", self.at):
            start = self.at = self.at + 2
            while self.at < len(self.text) and self.text[self.at] != "/":
                self.at += 2 if self.text[self.at] == "\\" else 1
            if self.at >= len(self.text):
                raise self.fail("the '/' that ends the pattern")
            try:
                node["pattern"] = json.loads('"' + self.text[start : self.at] + '"')
            except json.JSONDecodeError:
                raise self.fail("a JSON-escaped pattern") from None
            self.at += 1
        return node


def _split_line(line: str, reader: _Reader) -> tuple[Any, Any, str | None, bool]:
    """An expression, `` = default`` and `` // description`` from ``reader``'s position."""
    node = reader.union()
    default: Any = None
    has_default = False
    if reader.take(" = "):
        try:
            default, reader.at = _DECODER.raw_decode(line, reader.at)
        except json.JSONDecodeError:
            raise reader.fail("a JSON default") from None
        has_default = True
    description: str | None = None
    if reader.take(" // "):
        description = line[reader.at :]
        reader.at = len(line)
    if reader.at != len(line):
        raise reader.fail("' = ', ' // ' or the end of the line")
    return node, default, description, has_default


def _definitions(lines: list[str]) -> tuple[dict[str, str], set[str], list[str]]:
    """The alias lines by name, every type name defined in ``lines``, and the field lines."""
    aliases: dict[str, str] = {}
    types: set[str] = set()
    fields: list[str] = []
    for line in lines:
        if line.startswith(FIELD):
            fields.append(line[len(FIELD) :])
            continue
        for word, into in (("alias ", None), ("type ", types)):
            if line.startswith(word):
                name, _, rest = line[len(word) :].partition(" = ")
                if into is None:
                    aliases[name] = rest
                else:
                    into.add(name)
    return aliases, types, fields


def decode(text: str, known: Kinds | None = None) -> dict[str, Any]:
    """Read notation ``text`` back into the JSON Schema it stands for.

    ``known`` supplies the kinds written earlier (types and aliases this text uses by name
    without defining). Raises ``NotationError`` for text that is not the notation.
    """
    known = known or Kinds()
    lines = text.split("\n")
    alias_lines, local_types, field_lines = _definitions(lines)
    types = local_types | set(known.types)
    aliases: dict[str, Any] = dict(known.aliases)
    for name, body in alias_lines.items():  # an alias body never names another alias
        reader = _Reader(body, types, {})
        node, _, description, _ = _split_line(body, reader)
        aliases[name] = node if description is None else {**node, "description": description}
    fields: dict[str, Any] = dict(known.fields)
    for body in field_lines:  # a field's line names no other field
        name, (node, required) = _property_line(body, types, aliases, {})
        if not required:
            raise NotationError(f"expected a field without '?': {FIELD + body!r}")
        fields[name] = node
    defs: dict[str, Any] = {}
    at = 0

    def block(head: str, comment: str) -> dict[str, Any]:
        nonlocal at
        node: dict[str, Any] = {"type": "object", "additionalProperties": False}
        if comment:
            if not comment.startswith(" // "):
                raise NotationError(f"expected ' // ' after '{{' in line {at}: {head!r}")
            node["description"] = comment[4:]
        properties: dict[str, Any] = {}
        required: list[str] = []
        while True:
            if at >= len(lines):
                raise NotationError("expected '}' before the end of the text")
            line = lines[at]
            at += 1
            if line == "}":
                break
            name, prop = _property_line(line, types, aliases, fields)
            if name in properties:
                raise NotationError(f"property {name!r} twice in line {at}")
            properties[name] = prop[0]
            if prop[1]:
                required.append(name)
        node["properties"] = properties
        if required:
            node["required"] = required
        return node

    first = lines[0] if lines else ""
    if not first.startswith("{"):
        raise NotationError("expected the root object's '{' in line 1")
    at = 1
    root = block(first, first[1:])
    while at < len(lines):
        line = lines[at]
        at += 1
        if line.startswith(("alias ", FIELD)):
            continue
        if not line.startswith("type "):
            raise NotationError(f"expected 'type' or 'alias' in line {at}: {line!r}")
        name, sep, rest = line[5:].partition(" = ")
        if not sep or not _NAME.fullmatch(name):
            raise NotationError(f"expected 'type Name = …' in line {at}: {line!r}")
        if rest.startswith("{") and (rest == "{" or rest.startswith("{ // ")):
            defs[name] = block(line, rest[1:])
            continue
        reader = _Reader(rest, types, aliases)
        node, _, description, _ = _split_line(rest, reader)
        defs[name] = node if description is None else {**node, "description": description}
    every = {**known.types, **defs}
    reached = _reached(root, every)
    if reached:
        root["$defs"] = {name: every[name] for name in reached}
    return {"$schema": DRAFT, **root}


def _property_line(
    line: str, types: Iterable[str], aliases: Mapping[str, Any], fields: Mapping[str, Any]
) -> tuple[str, tuple[Any, bool]]:
    reader = _Reader(line, types, aliases)
    if line.startswith('"'):
        name = reader.string_literal()
    else:
        found = _NAME.match(line)
        if found is None:
            raise reader.fail("a property name")
        name = found.group()
        reader.at = found.end()
    required = not reader.take("?")
    if reader.at == len(line) and not line.startswith('"'):  # a field, written by name
        if name not in fields:
            raise reader.fail(f"a known field, not {name!r}")
        return name, (_copy(fields[name]), required)
    if not reader.take(": "):
        raise reader.fail("': '")
    node, default, description, has_default = _split_line(line, reader)
    if has_default:
        node = {**node, "default": default}
    if description is not None:
        node = {**node, "description": description}
    return name, (node, required)


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
