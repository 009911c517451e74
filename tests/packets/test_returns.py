"""Parsing a child's raw return: typed, or refused with the most specific repair code."""

from __future__ import annotations

from typing import Any

import pytest

from telic_packets import ChildReturn, PacketRefusal, ReturnRefusalCode, parse_child_return

LINE = {"kind": "file_state", "source": "repo://src/retry.py", "locator": "L1", "quote": "x = 5"}


def returned(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"claim": "x is 5", "evidence": [dict(LINE)], "completed": [0]}
    base.update(changes)
    return base


def line(**changes: Any) -> dict[str, Any]:
    return {**LINE, **changes}


def refusal_code(raw: object) -> str:
    with pytest.raises(PacketRefusal) as caught:
        parse_child_return(raw)
    return caught.value.code


def test_a_well_formed_return_is_typed() -> None:
    parsed = parse_child_return(returned(remaining=["check callers"]))
    assert isinstance(parsed, ChildReturn)
    assert parsed.evidence[0].quote == "x = 5"
    assert parsed.completed == [0]
    assert parsed.remaining == ["check callers"]


def test_evidence_completed_and_remaining_default_to_empty() -> None:
    parsed = parse_child_return({"claim": ""})
    assert (parsed.evidence, parsed.completed, parsed.remaining) == ([], [], [])


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(returned(claim="a" * 280), marks=pytest.mark.covers("bounds.claim.at-limit")),
        pytest.param(
            returned(evidence=[line(locator=f"L{i}") for i in range(12)]),
            marks=pytest.mark.covers("bounds.evidence-lines.at-limit"),
        ),
        pytest.param(
            returned(evidence=[line(quote="q" * 240)]),
            marks=pytest.mark.covers("bounds.quote.at-limit"),
        ),
        pytest.param(
            returned(evidence=[line(locator="1" * 160)]),
            marks=pytest.mark.covers("bounds.locator.at-limit"),
        ),
        pytest.param(
            returned(remaining=[f"step {i}" for i in range(8)]),
            marks=pytest.mark.covers("bounds.remaining-items.at-limit"),
        ),
        pytest.param(
            returned(remaining=["r" * 160]),
            marks=pytest.mark.covers("bounds.remaining-chars.at-limit"),
        ),
    ],
)
def test_a_return_at_each_bound_is_accepted(raw: dict[str, Any]) -> None:
    parse_child_return(raw)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        pytest.param(
            "I think the limit is 5.",
            "not_a_packet",
            marks=pytest.mark.covers("refusal.return.prose"),
            id="prose",
        ),
        pytest.param(
            [returned()],
            "not_a_packet",
            marks=pytest.mark.covers("refusal.return.not-an-object"),
            id="list",
        ),
        pytest.param(None, "not_a_packet", id="null"),
        pytest.param(
            {"evidence": [LINE]},
            "not_a_packet",
            marks=pytest.mark.covers("refusal.return.claim-missing"),
            id="no-claim",
        ),
        pytest.param(returned(claim=5), "not_a_packet", id="claim-not-text"),
        pytest.param(returned(evidence="see file"), "not_a_packet", id="evidence-not-a-list"),
        pytest.param(returned(evidence=["x = 5"]), "not_a_packet", id="line-not-an-object"),
        pytest.param(
            returned(claim="a" * 281),
            "claim_too_long",
            marks=pytest.mark.covers("bounds.claim.over-limit", "refusal.return.claim-too-long"),
            id="claim-281",
        ),
        pytest.param(
            returned(evidence=[line(locator=f"L{i}") for i in range(13)]),
            "too_many_evidence_lines",
            marks=pytest.mark.covers(
                "bounds.evidence-lines.over-limit", "refusal.return.too-many-evidence-lines"
            ),
            id="13-lines",
        ),
        pytest.param(
            returned(evidence=[line(quote="q" * 241)]),
            "quote_too_long",
            marks=pytest.mark.covers("bounds.quote.over-limit", "refusal.return.quote-too-long"),
            id="quote-241",
        ),
        pytest.param(
            returned(evidence=[line(locator="1" * 161)]),
            "not_a_packet",
            marks=pytest.mark.covers("bounds.locator.over-limit"),
            id="locator-161",
        ),
        pytest.param(
            returned(remaining=[f"step {i}" for i in range(9)]),
            "not_a_packet",
            marks=pytest.mark.covers("bounds.remaining-items.over-limit"),
            id="remaining-9",
        ),
        pytest.param(
            returned(remaining=["r" * 161]),
            "not_a_packet",
            marks=pytest.mark.covers("bounds.remaining-chars.over-limit"),
            id="remaining-161",
        ),
        pytest.param(returned(remaining=["  "]), "not_a_packet", id="remaining-blank"),
        pytest.param(
            returned(notes="prose"),
            "unknown_field",
            marks=pytest.mark.covers("refusal.return.unknown-field"),
            id="unknown-top",
        ),
        pytest.param(
            returned(evidence=[line(confidence=9)]),
            "unknown_field",
            marks=pytest.mark.covers("refusal.return.unknown-field-in-line"),
            id="unknown-in-line",
        ),
        pytest.param(
            returned(claim="a" * 300, verdict="verified"),
            "unknown_field",
            marks=pytest.mark.covers("refusal.return.order-unknown-field-first"),
            id="unknown-before-claim",
        ),
        pytest.param(
            returned(claim="a" * 300, evidence=[line(quote="q" * 300)] * 13),
            "claim_too_long",
            marks=pytest.mark.covers("refusal.return.order-claim-before-lines"),
            id="claim-before-lines",
        ),
        pytest.param(
            returned(evidence=[line(quote="q" * 300)] * 13),
            "too_many_evidence_lines",
            id="lines-before-quote",
        ),
        pytest.param(
            returned(completed=[0, 3]),
            "not_a_packet",
            marks=pytest.mark.covers("refusal.return.completed-index-must-exist"),
            id="completed-out-of-range",
        ),
        pytest.param(returned(completed=[0, 0]), "not_a_packet", id="completed-repeated"),
        pytest.param(returned(completed=[True]), "not_a_packet", id="completed-boolean"),
        pytest.param(
            returned(evidence=[line(kind="opinion")]),
            "not_a_packet",
            marks=pytest.mark.covers("schema.evidence.kind-closed-set"),
            id="kind-outside-set",
        ),
        pytest.param(
            returned(evidence=[line(source="https://example.com/retry.py")]),
            "not_a_packet",
            marks=pytest.mark.covers("schema.evidence.source-scheme"),
            id="source-scheme",
        ),
        pytest.param(returned(evidence=[line(quote="")]), "not_a_packet", id="empty-quote"),
    ],
)
def test_a_faulty_return_is_refused_with_the_most_specific_code(
    raw: object, code: ReturnRefusalCode
) -> None:
    assert refusal_code(raw) == code


@pytest.mark.parametrize(
    ("field", "value", "in_line"),
    [
        pytest.param(
            "verified", True, True, marks=pytest.mark.covers("opacity.child-cannot-set-verified")
        ),
        pytest.param(
            "quoteSha256",
            "sha256:" + "0" * 64,
            True,
            marks=pytest.mark.covers("opacity.child-cannot-set-quotesha256"),
        ),
        pytest.param(
            "verdict",
            "verified",
            False,
            marks=pytest.mark.covers("opacity.child-cannot-set-verdict"),
        ),
        pytest.param(
            "outcome",
            "completed",
            False,
            marks=pytest.mark.covers("opacity.child-cannot-set-outcome"),
        ),
        pytest.param(
            "packetId",
            "pk_ffffffff",
            False,
            marks=pytest.mark.covers("opacity.child-cannot-set-packetid"),
        ),
        pytest.param(
            "counters", {}, False, marks=pytest.mark.covers("opacity.child-cannot-set-counters")
        ),
    ],
)
def test_a_child_cannot_set_a_controller_owned_field(
    field: str, value: object, in_line: bool
) -> None:
    raw = returned(evidence=[line(**{field: value})]) if in_line else returned(**{field: value})
    assert refusal_code(raw) == "unknown_field"


def test_a_refusal_message_does_not_echo_the_submitted_value() -> None:
    secret = "sk-live-" + "9" * 300
    with pytest.raises(PacketRefusal) as caught:
        parse_child_return(returned(claim=secret))
    assert "sk-live" not in caught.value.message


def test_a_very_long_unknown_key_is_cut_in_the_message() -> None:
    with pytest.raises(PacketRefusal) as caught:
        parse_child_return(returned(**{"k" * 500: 1}))
    assert len(caught.value.message) < 200
