"""The hard bounds of ``telic.evidence-packet/1``, one named constant each.

Every number here is normative: the contract fixes it, the models enforce it, and the conformance
table tests each one at its limit and one past it. Lengths count Unicode code points (Python
``len``), except ``MAX_PACKET_BYTES``, which counts UTF-8 bytes of canonical JSON.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "CITATION_HASH_CHARS",
    "DIGEST_CLAIM_CHARS",
    "DIGEST_MAX_CHARS",
    "MAX_ACCEPTANCE_CHARS",
    "MAX_ACCEPTANCE_ITEMS",
    "MAX_CLAIM_CHARS",
    "MAX_EVIDENCE_LINES",
    "MAX_EXPECTED_EVIDENCE",
    "MAX_HANDOFF_BRIEF_CHARS",
    "MAX_LOCATOR_CHARS",
    "MAX_PACKET_BYTES",
    "MAX_PACKET_REFS",
    "MAX_POINTERS",
    "MAX_POINTER_CHARS",
    "MAX_QUOTE_CHARS",
    "MAX_REMAINING_CHARS",
    "MAX_REMAINING_ITEMS",
    "MAX_REPORT_SOURCE_REFS",
    "MAX_ROUTING_TEXT_CHARS",
    "MAX_SAFE_INTEGER",
    "PACKET_SCHEMA",
    "WALL_GRACE_MS",
]

PACKET_SCHEMA: Final[Literal["telic.evidence-packet/1"]] = "telic.evidence-packet/1"
"""The ``schema`` stamp carried by every packet."""

MAX_PACKET_BYTES: Final = 8192
"""Canonical JSON bytes of a whole packet; a larger packet is refused, never truncated."""

MAX_CLAIM_CHARS: Final = 280
"""Characters of the one falsifiable statement a packet makes."""

MAX_EVIDENCE_LINES: Final = 12
"""Evidence lines per packet."""

MAX_QUOTE_CHARS: Final = 240
"""Characters of the quote of one evidence line."""

MAX_LOCATOR_CHARS: Final = 160
"""Characters of the locator (line or byte range) of one evidence line."""

MAX_REMAINING_ITEMS: Final = 8
"""Items a partial packet lists as left undone."""

MAX_REMAINING_CHARS: Final = 160
"""Characters of one ``remaining`` item."""

MAX_POINTERS: Final = 8
"""``artifact://`` or ``repo://`` pointers in one handoff."""

MAX_POINTER_CHARS: Final = 512
"""Characters of one pointer or source ref."""

MAX_PACKET_REFS: Final = 8
"""Packet ids one handoff may pass on (a project choice; the contract leaves it open)."""

MAX_HANDOFF_BRIEF_CHARS: Final = 1000
"""Characters of a handoff brief: it points at things, it never pastes them."""

MAX_ROUTING_TEXT_CHARS: Final = 200
"""Characters of the human-readable why of a cast."""

MAX_EXPECTED_EVIDENCE: Final = 4
"""Evidence kinds a routing reason may expect (at least one)."""

MAX_ACCEPTANCE_ITEMS: Final = 6
"""Acceptance criteria a routing reason may list."""

MAX_ACCEPTANCE_CHARS: Final = 120
"""Characters of one acceptance criterion."""

MAX_REPORT_SOURCE_REFS: Final = 32
"""Source refs one report artifact may list."""

DIGEST_MAX_CHARS: Final = 6000
"""Characters of a whole digest, the "N older packets omitted" line included."""

DIGEST_CLAIM_CHARS: Final = 120
"""Characters of a claim as rendered in one digest line."""

WALL_GRACE_MS: Final = 60_000
"""Milliseconds past its ``maxWallMs`` a wall-capped child may still return its typed partial;
at the first instant past cap + grace the controller seals a cast nobody returned ``cancelled``
with ``stopReason`` ``wall_capped``."""

CITATION_HASH_CHARS: Final = 12
"""Leading hex characters of ``packetSha256`` that count as a citation."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Largest magnitude of a hashed integer: beyond it, IEEE-754 languages cannot hash identically."""
