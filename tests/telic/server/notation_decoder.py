"""The reader of Telic type notation: ``decode(text, known)`` gives back the JSON Schema.

The server only writes the notation (``telic.server._notation.encode``); hosts read it. This
reader lives with the tests, which prove with it that every text the encoder writes decodes to
exactly the schema it was written from (``test_notation.py``, ``test_schemas.py``). Its grammar
is the one ``docs/protocol.md`` §3.1 states.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from telic.server._notation import (
    _BARE,
    _FORMAT,
    _NAME,
    _NOT_BARE,
    _REF,
    _WORDS,
    DRAFT,
    FIELD,
    _reached,
)
from telic.server._schemas import _compact

__all__ = ["Kinds", "NotationError", "compact_object", "decode"]


def compact_object(artifact_type: str, known: dict[str, str] | None = None) -> dict[str, Any]:
    """The schema object a ``once`` session gets the first time it needs ``artifact_type``.

    ``{"$ref": <resource>, "x-telic-type": <notation>}``, whose text leaves out the kinds
    ``known`` already holds with the same body; the JSON Schema itself when the schema has no
    notation. Shared: callers must not change it.
    """
    return _compact(artifact_type, known or {})[0]


_NUMBER: Final = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_DECODER: Final = json.JSONDecoder()


def _copy(node: Any) -> Any:
    """A copy of a JSON value (an alias's expansion must not share its table's objects)."""
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


class NotationError(ValueError):
    """Text that is not Telic type notation; the message names what was expected, and where."""


@dataclass(frozen=True)
class Kinds:
    """Named kinds a reader already holds: ``$defs`` types and aliases, by name."""

    types: Mapping[str, Any] = field(default_factory=dict)
    aliases: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, Any] = field(default_factory=dict)


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
