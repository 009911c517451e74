"""Sealing a return: verification, verdict, partials, refusals, hashing and the byte bound."""

from __future__ import annotations

from typing import Any

import pytest

from telic_packets import (
    MAX_PACKET_BYTES,
    WALL_GRACE_MS,
    Cast,
    ChildReturn,
    Counters,
    Packet,
    PacketRefusal,
    ReturnRefusalCode,
    archive_verifier,
    canonical_json,
    canonical_sha256,
    parse_child_return,
    verify_packet_hash,
)

Seal = Any  # the conftest fixture's callable

TESTLINE = {"kind": "test_result", "source": "artifact://run_01/ev_tests", "quote": "12 passed"}


def code_of(seal: Seal, returned: object, **facts: Any) -> str:
    with pytest.raises(PacketRefusal) as caught:
        seal(returned, **facts)
    return caught.value.code


@pytest.mark.covers("verification.all-verified")
def test_a_verified_return_seals_into_a_verified_packet(
    seal: Seal, raw_return: dict[str, Any]
) -> None:
    packet = seal(raw_return)
    assert packet.verdict == "verified"
    assert packet.evidence[0].verified
    assert packet.counters.evidence_proposed == packet.counters.evidence_verified == 1
    assert packet.created_at == "2026-09-21T10:00:00.000Z"
    assert verify_packet_hash(packet)


def test_a_typed_child_return_seals_like_its_raw_form(
    seal: Seal, raw_return: dict[str, Any]
) -> None:
    assert seal(parse_child_return(raw_return)) == seal(raw_return)


@pytest.mark.parametrize(
    ("evidence", "verdict"),
    [
        pytest.param(
            [{"quote": "MAX_RETRIES = 5"}, {"quote": "MAX_RETRIES = 7"}],
            "partially_verified",
            marks=pytest.mark.covers("verification.quote-not-a-substring"),
        ),
        pytest.param(
            [{"quote": "max_retries = 5"}],
            "unverified",
            marks=pytest.mark.covers("verification.byte-exact"),
        ),
        pytest.param(
            [{"source": "repo://src/missing.py"}],
            "unverified",
            marks=pytest.mark.covers("verification.unknown-source"),
        ),
        pytest.param(
            [{"quote": "MAX_RETRIES = 9"}],
            "unverified",
            marks=pytest.mark.covers("opacity.verdict-ignores-child-claims"),
        ),
    ],
)
def test_the_verdict_follows_verification_alone(
    seal: Seal,
    raw_return: dict[str, Any],
    line: dict[str, Any],
    evidence: list[dict[str, Any]],
    verdict: str,
) -> None:
    raw = {**raw_return, "evidence": [{**line, **change} for change in evidence]}
    assert seal(raw).verdict == verdict


@pytest.mark.covers("verification.missing-expected-kind")
def test_a_missing_expected_kind_makes_the_verdict_partial(seal: Seal) -> None:
    packet = seal({"claim": "tests ran", "evidence": [TESTLINE]})
    assert packet.evidence[0].verified
    assert packet.verdict == "partially_verified"


@pytest.mark.covers("verification.none-verified")
def test_an_empty_archive_verifies_nothing(seal: Seal, raw_return: dict[str, Any]) -> None:
    packet = seal(raw_return, archive={})
    assert packet.verdict == "unverified"
    assert packet.counters.evidence_verified == 0


@pytest.mark.covers("verification.unicode-quote")
def test_a_unicode_quote_verifies_against_utf8_bytes(seal: Seal) -> None:
    source = "artifact://run_01/ev_notes"
    raw = {"claim": "c", "evidence": [{"kind": "file_state", "source": source, "quote": "≤ 5 s ✓"}]}
    packet = seal(raw, archive={source: "délai ≤ 5 s ✓ (mesuré)"})
    assert packet.verdict == "verified"


def test_archive_verifier_accepts_bytes_and_is_byte_exact() -> None:
    verify = archive_verifier({"repo://a": "é".encode(), "repo://b": "abc"})
    assert verify("repo://a", "é")
    assert not verify("repo://b", "ABC")
    assert not verify("repo://c", "a")


def test_a_verifier_that_returns_a_truthy_non_bool_does_not_verify(
    seal: Seal, raw_return: dict[str, Any]
) -> None:
    packet = seal(raw_return, verifier=lambda source, quote: "yes")
    assert packet.verdict == "unverified"


@pytest.mark.parametrize(
    ("outcome", "verdict"),
    [
        pytest.param(
            "failed", "unverified", marks=pytest.mark.covers("verification.failed-may-be-empty")
        ),
        pytest.param(
            "cancelled",
            "unverified",
            marks=pytest.mark.covers("verification.cancelled-may-be-empty"),
        ),
        pytest.param(
            "refused", "rejected", marks=pytest.mark.covers("verification.refused-is-rejected")
        ),
    ],
)
def test_quiet_outcomes_may_be_empty(seal: Seal, outcome: str, verdict: str) -> None:
    packet = seal({"claim": ""}, outcome=outcome)
    assert (packet.claim, packet.evidence, packet.verdict) == ("", [], verdict)


@pytest.mark.parametrize(
    ("stop_reason", "spent"),
    [
        pytest.param("turn_capped", {"turns": 8}, marks=pytest.mark.covers("partial.turn-capped")),
        pytest.param(
            "token_capped",
            {"total_tokens": 20000},
            marks=pytest.mark.covers("partial.token-capped"),
        ),
        pytest.param(
            "wall_capped", {"wall_ms": 600000}, marks=pytest.mark.covers("partial.wall-capped")
        ),
    ],
)
def test_exhaustion_seals_a_typed_partial(
    seal: Seal,
    counters: Counters,
    raw_return: dict[str, Any],
    stop_reason: str,
    spent: dict[str, int],
) -> None:
    raw = {**raw_return, "evidence": [*raw_return["evidence"], TESTLINE], "remaining": ["more"]}
    packet = seal(
        raw,
        outcome="partial",
        stop_reason=stop_reason,
        counters=counters.model_copy(update=spent),
    )
    assert packet.stop_reason == stop_reason
    assert packet.remaining == ["more"]
    assert packet.completed == [0]
    assert packet.to_wire()["remaining"] == ["more"]


@pytest.mark.parametrize(
    ("raw_changes", "facts", "code"),
    [
        pytest.param(
            {},
            {"outcome": "partial", "stop_reason": "turn_capped"},
            "missing_partial_fields",
            marks=pytest.mark.covers("refusal.return.missing-partial-fields"),
            id="partial-without-remaining",
        ),
        pytest.param(
            {"remaining": ["more"]},
            {"outcome": "partial"},
            "missing_partial_fields",
            marks=pytest.mark.covers("partial.stop-reason-required"),
            id="partial-without-stop-reason",
        ),
        pytest.param(
            {"remaining": ["more"], "completed": []},
            {"outcome": "partial", "stop_reason": "turn_capped"},
            "missing_partial_fields",
            marks=pytest.mark.covers("partial.completed-required"),
            id="partial-without-completed",
        ),
        pytest.param(
            {"remaining": ["more"], "completed": [], "evidence": []},
            {"outcome": "partial", "stop_reason": "turn_capped"},
            "missing_partial_fields",
            marks=pytest.mark.covers("partial.evidence-required"),
            id="partial-without-evidence",
        ),
        pytest.param(
            {"remaining": ["more"]},
            {},
            "not_a_packet",
            marks=pytest.mark.covers("partial.remaining-only-when-partial"),
            id="remaining-on-completed",
        ),
        pytest.param(
            {},
            {"stop_reason": "token_capped"},
            "budget_exhausted_requires_partial",
            marks=pytest.mark.covers("refusal.return.budget-exhausted-stop-reason"),
            id="completed-with-stop-reason",
        ),
        pytest.param(
            {"evidence": [], "completed": []},
            {},
            "not_a_packet",
            marks=pytest.mark.covers("refusal.return.completed-without-evidence"),
            id="completed-without-evidence",
        ),
        pytest.param({"claim": " "}, {}, "not_a_packet", id="completed-with-blank-claim"),
    ],
)
def test_a_return_that_breaks_an_outcome_rule_is_refused(
    seal: Seal,
    raw_return: dict[str, Any],
    raw_changes: dict[str, Any],
    facts: dict[str, Any],
    code: ReturnRefusalCode,
) -> None:
    assert code_of(seal, {**raw_return, **raw_changes}, **facts) == code


@pytest.mark.parametrize(
    ("spent", "refused"),
    [
        pytest.param(
            {"turns": 9}, True, marks=pytest.mark.covers("refusal.return.budget-exhausted-counters")
        ),
        pytest.param({"total_tokens": 20001}, True, id="tokens-over"),
        pytest.param({"wall_ms": 600001}, True, id="wall-over"),
        pytest.param(
            {"turns": 8, "total_tokens": 20000, "wall_ms": 600000},
            False,
            marks=pytest.mark.covers("refusal.return.budget-at-limit-completes"),
        ),
    ],
)
def test_counters_past_the_budget_require_a_partial(
    seal: Seal, counters: Counters, raw_return: dict[str, Any], spent: dict[str, int], refused: bool
) -> None:
    spend = counters.model_copy(update=spent)
    if refused:
        assert code_of(seal, raw_return, counters=spend) == "budget_exhausted_requires_partial"
    else:
        assert seal(raw_return, counters=spend).outcome == "completed"


@pytest.mark.covers("refusal.return.cast-not-open")
def test_a_closed_cast_refuses_before_reading_the_return(seal: Seal) -> None:
    assert code_of(seal, "prose", cast_open=False) == "cast_not_open"


def big_return(extra: int) -> dict[str, Any]:
    quotes = [f"{i:02d}" + "q" * 238 for i in range(12)]
    lines = [
        {"kind": "file_state", "source": "repo://big", "locator": "L" + "9" * 150, "quote": quote}
        for quote in quotes
    ]
    return {"claim": "c" * (1 + extra), "evidence": lines}


@pytest.mark.covers(
    "bounds.packet-bytes.at-limit",
    "bounds.packet-bytes.over-limit",
    "refusal.return.packet-too-large",
)
def test_a_packet_of_8192_bytes_seals_and_one_byte_more_is_refused(seal: Seal, cast: Cast) -> None:
    archive = {"repo://big": "\n".join(line["quote"] for line in big_return(0)["evidence"])}
    routing = cast.routing.model_copy(update={"text": "t" * 200, "acceptance": ["a" * 120] * 3})
    wide = cast.model_copy(update={"routing": routing})
    smallest = len(seal(big_return(0), archive=archive, cast=wide).canonical_json())
    extra = MAX_PACKET_BYTES - smallest
    assert 0 < extra < 280
    fitting = seal(big_return(extra), archive=archive, cast=wide)
    assert len(fitting.canonical_json()) == MAX_PACKET_BYTES
    with pytest.raises(PacketRefusal) as caught:
        seal(big_return(extra + 1), archive=archive, cast=wide)
    assert caught.value.code == "packet_too_large"


@pytest.mark.covers("hashing.packet-hash-verifies", "hashing.packet-sha-of-sealed")
def test_the_packet_hash_covers_everything_but_itself(packet: Packet) -> None:
    wire = packet.to_wire()
    claimed = wire.pop("packetSha256")
    assert canonical_sha256(wire) == claimed
    assert verify_packet_hash(packet.to_wire())


@pytest.mark.covers("hashing.tampered-packet-fails")
def test_a_tampered_packet_fails_verification(packet: Packet) -> None:
    assert not verify_packet_hash({**packet.to_wire(), "claim": "The retry limit is 7"})
    assert not verify_packet_hash({**packet.to_wire(), "packetSha256": None})
    assert not verify_packet_hash({**packet.to_wire(), "wallMs": 1.5})
    tampered = packet.model_copy(update={"claim": "The retry limit is 7"})
    assert not verify_packet_hash(tampered)


def test_sealing_is_deterministic(seal: Seal, raw_return: dict[str, Any]) -> None:
    first, second = seal(raw_return), seal(raw_return)
    assert first.packet_sha256 == second.packet_sha256
    assert canonical_json(first.to_wire()) == canonical_json(second.to_wire())


def test_a_naive_timestamp_is_a_caller_error(seal: Seal, raw_return: dict[str, Any]) -> None:
    from datetime import datetime

    with pytest.raises(ValueError, match="aware"):
        seal(raw_return, now=datetime(2026, 1, 1))


def test_a_cast_fixture_copies_into_the_packet(cast: Cast, packet: Packet) -> None:
    assert (packet.run_id, packet.cast_id, packet.work_node_id) == (
        cast.run_id,
        cast.cast_id,
        cast.work_node_id,
    )
    assert packet.routing == cast.routing
    assert packet.budget == cast.budget
    assert isinstance(parse_child_return({"claim": "x"}), ChildReturn)


def test_a_packet_hashes_and_sizes_from_one_canonical_form(
    seal: Seal, raw_return: dict[str, Any]
) -> None:
    packet = seal(raw_return)
    wire = packet.to_wire()
    assert packet.signed_size() == len(canonical_json(wire))
    del wire["packetSha256"]
    assert packet.unsigned_json() == canonical_json(wire)
    changed = packet.model_copy(update={"claim": "Something else entirely"})
    assert not verify_packet_hash(changed)  # a changed copy is hashed afresh, not by the cache
    assert verify_packet_hash(packet.model_copy())


@pytest.mark.covers("partial.untouched-wall-capped-sealed-cancelled")
def test_an_untouched_cast_past_its_wall_cap_and_grace_seals_cancelled_and_wall_capped(
    seal: Seal, counters: Counters
) -> None:
    # What the controller seals on its own when nobody returned: no claim, no evidence.
    past = counters.model_copy(update={"wall_ms": 600_000 + WALL_GRACE_MS + 2})
    packet = seal({"claim": ""}, outcome="cancelled", stop_reason="wall_capped", counters=past)
    assert (packet.outcome, packet.stop_reason, packet.verdict) == (
        "cancelled",
        "wall_capped",
        "unverified",
    )
    assert (packet.claim, packet.evidence, packet.counters.wall_ms) == ("", [], 660_002)
    assert verify_packet_hash(packet.to_wire())


@pytest.mark.covers("partial.untouched-wall-capped-not-completed")
def test_an_untouched_wall_capped_cast_is_never_sealed_completed(
    seal: Seal, counters: Counters, raw_return: dict[str, Any]
) -> None:
    past = counters.model_copy(update={"wall_ms": 600_000 + WALL_GRACE_MS + 2})
    refused = code_of(seal, raw_return, stop_reason="wall_capped", counters=past)
    assert refused == "budget_exhausted_requires_partial"
