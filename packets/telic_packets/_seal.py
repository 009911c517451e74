"""Sealing: the controller turns a child's return into a verified, hashed packet.

Everything here is pure. Verification is injected as a ``Verifier`` (``source, quote → bool``)
so the ledger, a test archive or another language's runner can supply the stored content; the
verdict and the counters of proposed and verified lines follow mechanically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from telic_packets._base import format_timestamp
from telic_packets._bounds import MAX_PACKET_BYTES, PACKET_SCHEMA
from telic_packets._canonical import SHA256_PREFIX, canonical_json, canonical_sha256, sha256_text
from telic_packets._errors import CanonicalJsonError, PacketRefusal
from telic_packets._packet import (
    SIGNATURE_BYTES,
    Cast,
    Counters,
    EvidenceLine,
    Harness,
    Outcome,
    Packet,
    StopReason,
    budget_exhausted,
    derive_verdict,
)
from telic_packets._returns import ChildReturn, parse_child_return

__all__ = ["Verifier", "archive_verifier", "seal_packet", "verify_packet_hash"]

Verifier = Callable[[str, str], bool]
"""``verifier(source, quote)`` is true when ``quote`` is a byte-exact substring of ``source``."""


def archive_verifier(archive: Mapping[str, str | bytes]) -> Verifier:
    """Return a verifier over an in-memory archive of ``{source ref: stored content}``.

    A quote verifies when its UTF-8 bytes occur in the stored bytes of its source; a source the
    archive does not hold verifies nothing.
    """

    def verify(source: str, quote: str) -> bool:
        content = archive.get(source)
        if content is None:
            return False
        stored = content.encode("utf-8") if isinstance(content, str) else content
        return quote.encode("utf-8") in stored

    return verify


def seal_packet(
    returned: object,
    *,
    cast: Cast,
    cast_open: bool,
    packet_id: str,
    outcome: Outcome,
    stop_reason: StopReason | None,
    counters: Counters,
    verifier: Verifier,
    now: datetime,
    harness: Harness,
) -> Packet:
    """Verify a child's return and seal it into a packet, or refuse it with a repair code.

    ``returned`` is a ``ChildReturn`` or the raw decoded return (parsed with
    ``parse_child_return`` once the cast is known to be open). ``counters`` carry what the cast
    spent; their ``evidenceProposed`` and ``evidenceVerified`` are recomputed here. The checks
    run in this order: ``cast_not_open``; the return's own codes; ``budget_exhausted_requires_
    partial`` (a completed outcome with a stop reason or counters past the budget);
    ``missing_partial_fields`` (a partial without stop reason, claim, evidence, completed
    indices or remaining items); ``not_a_packet`` (a completed packet without claim or evidence,
    or remaining items outside a partial); ``packet_too_large`` (never truncated).

    Raises:
        PacketRefusal: with one of the return refusal codes.
        ValueError: when the controller's own facts are malformed (a bad ``packet_id``, a naive
            ``now``).
    """
    if not cast_open:
        raise PacketRefusal("cast_not_open", f"cast {cast.cast_id} is not open for a return")
    child = returned if isinstance(returned, ChildReturn) else parse_child_return(returned)
    _check_outcome(child, cast, outcome, stop_reason, counters)
    lines = [
        EvidenceLine(
            kind=line.kind,
            source=line.source,
            locator=line.locator,
            quote=line.quote,
            quote_sha256=sha256_text(line.quote),
            verified=verifier(line.source, line.quote) is True,
        )
        for line in child.evidence
    ]
    verified = sum(line.verified for line in lines)
    spent = counters.model_copy(
        update={"evidence_proposed": len(lines), "evidence_verified": verified}
    )
    draft: dict[str, Any] = {
        "schema": PACKET_SCHEMA,
        "packetId": packet_id,
        "runId": cast.run_id,
        "castId": cast.cast_id,
        "castType": cast.cast_type,
        "workNodeId": cast.work_node_id,
        "routing": cast.routing.to_wire(),
        "budget": cast.budget.to_wire(),
        "outcome": outcome,
        "claim": child.claim,
        "evidence": [line.to_wire() for line in lines],
        "completed": list(child.completed),
        "verdict": derive_verdict(outcome, lines, cast.routing.expected_evidence),
        "counters": spent.to_wire(),
        "createdAt": format_timestamp(now),
        "harness": harness.to_wire(),
    }
    if stop_reason is not None:
        draft["stopReason"] = stop_reason
    if outcome == "partial":
        draft["remaining"] = list(child.remaining)
    unsigned = canonical_json(draft)
    draft["packetSha256"] = SHA256_PREFIX + hashlib.sha256(unsigned).hexdigest()
    size = len(unsigned) + SIGNATURE_BYTES
    if size > MAX_PACKET_BYTES:
        raise PacketRefusal(
            "packet_too_large",
            f"the packet is {size} bytes of canonical JSON; the limit is {MAX_PACKET_BYTES} "
            "(shorten quotes or drop the weakest lines)",
        )
    return Packet.from_wire(draft)


def _check_outcome(
    child: ChildReturn,
    cast: Cast,
    outcome: Outcome,
    stop_reason: StopReason | None,
    counters: Counters,
) -> None:
    if outcome == "completed" and (
        stop_reason is not None or budget_exhausted(counters, cast.budget)
    ):
        raise PacketRefusal(
            "budget_exhausted_requires_partial",
            "the budget ran out: return a partial with completed indices and remaining items",
        )
    if outcome == "partial":
        missing = [
            name
            for name, present in (
                ("stopReason", stop_reason is not None),
                ("claim", bool(child.claim.strip())),
                ("evidence", bool(child.evidence)),
                ("completed", bool(child.completed)),
                ("remaining", bool(child.remaining)),
            )
            if not present
        ]
        if missing:
            raise PacketRefusal(
                "missing_partial_fields", "a partial return needs " + ", ".join(missing)
            )
    if outcome == "completed" and not (child.claim.strip() and child.evidence):
        raise PacketRefusal(
            "not_a_packet", "a completed return needs a claim and at least one evidence line"
        )
    if outcome != "partial" and child.remaining:
        raise PacketRefusal("not_a_packet", "remaining items belong only to a partial return")


def verify_packet_hash(packet: Packet | Mapping[str, object]) -> bool:
    """Return whether ``packetSha256`` matches the canonical JSON of the rest of the packet.

    A ``Mapping`` is hashed exactly as given (the stored JSON object); a ``Packet`` by its wire
    form. Content that cannot be hashed (a float, say) does not verify.
    """
    if isinstance(packet, Packet):
        digest = hashlib.sha256(packet.unsigned_json()).hexdigest()
        return SHA256_PREFIX + digest == packet.packet_sha256
    wire = dict(packet)
    claimed = wire.pop("packetSha256", None)
    if not isinstance(claimed, str):
        return False
    try:
        return canonical_sha256(wire) == claimed
    except CanonicalJsonError:
        return False
