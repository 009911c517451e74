"""Consumption: did the parent's next decision cite the packet? Mechanical, never a gate.

A decision cites a packet when its text contains the ``pk_…`` token (as a whole token), its refs
contain the packet's artifact URI, or its text contains the first 12 hex characters of the
packet's ``packetSha256``; checked in that order. An uncited packet never blocks the parent: the
record is telemetry that the digest surfaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Literal, Self

from pydantic import StringConstraints, model_validator

from telic_packets._base import PacketId, PacketModel, Timestamp, format_timestamp
from telic_packets._bounds import CITATION_HASH_CHARS, MAX_POINTER_CHARS
from telic_packets._packet import Packet

__all__ = ["CiteKind", "ConsumptionRecord", "cite_kind", "consumption"]

CiteKind = Literal["token", "ref", "hash", "none"]
"""How a decision cited a packet, or ``none``."""


class ConsumptionRecord(PacketModel):
    """Whether the parent's next accepted decision after delivery cited a packet."""

    packet_id: PacketId
    """The packet observed."""

    consumer_ref: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_POINTER_CHARS, pattern=r"^\S+$")
    ]
    """The decision artifact that was checked for a citation."""

    cited: bool
    """Whether the decision cites the packet; true exactly when ``citeKind`` is not ``none``."""

    cite_kind: CiteKind
    """The first way of citing found: token, ref, hash, or none."""

    at: Timestamp
    """When the observation was written (RFC 3339)."""

    @model_validator(mode="after")
    def _cited_agrees_with_kind(self) -> Self:
        if self.cited != (self.cite_kind != "none"):
            raise ValueError("cited must be true exactly when citeKind is not none")
        return self


def cite_kind(
    *, packet_id: str, packet_sha256: str, packet_uri: str, text: str, refs: Iterable[str]
) -> CiteKind:
    """Return how ``text`` and ``refs`` cite a packet (token, ref, hash), or ``none``.

    The token matches only whole: ``pk_abc12345`` is not cited by ``pk_abc123456``.
    """
    token = re.compile(r"(?<![0-9A-Za-z_])" + re.escape(packet_id) + r"(?![0-9A-Za-z_])")
    if token.search(text):
        return "token"
    if packet_uri in set(refs):
        return "ref"
    prefix = packet_sha256.removeprefix("sha256:")[:CITATION_HASH_CHARS]
    if len(prefix) == CITATION_HASH_CHARS and prefix in text:
        return "hash"
    return "none"


def consumption(
    packet: Packet,
    *,
    packet_uri: str,
    consumer_ref: str,
    artifact_text: str,
    artifact_refs: Iterable[str],
    at: datetime,
) -> ConsumptionRecord:
    """Build the consumption record of ``packet`` against the parent's next decision artifact."""
    kind = cite_kind(
        packet_id=packet.packet_id,
        packet_sha256=packet.packet_sha256,
        packet_uri=packet_uri,
        text=artifact_text,
        refs=artifact_refs,
    )
    return ConsumptionRecord(
        packet_id=packet.packet_id,
        consumer_ref=consumer_ref,
        cited=kind != "none",
        cite_kind=kind,
        at=format_timestamp(at),
    )
