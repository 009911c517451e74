"""The artifact schemas a NextAction carries, in the compact form the server emits.

Every byte a tool returns lands in the host model's context, and a NextAction carries the JSON
Schema of the artifact to produce on every call. The server emits each type's schema once
compacted and cached: generated ``title`` annotations (a property's name again) are dropped,
and every sub-schema that occurs more than once is written once under ``$defs`` and referenced.
The result is still a standalone JSON Schema (draft 2020-12) that accepts exactly what the
registry's schema accepts; ``inline`` undoes the sharing, for tests and curious readers.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any, Final

__all__ = ["compact_schema", "emitted_schema", "inline"]

# Keywords whose value maps names to sub-schemas (a "title" key there is a property name).
_SCHEMA_MAPS: Final = frozenset({"properties", "$defs", "definitions", "patternProperties"})
# Keywords whose value is data, not a schema: copied untouched.
_DATA: Final = frozenset({"enum", "const", "default", "examples", "required"})
# Sub-schemas shorter than this (compact JSON) are cheaper inline than as a reference.
_SHARE_AT: Final = 48
_REF_PREFIX: Final = "#/$defs/"


def _text(node: object) -> str:
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _untitled(node: Any, *, names: bool = False) -> Any:
    """``node`` without ``title`` annotations (``names``: ``node`` maps names to schemas)."""
    if isinstance(node, dict):
        if names:
            return {key: _untitled(value) for key, value in node.items()}
        return {
            key: value if key in _DATA else _untitled(value, names=key in _SCHEMA_MAPS)
            for key, value in node.items()
            if key != "title"
        }
    if isinstance(node, list):
        return [_untitled(value) for value in node]
    return node


def _subschemas(node: Any, *, names: bool = False) -> list[dict[str, Any]]:
    """Every schema object below ``node`` (not ``node`` itself), in document order."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if names:
                if isinstance(value, dict):
                    found.append(value)
                found += _subschemas(value)
            elif key not in _DATA:
                inner = _subschemas(value, names=key in _SCHEMA_MAPS)
                if isinstance(value, dict) and key not in _SCHEMA_MAPS:
                    found.append(value)
                found += inner
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, dict):
                found.append(value)
            found += _subschemas(value)
    return found


def _shared(node: Any, refs: dict[str, str], *, names: bool = False, top: bool = False) -> Any:
    """``node`` with every sub-schema named in ``refs`` replaced by its ``$ref``."""
    if isinstance(node, dict):
        if not top and not names:
            name = refs.get(_text(node))
            if name is not None:
                return {"$ref": _REF_PREFIX + name}
        if names:
            return {key: _shared(value, refs) for key, value in node.items()}
        return {
            key: value if key in _DATA else _shared(value, refs, names=key in _SCHEMA_MAPS)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_shared(value, refs) for value in node]
    return node


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` without titles and with every repeated sub-schema shared once."""
    plain: dict[str, Any] = _untitled(schema)
    defs: dict[str, Any] = dict(plain.get("$defs") or {})
    counts = Counter(_text(node) for node in _subschemas(plain) if "$ref" not in node)
    repeated = sorted(
        (text for text, n in counts.items() if n > 1 and len(text) >= _SHARE_AT),
        key=lambda text: (-len(text), text),
    )
    if not repeated:
        return plain
    known = {_text(body): name for name, body in defs.items()}
    refs: dict[str, str] = {}
    for number, text in enumerate(repeated, 1):
        refs[text] = known.get(text) or f"Shared{number}"
    for text, name in refs.items():
        if name not in defs:
            defs[name] = json.loads(text)
    shared_defs = {name: _shared(body, refs, top=True) for name, body in defs.items()}
    body = {key: value for key, value in plain.items() if key != "$defs"}
    result: dict[str, Any] = _shared(body, refs, top=True)
    result["$defs"] = shared_defs
    return result


def inline(schema: dict[str, Any]) -> Any:
    """Return ``schema`` with every local ``$ref`` replaced by its definition (no cycles)."""
    defs = schema.get("$defs") or {}

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF_PREFIX) and len(node) == 1:
                return resolve(defs[ref.removeprefix(_REF_PREFIX)])
            return {key: resolve(value) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [resolve(value) for value in node]
        return node

    return resolve(schema)


@functools.cache
def emitted_schema(artifact_type: str) -> dict[str, Any]:
    """The compact JSON Schema of ``artifact_type`` a NextAction carries (built once; shared).

    Callers must not change it: the same object goes into every result that carries it.
    """
    from telic.protocol import json_schema  # the protocol loads with the service, not at start

    return compact_schema(json_schema(artifact_type))
