"""Refusals carry exactly the contract's codes and a one-line, value-free message."""

from __future__ import annotations

import pytest

from telic_packets import (
    CAST_REFUSAL_CODES,
    RETURN_REFUSAL_CODES,
    CanonicalJsonError,
    CastRefusal,
    PacketContractError,
    PacketRefusal,
)


def test_the_codes_are_exactly_the_contracts() -> None:
    assert CAST_REFUSAL_CODES == (
        "missing_routing_reason",
        "unknown_need_code",
        "cast_type_disabled",
        "budget_missing",
        "budget_exceeds_ceiling",
        "children_limit",
        "depth_limit",
        "spawn_not_permitted",
        "node_not_executing",
    )
    assert RETURN_REFUSAL_CODES == (
        "not_a_packet",
        "packet_too_large",
        "claim_too_long",
        "too_many_evidence_lines",
        "quote_too_long",
        "unknown_field",
        "missing_partial_fields",
        "budget_exhausted_requires_partial",
        "cast_not_open",
    )


def test_every_error_descends_from_the_root() -> None:
    assert issubclass(PacketRefusal, PacketContractError)
    assert issubclass(CastRefusal, PacketRefusal)
    assert issubclass(CanonicalJsonError, PacketContractError)


def test_an_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="not a refusal code"):
        PacketRefusal("made_up", "x")  # type: ignore[arg-type]


def test_a_refusal_message_is_one_bounded_line() -> None:
    refusal = PacketRefusal("not_a_packet", "first\nsecond\t" + "x" * 1000)
    assert "\n" not in refusal.message
    assert len(refusal.message) == 400
    assert refusal.to_wire() == {"code": "not_a_packet", "message": refusal.message}
    assert str(refusal).startswith("not_a_packet: first second")
