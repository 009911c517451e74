"""The digest: a deterministic, bounded rendering of a run's packets, unconsumed ones first.

Order: unconsumed, then partial, then unverified, then the rest; newest first inside each group
(ties by ``packetId``). One line per packet::

    [outcome/verdict] [pk_…] castType: claim (needCode; N tokens)

The claim is flattened to one line (CR, LF and TAB become spaces) and cut to 120 characters (119
plus "…"). The whole digest is at most 6000 characters; when lines must be dropped, the last line
reads "N older packets omitted" and the total still fits.

A *marked* digest (``marked=True``, what an implementation shows its users) writes the tokens as
``N tokens self-reported`` — a child reports its own spend, the controller cannot observe it —
and ends each line with its consumption marker::

    … (needCode; N tokens self-reported) — consumed by artifact://run/wr-1 (token)
    … (needCode; N tokens self-reported) — unconsumed: not cited by artifact://run/wr-1
    … (needCode; N tokens self-reported) — unconsumed: no parent decision yet

When the controller observed a native child's calls itself (through the host's hook), the
observed figures stand beside the reported ones: ``(needCode; N tokens self-reported; T turns,
C tool calls observed)``.

The unmarked line is the contract's format, which other implementations reproduce. A host that
reads the digest over a wire gets ``digest_view``: the contract's text, and beside it one
``DigestMark`` per line — the same annotations as data (consumption, self-reported tokens, the
observed spend), so no annotation ever changes the contract's line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints

from telic_packets._base import NeedCode, PacketId, PacketModel, Timestamp, parse_timestamp
from telic_packets._bounds import DIGEST_CLAIM_CHARS, DIGEST_MAX_CHARS, MAX_CLAIM_CHARS
from telic_packets._consumption import CiteKind, ConsumptionRecord
from telic_packets._packet import Outcome, Packet, Verdict

__all__ = [
    "DigestItem",
    "DigestMark",
    "DigestView",
    "digest_line",
    "digest_view",
    "render_digest",
]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MARKER_REF_CHARS: Final = 120
_FLATTEN: Final = str.maketrans({"\r": " ", "\n": " ", "\t": " "})


class DigestItem(PacketModel):
    """What the digest needs to know about one packet and whether it was consumed."""

    packet_id: PacketId
    """The packet's citation token."""

    cast_type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")]
    """The cast type that produced it."""

    outcome: Outcome
    """How the cast ended."""

    verdict: Verdict
    """The packet's verdict."""

    claim: Annotated[str, StringConstraints(max_length=MAX_CLAIM_CHARS)]
    """The packet's claim (cut to 120 characters when rendered)."""

    need_code: NeedCode
    """The routing reason's need code."""

    total_tokens: Annotated[int, Field(ge=0)]
    """Tokens the cast spent."""

    created_at: Timestamp
    """When the packet was sealed."""

    consumed: bool
    """Whether a later parent decision cited it."""

    consumer_ref: Annotated[str, StringConstraints(max_length=2048)] | None = None
    """The decision it was checked against, once one was."""

    cite_kind: CiteKind | None = None
    """How that decision cited it (``none`` when it did not), once one was checked."""

    observed_turns: Annotated[int, Field(ge=0)] | None = None
    """Turns the controller observed the child take (marked digests only); ``None``: unseen."""

    observed_tool_calls: Annotated[int, Field(ge=0)] | None = None
    """Tool calls the controller observed the child make (marked digests only)."""

    @classmethod
    def of(
        cls,
        packet: Packet,
        record: ConsumptionRecord | None,
        observed: tuple[int, int] | None = None,
    ) -> DigestItem:
        """Summarise ``packet``; it counts as consumed when ``record`` says it was cited.

        ``observed`` is the (turns, tool calls) the controller saw its child spend, if any.
        """
        return cls(
            packet_id=packet.packet_id,
            cast_type=packet.cast_type,
            outcome=packet.outcome,
            verdict=packet.verdict,
            claim=packet.claim,
            need_code=packet.routing.need_code,
            total_tokens=packet.counters.total_tokens,
            created_at=packet.created_at,
            consumed=record is not None and record.cited,
            consumer_ref=None if record is None else record.consumer_ref,
            cite_kind=None if record is None else record.cite_kind,
            observed_turns=None if observed is None else observed[0],
            observed_tool_calls=None if observed is None else observed[1],
        )


def _marker(item: DigestItem) -> str:
    ref = item.consumer_ref
    if ref is not None and len(ref) > _MARKER_REF_CHARS:
        ref = ref[: _MARKER_REF_CHARS - 1] + "…"
    if ref is None:
        return " — unconsumed: no parent decision yet"
    if item.consumed:
        return f" — consumed by {ref} ({item.cite_kind})"
    return f" — unconsumed: not cited by {ref}"


def digest_line(item: DigestItem, *, marked: bool = False) -> str:
    """Render one packet as its digest line (``marked``: self-reported spend and consumption)."""
    claim = item.claim.translate(_FLATTEN)
    if len(claim) > DIGEST_CLAIM_CHARS:
        claim = claim[: DIGEST_CLAIM_CHARS - 1] + "…"
    if not claim:
        claim = "(no claim)"
    line = f"[{item.outcome}/{item.verdict}] [{item.packet_id}] {item.cast_type}: {claim} "
    if not marked:
        return line + f"({item.need_code}; {item.total_tokens} tokens)"
    seen = ""
    if item.observed_turns is not None and item.observed_tool_calls is not None:
        seen = f"; {item.observed_turns} turns, {item.observed_tool_calls} tool calls observed"
    spend = f"({item.need_code}; {item.total_tokens} tokens self-reported{seen})"
    return line + spend + _marker(item)


Consumption = Literal["consumed", "not_cited", "no_decision_yet"]
"""A packet's consumption as a marked line states it."""


class DigestMark(PacketModel):
    """What a marked digest line adds to the contract's line for one packet, as data."""

    packet_id: PacketId
    """The packet the line renders (its ``[pk_…]``)."""

    consumption: Consumption
    """``consumed`` (a decision cited it), ``not_cited`` (the decision checked against it did
    not), or ``no_decision_yet`` (no decision of its parent was checked against it yet)."""

    consumer_ref: Annotated[str, StringConstraints(max_length=2048)] | None = None
    """The decision the packet was checked against, once one was."""

    cite_kind: CiteKind | None = None
    """How that decision cited it (``none`` when it did not), once one was checked."""

    tokens_self_reported: Literal[True] = True
    """The line's tokens are the child's own report: the controller cannot observe them."""

    observed_turns: Annotated[int, Field(ge=0)] | None = None
    """Turns the controller observed the child take through the host's hook, when it did."""

    observed_tool_calls: Annotated[int, Field(ge=0)] | None = None
    """Tool calls the controller observed the child make through the host's hook, when it did."""

    @classmethod
    def of(cls, item: DigestItem) -> DigestMark:
        """Return the marks of ``item``'s line."""
        consumption: Consumption = (
            "no_decision_yet"
            if item.consumer_ref is None
            else "consumed"
            if item.consumed
            else "not_cited"
        )
        observed = item.observed_turns is not None and item.observed_tool_calls is not None
        return cls(
            packet_id=item.packet_id,
            consumption=consumption,
            consumer_ref=item.consumer_ref,
            cite_kind=item.cite_kind,
            observed_turns=item.observed_turns if observed else None,
            observed_tool_calls=item.observed_tool_calls if observed else None,
        )


class DigestView(PacketModel):
    """A digest for a wire: the contract's text, and each packet line's marks beside it."""

    text: Annotated[str, StringConstraints(max_length=DIGEST_MAX_CHARS)]
    """The digest in the contract's line format, exactly (``render_digest``)."""

    marks: list[DigestMark]
    """One entry per packet line of ``text``, in its order (the omitted-packets line has
    none)."""

    omitted: Annotated[int, Field(ge=0)]
    """Packets the bound left out (the last line says so when it is above 0)."""


def _group(item: DigestItem) -> int:
    if not item.consumed:
        return 0
    if item.outcome == "partial":
        return 1
    if item.verdict == "unverified":
        return 2
    return 3


def _micros(item: DigestItem) -> int:
    return (parse_timestamp(item.created_at) - _EPOCH) // timedelta(microseconds=1)


def _items(
    entries: Iterable[DigestItem | tuple[Packet, ConsumptionRecord | None]],
    observed: Mapping[str, tuple[int, int]] | None,
) -> list[DigestItem]:
    seen = observed or {}
    items = [
        entry
        if isinstance(entry, DigestItem)
        else DigestItem.of(*entry, seen.get(entry[0].cast_id))
        for entry in entries
    ]
    items.sort(key=lambda item: (_group(item), -_micros(item), item.packet_id))
    return items


def _kept(lines: list[str]) -> int:
    """How many leading ``lines`` fit in the bound (all of them when nothing is cut)."""
    if len("\n".join(lines)) <= DIGEST_MAX_CHARS:
        return len(lines)
    kept_chars = 0  # characters of the first `kept` lines joined, before the footer
    best = 0
    for kept in range(1, len(lines)):
        kept_chars += len(lines[kept - 1]) + (1 if kept > 1 else 0)
        footer = f"{len(lines) - kept} older packets omitted"
        if kept_chars + 1 + len(footer) > DIGEST_MAX_CHARS:
            break
        best = kept
    return best


def _join(lines: list[str], kept: int) -> str:
    if kept == len(lines):
        return "\n".join(lines)
    return "\n".join([*lines[:kept], f"{len(lines) - kept} older packets omitted"])


def render_digest(
    entries: Iterable[DigestItem | tuple[Packet, ConsumptionRecord | None]],
    *,
    marked: bool = False,
    observed: Mapping[str, tuple[int, int]] | None = None,
) -> str:
    """Render the digest of ``entries`` (``DigestItem``s or ``(packet, record)`` pairs).

    ``marked`` renders the marked lines (see the module docstring); ``observed`` maps a cast id
    to the (turns, tool calls) the controller observed its child spend, shown on marked lines.
    Returns the empty string when there are no packets.
    """
    lines = [digest_line(item, marked=marked) for item in _items(entries, observed)]
    return _join(lines, _kept(lines))


def digest_view(
    entries: Iterable[DigestItem | tuple[Packet, ConsumptionRecord | None]],
    *,
    observed: Mapping[str, tuple[int, int]] | None = None,
) -> DigestView:
    """Return the contract's digest of ``entries`` and, beside it, each line's marks.

    ``text`` is ``render_digest(entries)`` exactly; ``marks[i]`` says of the packet on line
    ``i`` what a marked line would add (consumption, self-reported tokens, observed spend).
    """
    items = _items(entries, observed)
    lines = [digest_line(item) for item in items]
    kept = _kept(lines)
    return DigestView(
        text=_join(lines, kept),
        marks=[DigestMark.of(item) for item in items[:kept]],
        omitted=len(items) - kept,
    )
