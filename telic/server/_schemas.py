"""The artifact schemas a NextAction carries, in the compact form the server emits.

Every byte a tool returns lands in the host model's context, and a NextAction carries the JSON
Schema of the artifact to produce on every call. The server emits each type's schema once
compacted and cached: generated ``title`` annotations (a property's name again) are dropped,
and every sub-schema that occurs more than once is written once under ``$defs`` and referenced.
The result is still a standalone JSON Schema (draft 2020-12) that accepts exactly what the
registry's schema accepts; ``inline`` undoes the sharing, for tests and curious readers.

Nor does a session need the same schema twice. With the ``once`` schema mode (the default),
``SentSchemas`` remembers per MCP session which types it has already sent in full; later
results carry ``schema_reference(type)`` instead, a two-key schema pointing at the resource
``telic://schemas/<type>``, which always returns the full schema. The ContextManifest, which
grounding writes and the host never does, is a reference from the start. ``full`` sends every
schema in full every time.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Any, Final, Literal, get_args

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

__all__ = [
    "SCHEMA_MODES",
    "SCHEMA_TYPES",
    "SCHEMA_URI_TEMPLATE",
    "SchemaEmitter",
    "SchemaFn",
    "SchemaMode",
    "SentSchemas",
    "Stream",
    "compact_schema",
    "emitted_schema",
    "inline",
    "parse_schema_mode",
    "schema_reference",
    "schema_text",
    "schema_uri",
    "session_of",
]

SchemaMode = Literal["full", "once"]
"""``once``: a session gets each type's schema in full once, then a reference; ``full``: always."""
SCHEMA_MODES: Final[tuple[SchemaMode, ...]] = get_args(SchemaMode)
SCHEMA_TYPES: Final = (
    "ContextManifest",
    "ClarificationRequest",
    "ProblemFrame",
    "ScenarioSpec",
    "TaskContract",
    "PromptReview",
    "WorkPlan",
    "WorkResult",
    "QualityReview",
    "ReleaseAudit",
    "UserReport",
    "Evidence",
)
"""Every type a NextAction can name as an output: the host's eleven and, for grounding, the
ContextManifest. Spelled out so that the server starts without the protocol; a test checks it
against the controller's phases."""
_BY_TELIC: Final = frozenset({"ContextManifest"})
# Named by the grounding action, but written by telic_ground_context: the host never needs its
# schema to act, so in ``once`` mode it is always a reference.
SCHEMA_URI_TEMPLATE: Final = "telic://schemas/{artifact_type}"
"""The resource template that returns any host artifact type's full schema."""
SchemaFn = Callable[[str], dict[str, Any]]
"""Artifact type → the schema object a result carries for it."""

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


@functools.cache
def schema_text(artifact_type: str) -> str:
    """``emitted_schema(artifact_type)`` as compact JSON text (the schema resource's content)."""
    return json.dumps(emitted_schema(artifact_type), ensure_ascii=False, separators=(",", ":"))


def parse_schema_mode(text: str) -> SchemaMode:
    """Return the schema mode spelled ``text`` (``full`` or ``once``). Raises ``ValueError``."""
    for mode in SCHEMA_MODES:
        if text == mode:
            return mode
    raise ValueError(f"the schema mode is 'full' or 'once', not {text!r}")


def schema_uri(artifact_type: str) -> str:
    """The URI of the resource holding ``artifact_type``'s full schema."""
    return SCHEMA_URI_TEMPLATE.format(artifact_type=artifact_type)


@functools.cache
def schema_reference(artifact_type: str) -> dict[str, Any]:
    """The schema a result carries for a type whose full schema this session already has.

    A valid JSON Schema (2020-12) whose ``$ref`` is the resource with the full schema. Shared:
    callers must not change it.
    """
    uri = schema_uri(artifact_type)
    if artifact_type in _BY_TELIC:
        said = f"Written by Telic, not by you; its schema is the resource {uri}."
    else:
        said = f"Sent in full earlier in this session; read the resource {uri}."
    return {"$ref": uri, "description": said}


class SchemaEmitter:
    """The schemas of one result: full for types its session has not had yet, else references.

    Call it for each type the result carries, then ``commit()`` once the result is built, so
    that a result that never went out marks nothing as sent. Within one result a type's first
    schema is full and any repeat is a reference.
    """

    __slots__ = ("_fresh", "_sent")

    def __init__(self, sent: set[str] | None) -> None:
        self._sent = sent
        self._fresh: set[str] = set()

    def __call__(self, artifact_type: str) -> dict[str, Any]:
        """The schema object to carry for ``artifact_type``."""
        if self._sent is None or artifact_type not in SCHEMA_TYPES:
            return emitted_schema(artifact_type)
        if (
            artifact_type in _BY_TELIC
            or artifact_type in self._sent
            or artifact_type in self._fresh
        ):
            return schema_reference(artifact_type)
        self._fresh.add(artifact_type)
        return emitted_schema(artifact_type)

    def commit(self) -> None:
        """Record the types sent in full by this result as known to its session."""
        if self._sent is not None:
            self._sent |= self._fresh
            self._fresh = set()


class SentSchemas:
    """Which artifact types' schemas each MCP session has received in full.

    A session is identified by an object that lives exactly as long as it; the server keys it
    by identity and forgets it when the object goes (a closed session's memory goes with it). A
    result for no known session, or any result in ``full`` mode, carries every schema in full.
    Each session's memory holds at most one entry per artifact type.
    """

    __slots__ = ("_by_session", "mode")

    def __init__(self, mode: SchemaMode = "once") -> None:
        self.mode: SchemaMode = mode
        self._by_session: dict[int, set[str]] = {}

    def emitter(self, session: object | None) -> SchemaEmitter:
        """Return the emitter for one result sent in ``session`` (``None``: no session)."""
        if self.mode == "full" or session is None:
            return SchemaEmitter(None)
        key = id(session)
        sent = self._by_session.get(key)
        if sent is None:
            try:
                weakref.finalize(session, self._by_session.pop, key, None)
            except TypeError:  # not weakly referenceable: nothing tells when it ends
                return SchemaEmitter(None)
            sent = self._by_session[key] = set()
        return SchemaEmitter(sent)

    def sessions(self) -> int:
        """How many live sessions have been sent a schema (for tests and diagnostics)."""
        return len(self._by_session)


class Stream:
    """One connection that ``Server.run`` serves: a stdio stream, or a client in process.

    The server's lifespan makes one per run and the SDK hands it to every handler of that run as
    ``context.lifespan_context``: it lives exactly as long as the connection.
    """

    __slots__ = ("__weakref__",)


def session_of(context: object) -> object | None:
    """An object that lives exactly as long as the MCP session of a request's ``context``.

    Over stdio (or in process) that is the connection itself, whatever the protocol era: one
    stream is one client. Over streamable HTTP it is the client's ``initialize`` parameters,
    which the SDK keeps once per ``Mcp-Session-Id`` in the handshake era and hands every handler
    as ``context.session.client_params``; an HTTP request of the 2026-07-28 era stands alone, and
    its results carry every schema in full, as do requests outside any session.
    """
    if getattr(context, "request", None) is None:
        stream = getattr(context, "lifespan_context", None)
        return stream if isinstance(stream, Stream) else None
    if getattr(context, "protocol_version", None) not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    session = getattr(context, "session", None)
    params: object | None = getattr(session, "client_params", None)
    return params
