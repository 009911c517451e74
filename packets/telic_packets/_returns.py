"""A child's raw return, and the pure parser that types it or refuses it with a repair code.

The child owns only four fields: ``claim``, ``evidence`` (each line's ``kind``, ``source``,
optional ``locator`` and ``quote``), ``completed`` and ``remaining``. Anything else — prose, a
``verified`` flag, a verdict, a hash — is refused, because the controller alone sets those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final

from pydantic import AfterValidator, Field, ValidationError

from telic_packets._base import EvidenceKind, PacketModel, Ref, first_issue
from telic_packets._bounds import (
    MAX_CLAIM_CHARS,
    MAX_EVIDENCE_LINES,
    MAX_QUOTE_CHARS,
    MAX_REMAINING_ITEMS,
)
from telic_packets._errors import PacketRefusal
from telic_packets._packet import Claim, EvidenceIndex, Locator, Quote, RemainingItem

__all__ = ["ChildReturn", "ProposedEvidence", "parse_child_return"]

_RETURN_KEYS: Final = frozenset({"claim", "evidence", "completed", "remaining"})
_LINE_KEYS: Final = frozenset({"kind", "source", "locator", "quote"})


def _plain_repo_source(source: str) -> str:
    """Refuse a ``repo://`` source that is no plain repository path, as cast pointers are."""
    if source.startswith("repo://"):
        path = source[len("repo://") :]
        segments = path.split("/")
        if path.startswith("/") or "\\" in path or "%" in path or ".." in segments:
            raise ValueError(
                "a repo:// source must be a plain path inside the repository (no '..' segment, "
                "no leading '/', no backslash or percent-encoding)"
            )
    return source


class ProposedEvidence(PacketModel):
    """An evidence line as the child proposes it, before the controller verifies it."""

    kind: EvidenceKind
    """What sort of fact the quote shows."""

    source: Annotated[Ref, AfterValidator(_plain_repo_source)]
    """Where the controller can check the quote (``artifact://…`` or a plain ``repo://…``)."""

    locator: Locator | None = None
    """Line or byte range inside the source (≤ 160 characters)."""

    quote: Quote
    """The quoted text (1–240 characters), byte-exact from the source."""


class ChildReturn(PacketModel):
    """The typed form of what a child returned: the child-owned fields of a packet."""

    claim: Claim
    """One falsifiable statement (≤ 280 characters)."""

    evidence: Annotated[list[ProposedEvidence], Field(max_length=MAX_EVIDENCE_LINES)] = Field(
        default_factory=list
    )
    """Up to 12 proposed evidence lines."""

    completed: list[EvidenceIndex] = Field(default_factory=list)
    """Indices of the evidence lines that are finished work."""

    remaining: Annotated[list[RemainingItem], Field(max_length=MAX_REMAINING_ITEMS)] = Field(
        default_factory=list
    )
    """Up to 8 items left undone (a partial return only)."""


def parse_child_return(raw: object) -> ChildReturn:
    """Type a child's decoded return, or refuse it with the most specific repair code.

    The checks run in this order, so every implementation reports the same code:

    1. not a JSON object (prose, a list, a number) → ``not_a_packet``;
    2. a key outside the child's fields, at the top or in an evidence line → ``unknown_field``;
    3. ``claim`` longer than 280 characters → ``claim_too_long``;
    4. more than 12 evidence lines → ``too_many_evidence_lines``;
    5. a quote longer than 240 characters → ``quote_too_long``;
    6. any other shape fault, or a ``completed`` index with no line → ``not_a_packet``.

    Raises:
        PacketRefusal: carrying one of the codes above.
    """
    if not isinstance(raw, Mapping):
        raise PacketRefusal(
            "not_a_packet",
            "return one JSON object {claim, evidence[], completed[], remaining[]}, not prose",
        )
    lines = raw.get("evidence")
    line_objects = [
        line for line in (lines if isinstance(lines, list) else []) if isinstance(line, Mapping)
    ]
    _refuse_unknown_keys(raw, line_objects)
    claim = raw.get("claim")
    if isinstance(claim, str) and len(claim) > MAX_CLAIM_CHARS:
        raise PacketRefusal(
            "claim_too_long", f"claim is {len(claim)} characters; the limit is {MAX_CLAIM_CHARS}"
        )
    if isinstance(lines, list) and len(lines) > MAX_EVIDENCE_LINES:
        raise PacketRefusal(
            "too_many_evidence_lines",
            f"{len(lines)} evidence lines; keep the {MAX_EVIDENCE_LINES} strongest",
        )
    for index, line in enumerate(line_objects):
        quote = line.get("quote")
        if isinstance(quote, str) and len(quote) > MAX_QUOTE_CHARS:
            raise PacketRefusal(
                "quote_too_long",
                f"evidence[{index}].quote is over {MAX_QUOTE_CHARS} characters; quote less "
                "and point at the rest with a locator",
            )
    try:
        parsed = ChildReturn.from_wire(raw)
    except ValidationError as exc:
        raise PacketRefusal("not_a_packet", first_issue(exc)) from None
    if len(set(parsed.completed)) != len(parsed.completed) or any(
        index >= len(parsed.evidence) for index in parsed.completed
    ):
        raise PacketRefusal(
            "not_a_packet", "completed must list distinct indices of existing evidence lines"
        )
    return parsed


def _refuse_unknown_keys(
    raw: Mapping[object, object], lines: list[Mapping[object, object]]
) -> None:
    extra = sorted(str(key) for key in raw if key not in _RETURN_KEYS)
    if extra:
        raise PacketRefusal(
            "unknown_field",
            f"unknown field {extra[0][:40]!r}; a return has only claim, evidence, "
            "completed, remaining",
        )
    for index, line in enumerate(lines):
        extra = sorted(str(key) for key in line if key not in _LINE_KEYS)
        if extra:
            raise PacketRefusal(
                "unknown_field",
                f"unknown field evidence[{index}].{extra[0][:40]}; a line has only kind, source, "
                "locator, quote (the controller sets verified and quoteSha256)",
            )
