"""The bounds are the contract's numbers."""

from __future__ import annotations

import telic_packets as tp


def test_the_bounds_match_the_contract_table() -> None:
    assert tp.PACKET_SCHEMA == "telic.evidence-packet/1"
    assert (tp.MAX_PACKET_BYTES, tp.MAX_CLAIM_CHARS, tp.MAX_EVIDENCE_LINES) == (8192, 280, 12)
    assert (tp.MAX_QUOTE_CHARS, tp.MAX_LOCATOR_CHARS) == (240, 160)
    assert (tp.MAX_REMAINING_ITEMS, tp.MAX_REMAINING_CHARS) == (8, 160)
    assert (tp.MAX_POINTERS, tp.MAX_POINTER_CHARS) == (8, 512)
    assert (tp.MAX_HANDOFF_BRIEF_CHARS, tp.MAX_ROUTING_TEXT_CHARS) == (1000, 200)
    assert (tp.MAX_EXPECTED_EVIDENCE, tp.MAX_ACCEPTANCE_ITEMS, tp.MAX_ACCEPTANCE_CHARS) == (
        4,
        6,
        120,
    )
    assert (tp.DIGEST_MAX_CHARS, tp.DIGEST_CLAIM_CHARS) == (6000, 120)
    assert (tp.MAX_REPORT_SOURCE_REFS, tp.CITATION_HASH_CHARS) == (32, 12)
    assert tp.MAX_SAFE_INTEGER == 9007199254740991
    assert tp.WALL_GRACE_MS == 60_000


def test_the_packet_schema_literal_is_the_constant() -> None:
    field = tp.Packet.model_fields["schema_id"]
    assert field.alias == "schema"
    assert field.annotation.__args__ == (tp.PACKET_SCHEMA,)  # type: ignore[union-attr]
