"""The base model of every packet-contract object and the shared field types.

Objects are frozen and strict: unknown keys are rejected at every depth, nothing is coerced
(``"1"`` is not an int, ``true`` is not a number), and names are camelCase on the wire. Python
code constructs models by field name; ``from_wire`` validates a decoded JSON value by its wire
names only. The wire form omits absent optional fields: ``null`` and absence mean the same on
input, and only absence is ever written.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from telic_packets._bounds import MAX_POINTER_CHARS
from telic_packets._canonical import canonical_json, canonical_sha256

__all__ = [
    "EvidenceKind",
    "Identifier",
    "NeedCode",
    "PacketId",
    "PacketModel",
    "Ref",
    "Sha256Digest",
    "Timestamp",
    "format_timestamp",
]

NeedCode = Literal[
    "locate", "verify_claim", "reproduce", "measure", "diagnose", "review", "synthesize", "draft"
]
"""The closed set of evidence needs a cast may be routed by."""

EvidenceKind = Literal[
    "observation", "measurement", "failure", "file_state", "test_result", "citation"
]
"""The closed set of evidence-line kinds."""

REF_PATTERN: Final = r"^(artifact://[^/\s]+/\S+|repo://\S+)$"


def _parses_as_instant(text: str) -> str:
    datetime.fromisoformat(text.replace("Z", "+00:00"))  # ValueError becomes a validation error
    return text


Ref = Annotated[str, StringConstraints(max_length=MAX_POINTER_CHARS, pattern=REF_PATTERN)]
"""An ``artifact://<run>/<id>`` or ``repo://<path>`` reference, at most 512 characters."""

Identifier = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^\S+$")]
"""A run, cast or work-node id: 1–128 characters, no white space."""

PacketId = Annotated[str, StringConstraints(pattern=r"^pk_[0-9a-z]{8,26}$")]
"""``pk_`` + 8–26 of ``[0-9a-z]``: the citation token of a packet."""

Sha256Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
"""``sha256:`` + 64 lowercase hex digits."""

Timestamp = Annotated[
    str,
    StringConstraints(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"
    ),
    AfterValidator(_parses_as_instant),
]
"""An RFC 3339 date-time with an explicit offset."""


def format_timestamp(moment: datetime) -> str:
    """Format an aware datetime as RFC 3339 in UTC with milliseconds (``…T03:04:05.000Z``).

    Raises:
        ValueError: when ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("a packet timestamp needs an aware datetime")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """Parse a ``Timestamp`` string into an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class PacketModel(BaseModel):
    """Frozen, strict, camelCase base of every packet-contract object."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        hide_input_in_errors=True,
        allow_inf_nan=False,
    )

    @classmethod
    def from_wire(cls, data: object) -> Self:
        """Validate a decoded JSON value by its camelCase wire names only."""
        return cls.model_validate(data, by_alias=True, by_name=False)

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-ready camelCase form; absent optional fields are omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def canonical_json(self) -> bytes:
        """Return the canonical JSON bytes of the wire form."""
        return canonical_json(self.to_wire())

    def digest(self) -> str:
        """Return the ``sha256:`` digest of the canonical wire form."""
        return canonical_sha256(self.to_wire())


def unique(items: list[Any]) -> list[Any]:
    """Reject a list that holds the same item twice (used as an ``AfterValidator``)."""
    if len(set(items)) != len(items):
        raise ValueError("items must be unique")
    return items


def first_issue(exc: ValidationError) -> str:
    """Return ``"<wire path>: <message>"`` of a validation error's first issue, without input."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "value"
    return f"{where}: {error['msg']}"
