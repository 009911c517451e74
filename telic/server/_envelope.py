"""The result envelopes of every tool, and the JSON form of the records a tool returns.

Success is ``{ok: true, …payload}``; failure is ``{ok: false, error, code, issues?, rules?}``
with ``isError``. Both travel twice, as the reference requires: as the compact JSON text of the
one content block and as ``structuredContent``. Error text is squashed to one line of at most
800 characters, and at most 32 issues of ``{path, code, message ≤400}`` are kept. A NextAction's
schemas are whatever the call's ``SchemaFn`` gives for each type (by default the full compact
schema). An artifact refused for its structure carries, as ``requiredOutputSchema``, only the
sub-schemas of the paths that failed (``with_schema``); a semantic refusal carries none.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast, get_args

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core.core_schema import ErrorType

from telic._errors import (
    MAX_ISSUE_MESSAGE_CHARS,
    MAX_ISSUES,
    TelicError,
    issues_to_wire,
    squash,
)
from telic.server._schemas import SchemaFn, emitted_schema, failing_schema
from telic_packets import PacketModel, PacketRefusal

if TYPE_CHECKING:
    from telic.protocol import PhaseAction


logger = logging.getLogger("telic.server")

INTERNAL_ERROR: Final = "internal_error"
INVALID_ARGUMENTS: Final = "invalid_arguments"
# Fields of ledger records that describe storage, not the protocol object; never on the wire.
_HIDDEN_FIELDS: Final = frozenset({"controller_state", "quota_key"})
# A NextAction's schemas are the registry's schemas of its types: emitted compact and cached.
_ACTION_SCHEMAS: Final = frozenset({"required_output_schema", "additional_output_schemas"})

ToolResult = dict[str, Any]
"""A ``tools/call`` result in the wire form of the SDK's ``CallToolResult`` dump.

The SDK validates a handler's result against the protocol version's ``CallToolResult`` and
dumps it on the way out whatever the handler returns; a model built here would be validated and
dumped twice more for nothing (about 50 µs for a 4 KB envelope). ``tests/telic/server`` checks
that the wire is byte for byte the model's.
"""


def _tool_result(envelope: Mapping[str, Any], is_error: bool) -> ToolResult:
    """``CallToolResult(content=[text], structured_content=envelope, is_error=…)``, dumped."""
    return {
        "content": [{"type": "text", "text": _dumps(envelope)}],
        "structuredContent": dict(envelope),
        "isError": is_error,
        "resultType": "complete",
    }


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""Types whose values are already JSON (exact types only: a subclass takes the long way)."""


_RECORD_FIELDS: Final[dict[type, tuple[tuple[str, str], ...]]] = {}


def _record_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field name, camelCase name)`` of a dataclass record's wire fields, in field order."""
    fields = _RECORD_FIELDS.get(cls)
    if fields is None:
        fields = _RECORD_FIELDS[cls] = tuple(
            (f.name, to_camel(f.name))
            for f in dataclasses.fields(cls)
            if f.name not in _HIDDEN_FIELDS
        )
    return fields


def to_wire(value: object, schema: SchemaFn = emitted_schema) -> Any:
    """Return the JSON-ready camelCase form of a record, model or plain value.

    Pydantic models dump by alias (the protocol's camelCase); objects with their own
    ``to_wire`` use it; dataclass records get their field
    names camelCased, without the ledger's storage-only fields; mappings and sequences recurse.
    A phase NextAction carries ``schema(type)`` for each of its output types.
    """
    from telic.protocol import PhaseAction  # the protocol loads with the service, not at start

    return _wire(value, PhaseAction, schema)


def _wire(value: object, phase_action: type[PhaseAction], schema: SchemaFn) -> Any:
    # Every step's response goes through here: the common exact types come first, so a record
    # costs a field-list lookup and its scalars nothing, while everything else takes the
    # general branches below in their original order.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [
            v if type(v) in _SCALARS else _wire(v, phase_action, schema)
            for v in cast("Sequence[object]", value)
        ]
    if kind is dict:
        return {
            str(k): v if type(v) in _SCALARS else _wire(v, phase_action, schema)
            for k, v in cast("Mapping[object, object]", value).items()
        }
    if isinstance(value, phase_action):
        return _phase_action(value, schema)
    if isinstance(value, PacketModel):
        # The packet contract's own form: absent optional fields are omitted, as what
        # ``packetSha256`` hashes omits them (a null added here would break the digest).
        return value.to_wire()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    own = getattr(value, "to_wire", None)
    if callable(own) and not isinstance(value, type):
        return _wire(own(), phase_action, schema)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        wire: dict[str, Any] = {}
        for name, camel in _record_fields(kind):
            field = getattr(value, name)
            wire[camel] = field if type(field) in _SCALARS else _wire(field, phase_action, schema)
        return wire
    if isinstance(value, Mapping):
        return {str(k): _wire(v, phase_action, schema) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_wire(v, phase_action, schema) for v in value]
    return value


def _phase_action(action: PhaseAction, schema: SchemaFn) -> dict[str, Any]:
    """A phase NextAction with the schema object ``schema`` gives for each of its output types.

    The protocol defines ``requiredOutputSchema`` as the JSON Schema of ``requiredOutputType``
    (and likewise each ``additionalOutputSchemas`` entry), so the server emits its own compact
    copy of each type's schema (or a reference to it) instead of re-serialising the action's.
    """
    wire: dict[str, Any] = {}
    dumped = action.model_dump(mode="json", by_alias=True, exclude=set(_ACTION_SCHEMAS))
    for key, value in dumped.items():
        wire[key] = value
        if key == "requiredOutputType":
            wire["requiredOutputSchema"] = schema(action.required_output_type)
            wire["additionalOutputSchemas"] = {
                kind: schema(kind) for kind in action.additional_output_schemas
            }
    return wire


def _dumps(envelope: Mapping[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def success(payload: Mapping[str, Any], schema: SchemaFn = emitted_schema) -> ToolResult:
    """Return ``{ok: true, …payload}`` as compact JSON text plus structured content.

    A NextAction in ``payload`` carries ``schema(type)`` for each of its output types. A phase
    NextAction is followed by ``boundary`` (``with_boundary``).
    """
    envelope: dict[str, Any] = {"ok": True}
    for key, value in payload.items():
        envelope[key] = to_wire(value, schema)
        if key == "nextAction":
            envelope.update(with_boundary(value))
    return _tool_result(envelope, is_error=False)


def with_boundary(action: object) -> dict[str, Any]:
    """``{"boundary": {capability: what it covers}}`` for a phase NextAction, else nothing.

    Beside the NextAction, not in it: the NextAction keeps Telic 1.0's schema. One line per
    capability of the phase's ``effectivePermissions`` whose reach its scope does not say
    (``telic.permissions.boundary``); no key when there is none.
    """
    permissions = getattr(action, "effective_permissions", None)
    if getattr(action, "kind", None) != "phase" or permissions is None:
        return {}
    from telic.permissions import boundary  # the permissions load with the service

    lines = boundary(permissions)
    return {"boundary": lines} if lines else {}


def _issue(path: str, code: str, message: str) -> dict[str, str]:
    return {
        "path": squash(path, 1024),
        "code": squash(code, 128),
        "message": squash(message, MAX_ISSUE_MESSAGE_CHARS),
    }


def _validation_issues(exc: ValidationError) -> list[dict[str, str]]:
    return [
        _issue(".".join(str(part) for part in err["loc"]), err["type"], err["msg"])
        for err in exc.errors(include_url=False, include_input=False)[:MAX_ISSUES]
    ]


def failure(
    message: str,
    code: str,
    *,
    issues: Sequence[Mapping[str, Any]] = (),
    rules: Sequence[str] = (),
) -> dict[str, Any]:
    """Return an error envelope ``{ok: false, error, code, issues?, rules?}``.

    An issue keeps its ``rule`` and its ``expected`` (already bounded by ``Issue.to_wire``)."""
    envelope: dict[str, Any] = {"ok": False, "error": squash(message), "code": code}
    if issues:
        envelope["issues"] = [
            _issue(str(i.get("path", "")), str(i.get("code", "custom")), str(i.get("message", "")))
            | {key: i[key] for key in ("rule", "expected") if key in i}
            for i in list(issues)[:MAX_ISSUES]
        ]
    if rules:
        envelope["rules"] = list(dict.fromkeys(rules))
    return envelope


def error_envelope(exc: Exception, tool: str) -> dict[str, Any]:
    """Map an exception raised under a tool to its error envelope.

    Telic's own errors keep their message, code, issues and rule ids; packet-contract refusals
    keep their refusal code; argument validation lists each bad field; anything else is an
    internal error whose details stay in the server's log.
    """
    if isinstance(exc, TelicError):
        return failure(exc.message, exc.code, issues=issues_to_wire(exc.issues), rules=exc.rules)
    if isinstance(exc, ValidationError):
        return failure(
            f"Invalid arguments for {tool}", INVALID_ARGUMENTS, issues=_validation_issues(exc)
        )
    if isinstance(exc, PacketRefusal):
        return failure(str(exc), exc.code)
    logger.error("%s failed unexpectedly", tool, exc_info=exc)
    return failure(f"Internal error in {tool}; see the server log", INTERNAL_ERROR)


def with_schema(envelope: Mapping[str, Any], artifact_type: str) -> dict[str, Any]:
    """Return ``envelope`` with the schema its structural issues need, if any.

    A structural issue is one pydantic's own checks raised (a missing key, a wrong type, an
    unknown key, a bound): its code is one of pydantic-core's error types. For those paths the
    envelope carries ``failing_schema``: the failing sub-schemas and a reference to the full
    one. A refusal with only semantic issues (a model rule such as
    ``pass_without_full_coverage``, a controller rule, an unparsable body) carries none: the
    schema does not state what failed, and the issue does.
    """
    paths = [
        str(issue.get("path", ""))
        for issue in envelope.get("issues") or ()
        if issue.get("code") in _STRUCTURAL
    ]
    if not paths:
        return dict(envelope)
    return {**envelope, "requiredOutputSchema": failing_schema(artifact_type, paths)}


_STRUCTURAL: Final = frozenset(get_args(ErrorType))


def error_result(envelope: Mapping[str, Any]) -> ToolResult:
    """Return an error envelope as an ``isError`` tool result."""
    return _tool_result(envelope, is_error=True)
