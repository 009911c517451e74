"""The packet: the only thing a child may return, bounded, typed and hashed.

Every field but ``claim``, ``evidence``, ``completed`` and ``remaining`` is owned by the
controller. The model re-checks each rule of the contract's packet table, so a ``Packet`` value
is always well-formed: a stored packet that fails them is not a packet. The hash is the one rule
left out, because ``verify_packet_hash`` exists to detect a packet that was changed after sealing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, Field, PrivateAttr, StringConstraints, model_validator

from telic_packets._base import (
    EvidenceKind,
    Identifier,
    PacketId,
    PacketModel,
    Ref,
    Sha256Digest,
    Timestamp,
    unique,
)
from telic_packets._bounds import (
    MAX_CLAIM_CHARS,
    MAX_EVIDENCE_LINES,
    MAX_LOCATOR_CHARS,
    MAX_PACKET_BYTES,
    MAX_QUOTE_CHARS,
    MAX_REMAINING_CHARS,
    MAX_REMAINING_ITEMS,
)
from telic_packets._canonical import canonical_json, sha256_text
from telic_packets._cast import CastBudget, RoutingReason

__all__ = [
    "Cast",
    "Counters",
    "EvidenceLine",
    "Harness",
    "Outcome",
    "Packet",
    "StopReason",
    "Verdict",
    "budget_exhausted",
    "derive_verdict",
]

Outcome = Literal["completed", "partial", "failed", "refused", "cancelled"]
"""How a cast ended, as the controller saw it."""

StopReason = Literal["turn_capped", "token_capped", "wall_capped"]
"""Which budget cap stopped a child."""

Verdict = Literal["verified", "partially_verified", "unverified", "rejected"]
"""The controller's mechanical judgement of a packet's evidence."""

Claim = Annotated[str, StringConstraints(max_length=MAX_CLAIM_CHARS)]
Quote = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUOTE_CHARS)]
Locator = Annotated[str, StringConstraints(min_length=1, max_length=MAX_LOCATOR_CHARS)]
RemainingItem = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_REMAINING_CHARS, pattern=r"\S")
]
Count = Annotated[int, Field(ge=0)]
EvidenceIndex = Annotated[int, Field(ge=0, lt=MAX_EVIDENCE_LINES)]
Version = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^\S+$")]

_QUIET_OUTCOMES: frozenset[Outcome] = frozenset({"failed", "refused", "cancelled"})


class EvidenceLine(PacketModel):
    """One quoted fact and where the controller checked it."""

    kind: EvidenceKind
    """What sort of fact the quote shows."""

    source: Ref
    """The archived document the quote comes from (``artifact://…`` or grounded ``repo://…``)."""

    locator: Locator | None = None
    """Line or byte range inside the source, when the child gave one."""

    quote: Quote
    """The quoted text; it must be a byte-exact substring of the source's stored content."""

    quote_sha256: Sha256Digest
    """``sha256:`` of the quote's UTF-8 bytes, set by the controller."""

    verified: bool
    """Whether the controller found the quote in the source; never set by the child."""

    @model_validator(mode="after")
    def _digest_matches_quote(self) -> Self:
        if self.quote_sha256 != sha256_text(self.quote):
            raise ValueError("quoteSha256 is not the sha256 of the quote")
        return self


class Counters(PacketModel):
    """What a cast spent and how much of its evidence held up; non-negative integers only."""

    turns: Count
    """Model turns the child took."""

    tool_calls: Count
    """Tool calls the child made."""

    input_tokens: Count
    """Input tokens the child consumed."""

    output_tokens: Count
    """Output tokens the child produced."""

    total_tokens: Count
    """Tokens counted against ``maxTotalTokens``."""

    wall_ms: Count
    """Wall-clock milliseconds from cast to return."""

    evidence_proposed: Count
    """Evidence lines the child proposed."""

    evidence_verified: Count
    """Evidence lines the controller verified."""

    @model_validator(mode="after")
    def _verified_within_proposed(self) -> Self:
        if self.evidence_verified > self.evidence_proposed:
            raise ValueError("evidenceVerified exceeds evidenceProposed")
        return self


class Harness(PacketModel):
    """The implementation that sealed a packet."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^\S+$")]
    """Implementation name, e.g. ``telic-python``."""

    version: Version
    """Implementation version."""


class Cast(PacketModel):
    """The controller's facts about one admitted cast, copied into its packet."""

    run_id: Identifier
    """The run the cast belongs to."""

    cast_id: Identifier
    """The cast's id."""

    cast_type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")]
    """The registry entry the cast used."""

    work_node_id: Identifier
    """The work node the parent was executing when it cast."""

    routing: RoutingReason
    """The routing reason given at cast time."""

    budget: CastBudget
    """The budget granted at cast time."""


def derive_verdict(
    outcome: Outcome, evidence: Sequence[EvidenceLine], expected: Sequence[EvidenceKind]
) -> Verdict:
    """Return the verdict the contract derives from verification results alone.

    A refused return is ``rejected``. Otherwise: every line verified and every expected kind
    present → ``verified``; at least one line verified → ``partially_verified``; none (or no
    lines) → ``unverified``.
    """
    if outcome == "refused":
        return "rejected"
    verified = [line for line in evidence if line.verified]
    if not verified:
        return "unverified"
    kinds = {line.kind for line in verified}
    if len(verified) == len(evidence) and all(kind in kinds for kind in expected):
        return "verified"
    return "partially_verified"


def budget_exhausted(counters: Counters, budget: CastBudget) -> bool:
    """Return whether ``counters`` went past any cap of ``budget``."""
    return (
        counters.turns > budget.max_turns
        or counters.total_tokens > budget.max_total_tokens
        or (budget.max_wall_ms is not None and counters.wall_ms > budget.max_wall_ms)
    )


class Packet(PacketModel):
    """A sealed evidence packet (``telic.evidence-packet/1``)."""

    schema_id: Literal["telic.evidence-packet/1"] = Field(alias="schema")
    """The contract stamp, always ``telic.evidence-packet/1``."""

    packet_id: PacketId
    """``pk_`` + 8–26 of ``[0-9a-z]``; the token a parent cites."""

    run_id: Identifier
    """The run of the cast."""

    cast_id: Identifier
    """The cast that produced this packet."""

    cast_type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")]
    """The cast type used."""

    work_node_id: Identifier
    """The work node the parent was executing."""

    routing: RoutingReason
    """Copied from the cast."""

    budget: CastBudget
    """Copied from the cast."""

    outcome: Outcome
    """How the cast ended."""

    stop_reason: StopReason | None = None
    """Which cap stopped the child; required when ``outcome`` is ``partial``."""

    claim: Claim
    """One falsifiable statement, 1–280 characters; empty only for failed/refused/cancelled."""

    evidence: Annotated[list[EvidenceLine], Field(max_length=MAX_EVIDENCE_LINES)] = Field(
        default_factory=list
    )
    """0–12 verified-or-not evidence lines; at least one when completed or partial."""

    completed: Annotated[list[EvidenceIndex], AfterValidator(unique)] = Field(default_factory=list)
    """Indices of evidence lines that are finished work; at least one when partial."""

    remaining: (
        Annotated[list[RemainingItem], Field(min_length=1, max_length=MAX_REMAINING_ITEMS)] | None
    ) = None
    """1–8 items left undone when partial; absent otherwise."""

    verdict: Verdict
    """Derived mechanically from the evidence; never taken from the child."""

    counters: Counters
    """What the cast spent."""

    created_at: Timestamp
    """When the packet was sealed (RFC 3339)."""

    harness: Harness
    """The implementation that sealed the packet."""

    packet_sha256: Sha256Digest
    """``sha256:`` of the canonical JSON of this packet without this field."""

    _unsigned: bytes | None = PrivateAttr(None)
    """Canonical JSON of the wire form without ``packetSha256``, computed once by validation:
    it gives both the packet's size and the digest ``packetSha256`` must equal."""

    @model_validator(mode="after")
    def _follows_the_packet_table(self) -> Self:
        for problem in packet_problems(self):
            raise ValueError(problem)
        if self.signed_size() > MAX_PACKET_BYTES:
            raise ValueError(f"the packet is over {MAX_PACKET_BYTES} bytes of canonical JSON")
        return self

    def unsigned_json(self) -> bytes:
        """Return the canonical JSON of this packet without ``packetSha256`` (what it hashes)."""
        private = self.__pydantic_private__ or {}  # read directly: faster than the attribute
        unsigned: bytes | None = private.get("_unsigned")
        if unsigned is None:
            wire = self.to_wire()
            del wire["packetSha256"]
            unsigned = self._unsigned = canonical_json(wire)
        return unsigned

    def signed_size(self) -> int:
        """Return the size of this packet's canonical JSON, in bytes."""
        return len(self.unsigned_json()) + SIGNATURE_BYTES

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Copy the packet; an ``update`` makes the copy recompute its canonical JSON."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied._unsigned = None
        return copied


SIGNATURE_BYTES: Final = len(b',"packetSha256":"sha256:"') + 64
"""What ``packetSha256`` adds to the canonical JSON of the rest of a packet: the member and the
one comma that separates it from the others (a packet always has others)."""


def packet_problems(packet: Packet) -> list[str]:
    """Return each rule of the packet table that ``packet`` breaks (size and hash excluded)."""
    problems: list[str] = []
    partial = packet.outcome == "partial"
    if partial and packet.stop_reason is None:
        problems.append("a partial packet needs a stopReason")
    if packet.outcome == "completed" and (
        packet.stop_reason is not None or budget_exhausted(packet.counters, packet.budget)
    ):
        problems.append("an exhausted budget makes the outcome partial, not completed")
    if packet.outcome not in _QUIET_OUTCOMES and not packet.claim.strip():
        problems.append(f"a {packet.outcome} packet needs a claim")
    if packet.outcome not in _QUIET_OUTCOMES and not packet.evidence:
        problems.append(f"a {packet.outcome} packet needs at least one evidence line")
    if any(index >= len(packet.evidence) for index in packet.completed):
        problems.append("completed holds an index with no evidence line")
    if partial and not packet.completed:
        problems.append("a partial packet needs at least one completed index")
    if partial and packet.remaining is None:
        problems.append("a partial packet needs remaining items")
    if not partial and packet.remaining is not None:
        problems.append("remaining is allowed only on a partial packet")
    expected = derive_verdict(packet.outcome, packet.evidence, packet.routing.expected_evidence)
    if packet.verdict != expected:
        problems.append(f"the evidence makes the verdict {expected}, not {packet.verdict}")
    verified = sum(line.verified for line in packet.evidence)
    if packet.counters.evidence_proposed != len(packet.evidence):
        problems.append("counters.evidenceProposed must equal the number of evidence lines")
    if packet.counters.evidence_verified != verified:
        problems.append("counters.evidenceVerified must equal the number of verified lines")
    return problems
