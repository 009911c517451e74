"""The packet model re-checks every rule of the contract's packet table."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic_packets import (
    PACKET_SCHEMA,
    ConsumptionRecord,
    Counters,
    EvidenceKind,
    EvidenceLine,
    Packet,
    derive_verdict,
    sha256_text,
)


def rewired(packet: Packet, **changes: Any) -> dict[str, Any]:
    wire = packet.to_wire()
    wire.update(changes)
    return wire


def line(*, kind: str = "file_state", verified: bool = True) -> EvidenceLine:
    return EvidenceLine.model_validate(
        {
            "kind": kind,
            "source": "repo://a.py",
            "quote": "q",
            "quoteSha256": sha256_text("q"),
            "verified": verified,
        }
    )


@pytest.mark.covers("schema.packet.sealed-is-valid")
def test_a_sealed_packet_round_trips_through_the_wire(packet: Packet) -> None:
    again = Packet.from_wire(packet.to_wire())
    assert again == packet
    assert packet.to_wire()["schema"] == PACKET_SCHEMA
    assert "stopReason" not in packet.to_wire()
    assert "remaining" not in packet.to_wire()


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param(
            {"schema": "telic.evidence-packet/2"},
            marks=pytest.mark.covers("schema.packet.stamp-is-const"),
        ),
        pytest.param(
            {"packetId": "pk_0123ABCD"}, marks=pytest.mark.covers("schema.packet.id-lowercase-only")
        ),
        pytest.param(
            {"verdict": "unverified"}, marks=pytest.mark.covers("schema.packet.verdict-is-derived")
        ),
        pytest.param(
            {"outcome": "done"}, marks=pytest.mark.covers("schema.packet.outcome-closed-set")
        ),
        pytest.param(
            {"createdAt": "2026-09-21 10:00:00"},
            marks=pytest.mark.covers("schema.packet.created-at-rfc3339"),
        ),
        pytest.param({"createdAt": "2026-02-30T10:00:00Z"}, id="impossible-date"),
        pytest.param({"remaining": ["more"]}, id="remaining-on-completed"),
        pytest.param({"stopReason": "turn_capped"}, id="stop-reason-on-completed"),
        pytest.param({"completed": [1]}, id="completed-index-without-line"),
        pytest.param({"claim": " "}, id="blank-claim-on-completed"),
        pytest.param({"evidence": []}, id="no-evidence-on-completed"),
        pytest.param({"packetSha256": "sha256:XYZ"}, id="malformed-hash"),
    ],
)
def test_a_packet_breaking_a_rule_is_invalid(packet: Packet, changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Packet.from_wire(rewired(packet, **changes))


@pytest.mark.covers("schema.packet.stamp-required")
def test_the_schema_stamp_is_required(packet: Packet) -> None:
    wire = packet.to_wire()
    del wire["schema"]
    with pytest.raises(ValidationError):
        Packet.from_wire(wire)


@pytest.mark.covers("schema.packet.unknown-field-rejected", "schema.packet.snake-case-rejected")
def test_unknown_and_snake_case_keys_are_rejected(packet: Packet) -> None:
    for wire in (
        rewired(packet, summary="prose"),
        {("packet_id" if k == "packetId" else k): v for k, v in packet.to_wire().items()},
    ):
        with pytest.raises(ValidationError) as caught:
            Packet.from_wire(wire)
        assert "extra_forbidden" in {error["type"] for error in caught.value.errors()}


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"turns": True}, marks=pytest.mark.covers("schema.counters.boolean-rejected")),
        pytest.param({"wallMs": -1}, marks=pytest.mark.covers("schema.counters.negative-rejected")),
        pytest.param({"turns": "3"}, marks=pytest.mark.covers("schema.counters.string-rejected")),
        pytest.param({"turns": 3.0}, id="float"),
        pytest.param({"evidenceVerified": 5}, id="verified-over-proposed"),
    ],
)
def test_counters_are_non_negative_integers(packet: Packet, changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Counters.from_wire({**packet.counters.to_wire(), **changes})


@pytest.mark.covers("schema.counters.proposed-matches-lines")
def test_evidence_counters_must_match_the_lines(packet: Packet) -> None:
    counters = {**packet.counters.to_wire(), "evidenceProposed": 2}
    with pytest.raises(ValidationError, match="evidenceProposed"):
        Packet.from_wire(rewired(packet, counters=counters))


@pytest.mark.covers("schema.evidence.quote-sha-matches")
def test_a_line_whose_quote_hash_does_not_match_is_invalid() -> None:
    with pytest.raises(ValidationError, match="quoteSha256"):
        EvidenceLine.model_validate(
            {
                "kind": "failure",
                "source": "repo://a.py",
                "quote": "q",
                "quoteSha256": "sha256:" + "0" * 64,
                "verified": False,
            }
        )


@pytest.mark.parametrize(
    ("packet_id", "valid"),
    [
        pytest.param("pk_" + "0" * 8, True, marks=pytest.mark.covers("bounds.packet-id.shortest")),
        pytest.param(
            "pk_" + "0" * 7, False, marks=pytest.mark.covers("bounds.packet-id.too-short")
        ),
        pytest.param("pk_" + "z" * 26, True, marks=pytest.mark.covers("bounds.packet-id.longest")),
        pytest.param(
            "pk_" + "z" * 27, False, marks=pytest.mark.covers("bounds.packet-id.too-long")
        ),
        pytest.param("pk-" + "0" * 8, False, id="wrong-prefix"),
    ],
)
def test_packet_id_bounds(packet_id: str, valid: bool) -> None:
    wire = {
        "packetId": packet_id,
        "consumerRef": "artifact://run_01/dec_02",
        "cited": False,
        "citeKind": "none",
        "at": "2026-09-21T10:05:00.000Z",
    }
    if valid:
        ConsumptionRecord.from_wire(wire)
    else:
        with pytest.raises(ValidationError):
            ConsumptionRecord.from_wire(wire)


def test_verdict_derivation_follows_the_contract() -> None:
    expected: list[EvidenceKind] = ["file_state"]
    assert derive_verdict("completed", [line(), line()], expected) == "verified"
    assert (
        derive_verdict("completed", [line(), line(verified=False)], expected)
        == "partially_verified"
    )
    assert derive_verdict("completed", [line(kind="failure")], expected) == "partially_verified"
    assert derive_verdict("completed", [line(verified=False)], expected) == "unverified"
    assert derive_verdict("failed", [], expected) == "unverified"
    assert derive_verdict("refused", [line()], expected) == "rejected"


def test_a_packet_over_the_byte_bound_cannot_exist(packet: Packet) -> None:
    wire = rewired(packet, runId="r" * 128)
    quote = "q" * 240
    big_line = {
        **packet.evidence[0].to_wire(),
        "locator": "9" * 160,
        "quote": quote,
        "quoteSha256": sha256_text(quote),
    }
    wire["evidence"] = [big_line] * 12
    wire["completed"] = []
    wire["counters"] = {**packet.counters.to_wire(), "evidenceProposed": 12, "evidenceVerified": 12}
    wire["claim"] = "c" * 280
    wire["routing"] = {**wire["routing"], "text": "t" * 200, "acceptance": ["a" * 120] * 6}
    with pytest.raises(ValidationError, match="8192"):
        Packet.from_wire(wire)


@pytest.mark.covers("partial.packet-needs-stop-reason")
def test_a_stored_partial_without_stop_reason_is_invalid(packet: Packet) -> None:
    partial = rewired(packet, outcome="partial", stopReason="turn_capped", remaining=["more"])
    partial["completed"] = [0]
    Packet.from_wire(partial)
    del partial["stopReason"]
    with pytest.raises(ValidationError, match="stopReason"):
        Packet.from_wire(partial)
