"""The artifact schemas a NextAction carries, in the compact form the server emits.

Every byte a tool returns lands in the host model's context, and a NextAction carries the JSON
Schema of the artifact to produce on every call. The server emits each type's schema once
compacted and cached: generated ``title`` annotations (a property's name again) are dropped,
and every sub-schema that occurs more than once is written once under ``$defs`` and referenced.
The result is still a standalone JSON Schema (draft 2020-12) that accepts exactly what the
registry's schema accepts; ``inline`` undoes the sharing (a refusal's failing parts, the tools'
input schemas).

Nor does a session need the same schema twice, or in JSON. In the ``once`` schema mode (the
default; ``docs/protocol.md`` §3.1, "Compact schemas over MCP"), a session's first schema of a
type is ``{"$ref": "telic://schemas/<type>", "x-telic-type": <text>}``, the text being the same
schema in Telic type notation (``telic.server._notation``) with each named kind it uses defined
unless the session already has it; any later one is ``schema_reference(type)``. ``SentSchemas``
remembers per MCP session which types and kinds it has sent, and ``SchemaEmitter`` chooses for
one result (a type its draft covers, or the ContextManifest, which the host never writes, is a
reference from the start). ``full`` sends every schema as compact JSON every time, as the
original does.
"""

from __future__ import annotations

import functools
import json
import threading
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from telic.protocol import IDENTIFIER_PATTERN
from telic.server._notation import (
    encode,
    expression_text,
    field_key,
    node_text,
    omit,
    property_texts,
)
from telic.server.inputs import tool_schemas

SchemaMode = Literal["full", "once"]
"""``once``: a session gets each type's schema once, in notation, then a reference; ``full``:
the JSON Schema every time."""
SCHEMA_MODES: Final[tuple[SchemaMode, ...]] = get_args(SchemaMode)
SCHEMA_TYPES: Final[tuple[str, ...]] = (
    "ContextManifest",
    *tool_schemas()["telic_submit_artifact"]["input"]["properties"]["artifact_type"]["enum"],
)
"""Every type a NextAction can name as an output: for grounding, the ContextManifest, then the
host's eleven, as ``telic_submit_artifact``'s committed input schema lists them (so that the
server starts without the protocol); a test checks it against the controller's phases."""
WRITTEN_BY_TELIC: Final = frozenset({"ContextManifest"})
# Named by the grounding action, but written by telic_ground_context: the host never needs its
# schema to act, so in ``once`` mode it is always a reference.
_HOST_TYPES: Final = tuple(kind for kind in SCHEMA_TYPES if kind not in WRITTEN_BY_TELIC)
SCHEMA_URI_TEMPLATE: Final = "telic://schemas/{artifact_type}"
"""The resource template that returns any host artifact type's full schema."""
SchemaFn = Callable[[str], dict[str, Any]]
"""Artifact type → the schema object a result carries for it."""
NOTATION_KEY: Final = "x-telic-type"
"""The key of a compact schema object that holds its Telic type notation text."""

# Keywords whose value maps names to sub-schemas (a "title" key there is a property name).
_SCHEMA_MAPS: Final = frozenset({"properties", "$defs", "definitions", "patternProperties"})
# Keywords whose value is data, not a schema: copied untouched.
_DATA: Final = frozenset({"enum", "const", "default", "examples", "required"})
# Sub-schemas shorter than this (compact JSON) are cheaper inline than as a reference.
_SHARE_AT: Final = 48
_REF_PREFIX: Final = "#/$defs/"


def _rebuilt(
    node: Any,
    replace: Callable[[dict[str, Any]], Any] = lambda _: None,
    *,
    untitled: bool = False,
    names: bool = False,
    top: bool = True,
) -> Any:
    """A copy of ``node`` in which ``replace(schema)`` stands for each schema object below
    ``node`` when it returns one (``None``: the schema is copied); ``untitled``: without
    ``title`` annotations. ``names``: ``node`` maps names to schemas."""
    if isinstance(node, list):
        return [_rebuilt(value, replace, untitled=untitled, top=False) for value in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {key: _rebuilt(v, replace, untitled=untitled, top=False) for key, v in node.items()}
    if not top and (replaced := replace(node)) is not None:
        return replaced
    return {
        key: value
        if key in _DATA
        else _rebuilt(value, replace, untitled=untitled, names=key in _SCHEMA_MAPS, top=False)
        for key, value in node.items()
        if not (untitled and key == "title")
    }


def _untitled(node: Any) -> Any:
    """``node`` without ``title`` annotations."""
    return _rebuilt(node, untitled=True)


def _subschemas(node: Any) -> list[dict[str, Any]]:
    """Every schema object below ``node`` (not ``node`` itself), in document order."""
    found: list[dict[str, Any]] = []
    _rebuilt(node, found.append)
    return found


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` without titles and with every repeated sub-schema shared once."""
    plain: dict[str, Any] = _untitled(schema)
    defs: dict[str, Any] = dict(plain.get("$defs") or {})
    counts = Counter(node_text(node) for node in _subschemas(plain) if "$ref" not in node)
    repeated = sorted(
        (text for text, n in counts.items() if n > 1 and len(text) >= _SHARE_AT),
        key=lambda text: (-len(text), text),
    )
    if not repeated:
        return plain
    known = {node_text(body): name for name, body in defs.items()}
    refs: dict[str, str] = {}
    for number, text in enumerate(repeated, 1):
        refs[text] = known.get(text) or f"Shared{number}"
    for text, name in refs.items():
        if name not in defs:
            defs[name] = json.loads(text)

    def as_ref(sub: dict[str, Any]) -> dict[str, str] | None:
        name = refs.get(node_text(sub))
        return None if name is None else {"$ref": _REF_PREFIX + name}

    shared_defs = {name: _rebuilt(body, as_ref) for name, body in defs.items()}
    body = {key: value for key, value in plain.items() if key != "$defs"}
    result: dict[str, Any] = _rebuilt(body, as_ref)
    result["$defs"] = shared_defs
    return result


def inline(schema: dict[str, Any]) -> Any:
    """Return ``schema`` with every local ``$ref`` replaced by its definition (no cycles)."""
    body = {key: value for key, value in schema.items() if key != "$defs"}
    return _resolved(body, schema.get("$defs") or {})


@functools.cache
def full_schema(artifact_type: str) -> dict[str, Any]:
    """The registry's JSON Schema of ``artifact_type`` without its generated titles (shared).

    What ``emitted_schema`` shares sub-schemas of, and what a notation text decodes to.
    """
    from telic.protocol import json_schema  # the protocol loads with the service, not at start

    untitled: dict[str, Any] = _untitled(json_schema(artifact_type))
    return with_rules(artifact_type, untitled)


def with_rules(artifact_type: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each controller rule's statement appended to the description it targets.

    The statements come from the rule registry (``telic.controller.field_statements``), so the
    type text and the JSON Schema state every value rule where a host model looks, and cannot
    drift from the rules. A location missing from the schema is a ``KeyError``: a test keeps the
    two in step. ``schema`` itself is left unchanged.
    """
    from telic.controller import field_statements

    schema = _rebuilt(schema)  # a copy, which the statements are added to
    for (kind, path), text in field_statements().items():
        if kind == artifact_type:
            owner, _, name = path.rpartition(".")
            holder = schema["$defs"][owner] if owner else schema
            node = holder["properties"][name] if path else schema
            node["description"] = _described(node.get("description"), text)
    return schema


def _described(description: object, text: str) -> str:
    return text if not isinstance(description, str) else f"{description} {text}"


@functools.cache
def emitted_schema(artifact_type: str) -> dict[str, Any]:
    """The compact JSON Schema of ``artifact_type`` a NextAction carries (built once; shared).

    Callers must not change it: the same object goes into every result that carries it.
    """
    return compact_schema(full_schema(artifact_type))


@functools.cache
def schema_text(artifact_type: str) -> str:
    """``emitted_schema(artifact_type)`` as compact JSON text (the schema resource's content)."""
    return json.dumps(emitted_schema(artifact_type), ensure_ascii=False, separators=(",", ":"))


FAILING_KEY: Final = "x-telic-failing"
"""The key of a refusal's schema object that maps each failing path to its sub-schema."""


def failing_schema(artifact_type: str, paths: list[str]) -> dict[str, Any]:
    """The part of ``artifact_type``'s schema that the failing ``paths`` (``a.0.b``) need.

    ``{"$ref": <resource>, "x-telic-failing": {path: sub-schema}}``: for each path, the schema
    of the deepest location the schema defines along it (the property itself, or the object
    that refused an unknown key), with its local references written out. A path at the root
    (or none at all) adds nothing: the ``$ref`` names the full schema, never re-sent. The
    sub-schemas are shared: callers must not change them.
    """
    found: dict[str, Any] = {}
    for path in paths:
        node, where = _inlined(artifact_type), []
        for part in filter(None, path.split(".")):
            inner = _step(node, part)
            if inner is None:
                break
            node = inner
            where.append("[]" if part.isdigit() else part)
        if where:
            # One entry per schema location: ``nodes.0.id`` and ``nodes.3.id`` share ``nodes[].id``.
            found[".".join(where).replace(".[]", "[]")] = node
    result: dict[str, Any] = {"$ref": schema_uri(artifact_type)}
    if found:
        result[FAILING_KEY] = found
    return result


@functools.cache
def _inlined(artifact_type: str) -> Any:
    return inline(emitted_schema(artifact_type))


def _step(node: Any, part: str) -> Any | None:
    """The sub-schema of ``node`` at ``part`` (a property, or an index), if it defines one."""
    if not isinstance(node, dict):
        return None
    for branch in node.get("anyOf") or node.get("oneOf") or ():
        found = _step(branch, part)
        if found is not None:
            return found
    properties = node.get("properties")
    if isinstance(properties, dict) and part in properties:
        return properties[part]
    if part.isdigit() and isinstance(node.get("items"), dict):
        return node["items"]
    return None


def _deref(node: Any, defs: dict[str, Any]) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        name = node["$ref"].removeprefix(_REF_PREFIX)
        if name not in defs:
            break
        node = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _resolved(node: Any, defs: dict[str, Any]) -> Any:
    node = _deref(node, defs)
    if isinstance(node, dict):
        return {key: _resolved(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolved(value, defs) for value in node]
    return node


def schema_uri(artifact_type: str) -> str:
    """The URI of the resource holding ``artifact_type``'s full schema."""
    return SCHEMA_URI_TEMPLATE.format(artifact_type=artifact_type)


@functools.cache
def schema_reference(artifact_type: str) -> dict[str, Any]:
    """The schema a result carries for a type whose schema this session already has.

    A valid JSON Schema (2020-12) whose ``$ref`` is the resource with the full schema. Shared:
    callers must not change it.
    """
    uri = schema_uri(artifact_type)
    if artifact_type in WRITTEN_BY_TELIC:
        return {"$ref": uri, "description": "Written by Telic, not by you."}
    return {"$ref": uri}


# Names for the constrained strings and enums the artifact schemas repeat, by what identifies
# them: a pattern's start, an enum's first value, or the length bounds of a plain string. A
# repeated sub-schema none of these names is written out wherever it occurs.
_ALIAS_NAMES: Final = (
    ("pattern", IDENTIFIER_PATTERN, "Id"),
    ("pattern", "^artifact://", "ArtifactRef"),
    ("pattern", "^(artifact|trace|repo)://", "Ref"),
    ("pattern", "^sha256:", "Sha256"),
    ("text", (1, 32768), "Text"),
    ("text", (1, 4096), "Summary"),
    ("enum", "repository.read", "Capability"),
    ("enum", "report_only", "Mode"),
    ("enum", "pass", "Verdict"),
    ("enum", "info", "Severity"),
    ("enum", "id", "ContractField"),
    ("enum", "objective", "CorrectableField"),
    ("enum", "observed", "Basis"),
)
# An alias is worth its definition once it saves this many bytes over a session's schemas.
_ALIAS_SAVES: Final = 64
_ANNOTATIONS: Final = frozenset({"description", "default"})


def _core(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key not in _ANNOTATIONS}


def _alias_name(node: dict[str, Any]) -> str | None:
    pattern, values = node.get("pattern"), node.get("enum")
    bounds = (node.get("minLength"), node.get("maxLength"))
    for key, mark, name in _ALIAS_NAMES:
        if key == "pattern" and isinstance(pattern, str) and pattern.startswith(str(mark)):
            return name
        if key == "enum" and isinstance(values, list) and values and values[0] == mark:
            return name
        if key == "text" and node.keys() == {"type", "minLength", "maxLength"} and bounds == mark:
            return name
    return None


@functools.cache
def notation_aliases() -> dict[str, Any]:
    """The aliases every notation text may use: name → the string sub-schema it stands for.

    Chosen over all the host's artifact schemas at once (so that one name means one thing in a
    session): each named string sub-schema (annotations aside) whose repetitions save more than
    ``_ALIAS_SAVES`` bytes. A name is used once, and never when a schema has a ``$defs`` entry
    of that name.
    """
    counts: Counter[str] = Counter()
    taken: set[str] = set()
    for artifact_type in _HOST_TYPES:
        schema = full_schema(artifact_type)
        taken |= set(schema.get("$defs") or {})
        for node in _subschemas(schema):
            core = _core(node)
            if core.get("type") == "string" and core.keys() > {"type"} and "const" not in core:
                counts[node_text(core)] += 1
    aliases: dict[str, Any] = {}
    for text, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        node = json.loads(text)
        written = expression_text(node)
        name = _alias_name(node)
        if name is None or name in taken:
            continue
        if count * (len(written) - len(name)) - len(written) - len(name) > _ALIAS_SAVES:
            aliases[name] = node
            taken.add(name)
    return aliases


# A field is worth its declaration once it saves this many bytes over the host's schemas.
_FIELD_SAVES: Final = 32


def _properties(schema: dict[str, Any], seen: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(name, schema)`` of every property of the root and of each object in ``$defs``.

    A ``$defs`` entry already ``seen`` (same name, same body) is left out: a session is sent it
    once, however many schemas use it.
    """
    found = list((schema.get("properties") or {}).items())
    for name, node in (schema.get("$defs") or {}).items():
        if (name in seen and seen[name] == node) or not isinstance(node, dict):
            continue
        seen[name] = node
        if isinstance(node.get("properties"), dict):
            found += node["properties"].items()
    return found


@functools.cache
def notation_fields() -> dict[str, Any]:
    """The fields every notation text may write by name: property name → its whole schema.

    Chosen over all the host's artifact schemas at once, as the aliases are: for each property
    name, the schema (description included, or none) it most often has (a ``$defs`` type
    counted once, as a session is sent it once), when writing those repetitions as the bare
    name saves more than ``_FIELD_SAVES`` bytes over a session's schemas: a description
    repeated verbatim travels once. A property of that name with any other schema is written
    out in full.
    """
    properties: list[tuple[str, dict[str, Any]]] = []
    seen: dict[str, Any] = {}
    for artifact_type in _HOST_TYPES:
        for name, node in _properties(full_schema(artifact_type), seen):
            if isinstance(node, dict):
                properties.append((name, node))
    # Only a name and description (or its absence) seen twice can be a field: the rest costs
    # no node_text.
    twice = Counter((name, node.get("description")) for name, node in properties)
    counts: dict[str, Counter[str]] = {}
    for name, node in properties:
        if twice[name, node.get("description")] > 1:
            counts.setdefault(name, Counter())[node_text(node)] += 1
    recurring: list[tuple[str, Any, int]] = []
    for name, bodies in sorted(counts.items()):
        text, count = min(bodies.items(), key=lambda item: (-item[1], item[0]))
        if count > 1:
            recurring.append((name, json.loads(text), count))
    lines = property_texts(((name, node) for name, node, _ in recurring), notation_aliases())
    fields: dict[str, Any] = {}
    for (name, node, count), line in zip(recurring, lines, strict=True):
        saved = (count - 1) * (len(line) - len(name)) - len("field ") - len(name) - 1
        if saved > _FIELD_SAVES:
            fields[name] = node
    return fields


@functools.cache
def _encoded(artifact_type: str) -> tuple[str, dict[str, str]] | None:
    """``artifact_type``'s whole notation text and the kinds it defines (name → body text).

    ``None`` when the schema has no notation. Built once per type; a session's text is this one
    without the definitions it already has (``omit``).
    """
    encoded = encode(full_schema(artifact_type), notation_aliases(), fields=notation_fields())
    if encoded is None:
        return None
    kinds = {name: node_text(node) for name, node in encoded.types.items()}
    kinds.update((name, node_text(node)) for name, node in encoded.aliases.items())
    kinds.update((field_key(name), node_text(node)) for name, node in encoded.fields.items())
    return encoded.text, kinds


def prepare_schemas(mode: SchemaMode) -> None:
    """Build every artifact type's schema as ``mode`` sends it, into the caches results read.

    In ``once`` mode the first result that carries a schema would otherwise build every type's
    full schema and the notation tables chosen over all of them (``notation_aliases``,
    ``notation_fields``): tens of milliseconds of CPU in a fresh process. The servers call this
    in a worker thread while their backend opens (``telic.server._backend.OpeningBackend``).
    One type at a time under ``_BUILDING``: a result that needs a schema meanwhile waits for
    the type in progress, then finds what it needs built or builds it, never both threads the
    same tables at once.
    """
    for artifact_type in SCHEMA_TYPES:
        with _BUILDING:
            if mode == "full":
                emitted_schema(artifact_type)
            elif artifact_type not in WRITTEN_BY_TELIC:
                _encoded(artifact_type)


_BUILDING: Final = threading.Lock()
"""Held while a schema is taken from (and so maybe built into) the caches: see
``prepare_schemas``."""


@functools.lru_cache(maxsize=256)
def _notation(artifact_type: str, omitted: frozenset[str]) -> dict[str, Any]:
    """The compact schema object of ``artifact_type`` for a reader that knows ``omitted``."""
    encoded = _encoded(artifact_type)
    if encoded is None:
        return emitted_schema(artifact_type)
    return {"$ref": schema_uri(artifact_type), NOTATION_KEY: omit(encoded[0], omitted)}


def _compact(artifact_type: str, known: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The compact object for a reader that holds ``known``, and the kinds it defines."""
    encoded = _encoded(artifact_type)
    if encoded is None:
        return emitted_schema(artifact_type), {}
    kinds = encoded[1]
    omitted = frozenset(name for name, body in kinds.items() if known.get(name) == body)
    defined = {name: body for name, body in kinds.items() if name not in omitted}
    return _notation(artifact_type, omitted), defined


@dataclass(slots=True)
class _Memory:
    """What one session has been sent: artifact types, and notation kinds with their bodies."""

    types: set[str] = field(default_factory=set)
    kinds: dict[str, str] = field(default_factory=dict)
    held: tuple[str, frozenset[str]] = ("", frozenset())
    """The NextAction id of the last result that carried a draft, and the types it covers."""


class SchemaEmitter:
    """The schemas of one result: compact for types its session has not had yet, else references.

    Call it for each type the result carries, then ``commit()`` once the result is built, so
    that a result that never went out marks nothing as sent. Within one result a type's first
    schema is compact, any repeat is a reference, and a kind one schema defines is not defined
    again by the next (which the host reads after it). A type in ``drafted`` (one the result's
    draft covers: its fill lines and items say what the model writes) is a bare reference and
    is not marked as sent, so a later result without a draft for it still sends its text;
    except a type in ``kept`` (what an ``instead`` draft writes: the alternative the session
    keeps in view from then on), which ``commit()`` marks as sent.
    """

    __slots__ = ("_drafted", "_fresh", "_kept", "_kinds", "_sent")

    def __init__(
        self,
        sent: _Memory | None,
        drafted: frozenset[str] = frozenset(),
        kept: frozenset[str] = frozenset(),
    ) -> None:
        self._sent = sent
        self._drafted = drafted
        self._kept = kept & drafted
        self._fresh: set[str] = set()
        self._kinds: dict[str, str] = {}

    def __call__(self, artifact_type: str) -> dict[str, Any]:
        """The schema object to carry for ``artifact_type``."""
        with _BUILDING:
            if self._sent is None or artifact_type not in SCHEMA_TYPES:
                return emitted_schema(artifact_type)
            if (
                artifact_type in WRITTEN_BY_TELIC
                or artifact_type in self._drafted
                or artifact_type in self._sent.types
                or artifact_type in self._fresh
            ):
                return schema_reference(artifact_type)
            self._fresh.add(artifact_type)
            known = {**self._sent.kinds, **self._kinds} if self._kinds else self._sent.kinds
            schema, defined = _compact(artifact_type, known)
            self._kinds.update(defined)
            return schema

    def commit(self) -> None:
        """Record the types and kinds sent by this result as known to its session."""
        if self._sent is not None:
            self._sent.types |= self._fresh | self._kept
            self._sent.kinds.update(self._kinds)
            self._fresh = set()
            self._kinds = {}


class SentSchemas:
    """Which artifact types' schemas (and notation kinds) each MCP session has received.

    A session is identified by an object that lives exactly as long as it; the server keys it
    by identity and forgets it when the object goes (a closed session's memory goes with it). A
    result for no known session, or any result in ``full`` mode, carries every schema in full.
    Each session's memory holds at most one entry per artifact type and per kind.
    """

    __slots__ = ("_by_session", "mode")

    def __init__(self, mode: SchemaMode = "once") -> None:
        self.mode: SchemaMode = mode
        self._by_session: dict[int, _Memory] = {}

    def emitter(
        self, session: object | None, action: object = None, draft: object = None
    ) -> SchemaEmitter:
        """Return the emitter for one result sent in ``session`` (``None``: no session), whose
        NextAction is ``action`` and draft ``draft``.

        In ``once`` mode the types the draft covers are bare references (``SchemaEmitter``), and
        those it offers ``instead`` count as sent once the result has gone. A step Telic takes
        itself (grounding writes the manifest) covers every type: the host writes nothing now,
        and the next result's draft carries what it will write. A result without a draft for
        the same NextAction as the session's last draft (an acknowledged Evidence) withholds
        that draft's types too: the host still holds it. ``full`` mode and results outside a
        session carry every schema in full.
        """
        if self.mode == "full" or session is None:
            return SchemaEmitter(None)
        key = id(session)
        sent = self._by_session.get(key)
        if sent is None:
            try:
                weakref.finalize(session, self._by_session.pop, key, None)
            except TypeError:  # not weakly referenceable: nothing tells when it ends
                return SchemaEmitter(None)
            sent = self._by_session[key] = _Memory()
        covered: frozenset[str] = getattr(draft, "covered", frozenset())
        if not covered and getattr(action, "required_output_type", None) in WRITTEN_BY_TELIC:
            covered = frozenset(SCHEMA_TYPES)
        action_id: str = getattr(action, "id", "")
        if covered:
            sent.held = (action_id, covered)
        elif action_id and sent.held[0] == action_id:
            covered = sent.held[1]
        kept = frozenset(instead.type for instead in getattr(draft, "instead", ()))
        return SchemaEmitter(sent, covered, kept)

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
    # Imported here, not at the top: the CLI's read-only commands import this module (through
    # the server configuration) and must not load the MCP SDK.
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    if getattr(context, "protocol_version", None) not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    session = getattr(context, "session", None)
    params: object | None = getattr(session, "client_params", None)
    return params
