"""Artifact type → schema: strict parsing and the JSON Schema a host receives.

A ``SchemaViolation`` from here never quotes the offending value, nor an object key the schemas
do not define: such a key (an unknown field, or a secret used as a key) stands in an issue path
as ``(key)``.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from telic._errors import Issue, SchemaViolation
from telic.protocol._audit import ReceiptAudit, ReleaseAudit
from telic.protocol._canonical import CanonicalJsonError, canonical_json
from telic.protocol._clarification import ClarificationRequest
from telic.protocol._context import ContextDocument, ContextManifest
from telic.protocol._contract import TaskContract
from telic.protocol._evidence import Evidence
from telic.protocol._frame import ProblemFrame, ScenarioSpec
from telic.protocol._next_action import NextAction
from telic.protocol._plan import WorkPlan
from telic.protocol._quality import QualityReview
from telic.protocol._report import UserReport
from telic.protocol._result import WorkResult
from telic.protocol._review import PromptReview
from telic.protocol._run import RunEnvelope, UserMessage
from telic.protocol._trace import TraceEvent
from telic.protocol._types import MAX_ARTIFACT_BYTES
from telic_packets import Cast, CastTypeRegistry, Packet

ARTIFACT_MODELS: Final[dict[str, Any]] = {
    "RunEnvelope": RunEnvelope,
    "ContextManifest": ContextManifest,
    "NextAction": NextAction,
    "ClarificationRequest": ClarificationRequest,
    "ProblemFrame": ProblemFrame,
    "ScenarioSpec": ScenarioSpec,
    "TaskContract": TaskContract,
    "PromptReview": PromptReview,
    "WorkPlan": WorkPlan,
    "WorkResult": WorkResult,
    "QualityReview": QualityReview,
    "ReleaseAudit": ReleaseAudit,
    "UserReport": UserReport,
    "TraceEvent": TraceEvent,
    "Evidence": Evidence,
    "ReceiptAudit": ReceiptAudit,
    "UserMessage": UserMessage,
    "ContextDocument": ContextDocument,
    "EvidencePacket": Packet,
    "CastRecord": Cast,
    "CastPolicy": CastTypeRegistry,
}
"""Every schema by artifact type: the 16 protocol types and the 5 internal ones."""

MAX_ISSUE_PATH: Final = 200
UNKNOWN_KEY: Final = "(key)"
"""How an issue path shows an object key that no schema defines: where, never what."""
# Messages that would quote the submitted value; each is replaced by one that does not.
_QUOTING: Final = {
    "union_tag_invalid": "The discriminator value is not one of the expected tags",
}


@functools.cache
def _adapter(artifact_type: str) -> TypeAdapter[Any]:
    try:
        model = ARTIFACT_MODELS[artifact_type]
    except KeyError:
        raise SchemaViolation(
            f"Unknown artifact type {artifact_type[:64]!r}",
            issues=(Issue("artifactType", "unknown_artifact_type", "Unknown artifact type"),),
        ) from None
    return TypeAdapter(model)


def parse_artifact(artifact_type: str, body: object) -> Any:
    """Validate a decoded JSON body as ``artifact_type`` by its wire names.

    Raises:
        SchemaViolation: the type is unknown, the body is over 2 MiB of canonical JSON, or it
            breaks a schema rule; ``issues`` lists at most 32 problems.
    """
    adapter = _adapter(artifact_type)
    try:
        size = len(canonical_json(body))
    except CanonicalJsonError as exc:
        raise SchemaViolation(
            f"{artifact_type} body is not canonical JSON: {exc}",
            issues=(Issue("", "not_json", str(exc)),),
        ) from None
    if size > MAX_ARTIFACT_BYTES:
        raise SchemaViolation(
            f"{artifact_type} body is {size} bytes of canonical JSON; the limit is "
            f"{MAX_ARTIFACT_BYTES}",
            issues=(Issue("", "artifact_too_large", "Artifact exceeds 2,097,152 bytes"),),
        )
    try:
        return adapter.validate_python(body, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise schema_violation(artifact_type, exc) from None


def issue_path(parts: tuple[int | str, ...] | list[int | str]) -> str:
    """Dot-join a location, showing every key no schema defines as ``(key)``."""
    known = wire_names()
    shown = (str(part) if isinstance(part, int) or part in known else UNKNOWN_KEY for part in parts)
    return ".".join(shown)[:MAX_ISSUE_PATH]


def schema_violation(what: str, exc: ValidationError) -> SchemaViolation:
    """Turn pydantic's errors into a SchemaViolation without echoing any input value or key."""
    issues = tuple(
        Issue(
            path=issue_path(error["loc"]),
            code=error["type"],
            message=_QUOTING.get(error["type"], error["msg"]),
        )
        for error in exc.errors(include_url=False, include_input=False, include_context=False)
    )
    first = issues[0] if issues else Issue("", "invalid", "invalid")
    where = f" at {first.path}" if first.path else ""
    return SchemaViolation(
        f"{what} failed schema validation ({len(issues)} issue(s)); first{where}: {first.message}",
        issues=issues,
    )


@functools.cache
def wire_names() -> frozenset[str]:
    """Return every object key some artifact schema defines (its wire field names)."""
    names: set[str] = set()

    def collect(node: object) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            for child in node.values():
                collect(child)
        elif isinstance(node, list):
            for child in node:
                collect(child)

    for artifact_type in ARTIFACT_MODELS:
        collect(shared_json_schema(artifact_type))
    return frozenset(names)


def json_schema(artifact_type: str) -> dict[str, Any]:
    """Return (a fresh copy of) the JSON Schema of ``artifact_type``, with shared ``$defs``."""
    return copy.deepcopy(shared_json_schema(artifact_type))


def _refuse(self: object, *args: object, **kwargs: object) -> None:
    raise TypeError("a shared JSON Schema is read-only; copy it with json_schema() to edit")


class _ReadOnlyDict(dict[str, Any]):
    """A dict that refuses every in-place change (it is shared by every NextAction)."""

    __slots__ = ()
    # Typed as the refusals they are, not as dict's overloads.
    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, object]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}


class _ReadOnlyList(list[Any]):
    """A list that refuses every in-place change (it is shared by every NextAction)."""

    __slots__ = ()
    # Typed as the refusals they are, not as list's overloads.
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, object]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]


def _read_only(value: Any) -> Any:
    if isinstance(value, dict):
        return _ReadOnlyDict((key, _read_only(item)) for key, item in value.items())
    if isinstance(value, list):
        return _ReadOnlyList(_read_only(item) for item in value)
    return value


@functools.cache
def shared_json_schema(artifact_type: str) -> dict[str, Any]:
    """Return the JSON Schema of ``artifact_type`` as one shared, read-only instance.

    Equal to ``json_schema(artifact_type)``, but built once: every in-place change raises
    ``TypeError`` (``copy.deepcopy`` gives an editable copy).
    """
    schema = _adapter(artifact_type).json_schema(by_alias=True, mode="validation")
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    # Through JSON text and back: every object's keys sorted, no object shared by two places.
    shared: dict[str, Any] = _read_only(json.loads(json.dumps(document, sort_keys=True)))
    return shared
