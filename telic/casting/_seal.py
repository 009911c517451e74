"""Sealing a child's return against the run's archive, and sealing casts that never returned.

The archive is what the ledger holds for the run: each Evidence artifact's decoded content and
each grounded ContextDocument's text, addressable by its ``artifact://`` URI, and a grounded
file's text also by its ``repo://`` reference. A quote verifies only as a byte-exact substring
of that stored content; the child's own say-so counts for nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from importlib import metadata
from typing import Final

from telic.casting._book import OpenCast, cap_reached
from telic.controller import RunState, StoredArtifact
from telic.protocol import decode_evidence_content
from telic_packets import (
    ChildReturn,
    Harness,
    Outcome,
    Packet,
    Verifier,
    parse_child_return,
    seal_packet,
)


def _version() -> str:
    try:
        return metadata.version("telic")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"


HARNESS: Final = Harness(name="telic-python", version=_version())
"""The implementation stamp sealed into every packet."""


def packet_id_for(cast_id: str) -> str:
    """Return the packet id of a cast's one packet: ``pk_`` + 24 hex of sha256(castId)."""
    return "pk_" + hashlib.sha256(cast_id.encode("utf-8")).hexdigest()[:24]


def _content(artifact: StoredArtifact) -> bytes | None:
    if artifact.type == "Evidence":
        try:
            return decode_evidence_content(artifact.body)
        except ValueError:
            return None
    if artifact.type == "ContextDocument":
        text: str = artifact.body.content
        return text.encode("utf-8")
    return None


def run_verifier(state: RunState) -> Verifier:
    """Return a verifier over the run's archive (Evidence and grounded ContextDocuments)."""
    sources: dict[str, StoredArtifact] = {}
    for artifact in state.artifacts:
        if artifact.type in ("Evidence", "ContextDocument"):
            sources[artifact.uri] = artifact
        if artifact.type == "ContextDocument":
            sources[artifact.body.repository_ref] = artifact  # the latest grounding wins
    cache: dict[str, bytes | None] = {}

    def verify(source: str, quote: str) -> bool:
        if source not in cache:
            artifact = sources.get(source)
            cache[source] = None if artifact is None else _content(artifact)
        stored = cache[source]
        return stored is not None and quote.encode("utf-8") in stored

    return verify


def seal_return(
    open_cast: OpenCast,
    raw: object,
    *,
    verifier: Verifier,
    now: datetime,
    clock: Callable[[], float],
    packet_id: str | None = None,
    harness: Harness = HARNESS,
) -> Packet:
    """Seal what a child returned, or refuse it with a repair code.

    ``packet_id`` defaults to ``packet_id_for(castId)`` and ``harness`` to this implementation
    (other values serve conformance checks against fixed rows).

    The outcome is the controller's, from the counters: once a cap was crossed (or the cast
    was marked exhausted), a return with remaining items is sealed ``partial`` with that cap
    as its stop reason and any other return is refused with
    ``budget_exhausted_requires_partial``; at a cap exactly, remaining items make a partial
    and none a ``completed`` packet; below every cap the return is ``completed`` (remaining
    items there are ``not_a_packet``).

    Raises:
        PacketRefusal: ``not_a_packet`` for prose, the parser's codes for a malformed return,
            ``budget_exhausted_requires_partial``, ``missing_partial_fields``,
            ``packet_too_large``.
    """
    child: ChildReturn = parse_child_return(raw)
    counters, stop = open_cast.spent(clock())
    if stop is None and child.remaining:  # at a cap exactly, a child may still leave work undone
        stop = cap_reached(
            turns=counters.turns,
            total_tokens=counters.total_tokens,
            wall_ms=counters.wall_ms,
            cast=open_cast.cast,
        )
    # Past a cap, a return without remaining items is answered with
    # budget_exhausted_requires_partial by the contract's own check.
    outcome: Outcome = "partial" if child.remaining and stop is not None else "completed"
    return seal_packet(
        child,
        cast=open_cast.cast,
        cast_open=True,
        packet_id=packet_id or packet_id_for(open_cast.cast_id),
        outcome=outcome,
        stop_reason=stop,
        counters=counters,
        verifier=verifier,
        now=now,
        harness=harness,
    )


def seal_unreturned(
    open_cast: OpenCast,
    *,
    now: datetime,
    clock: Callable[[], float],
    packet_id: str | None = None,
    harness: Harness = HARNESS,
) -> Packet:
    """Seal a cast whose child never returned as ``cancelled``, with the counters it reached.

    No cast disappears: a cancelled run, a finished node, a wall-clock cap or a closed session
    all end in such a packet. An exhausted cast keeps its stop reason.
    """
    counters, stop = open_cast.spent(clock())
    return seal_packet(
        ChildReturn(claim=""),
        cast=open_cast.cast,
        cast_open=True,
        packet_id=packet_id or packet_id_for(open_cast.cast_id),
        outcome="cancelled",
        stop_reason=stop,
        counters=counters,
        verifier=lambda _source, _quote: False,
        now=now,
        harness=harness,
    )
