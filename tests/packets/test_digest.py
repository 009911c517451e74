"""The digest: ordered, one line per packet, bounded to 6000 characters."""

from __future__ import annotations

import re
from typing import Any

import pytest

from telic_packets import (
    DIGEST_MAX_CHARS,
    ConsumptionRecord,
    DigestItem,
    DigestMark,
    Packet,
    digest_line,
    digest_view,
    render_digest,
)

# The contract's line, exactly: nothing after the closing parenthesis.
CONTRACT_LINE = re.compile(
    r"^\[[a-z]+/[a-z_]+\] \[pk_[0-9a-z]{8,26}\] [a-z][a-z0-9_.-]*: .+ \([a-z_]+; \d+ tokens\)$"
)


def item(number: int, claim: str = "c", **changes: Any) -> DigestItem:
    fields: dict[str, Any] = {
        "packetId": f"pk_{number:08d}",
        "castType": "explore",
        "outcome": "completed",
        "verdict": "verified",
        "claim": claim,
        "needCode": "locate",
        "totalTokens": 1000,
        "createdAt": f"2026-09-21T10:{number // 60 % 60:02d}:{number % 60:02d}.000Z",
        "consumed": True,
    }
    fields.update(changes)
    return DigestItem.from_wire(fields)


@pytest.mark.covers("consumption.digest-line-format")
def test_a_digest_line_has_the_contract_shape() -> None:
    line = digest_line(
        item(
            7,
            "Retry limit is 5\nin\tsrc/retry.py",
            outcome="partial",
            verdict="partially_verified",
            totalTokens=5800,
        )
    )
    assert line == (
        "[partial/partially_verified] [pk_00000007] explore: "
        "Retry limit is 5 in src/retry.py (locate; 5800 tokens)"
    )


@pytest.mark.covers("bounds.digest-claim.at-limit", "bounds.digest-claim.over-limit")
def test_a_claim_is_cut_to_120_characters() -> None:
    assert "x" * 120 + " (" in digest_line(item(1, "x" * 120))
    assert "x" * 119 + "… (" in digest_line(item(1, "x" * 121))
    assert "x" * 120 not in digest_line(item(1, "x" * 121))


@pytest.mark.covers("consumption.digest-empty-claim")
def test_an_empty_claim_renders_as_no_claim() -> None:
    assert ": (no claim) (" in digest_line(item(8, "", outcome="failed", verdict="unverified"))


@pytest.mark.covers("consumption.digest-order")
def test_the_digest_orders_unconsumed_partial_unverified_then_the_rest_newest_first() -> None:
    items = [
        item(1, "rest older", createdAt="2026-09-21T09:00:00.000Z"),
        item(2, "rest newer", createdAt="2026-09-21T09:30:00.000Z"),
        item(3, "unverified", verdict="unverified", createdAt="2026-09-21T09:40:00.000Z"),
        item(4, "partial", outcome="partial", createdAt="2026-09-21T08:00:00.000Z"),
        item(5, "unconsumed older", consumed=False, createdAt="2026-09-21T07:00:00.000Z"),
        item(6, "unconsumed newer", consumed=False, createdAt="2026-09-21T09:50:00+02:00"),
    ]
    claims = [line.split(": ", 1)[1].split(" (")[0] for line in render_digest(items).split("\n")]
    assert claims == [
        "unconsumed newer",
        "unconsumed older",
        "partial",
        "unverified",
        "rest newer",
        "rest older",
    ]


def test_ties_in_time_are_broken_by_packet_id() -> None:
    same = "2026-09-21T10:00:00.000Z"
    text = render_digest([item(2, createdAt=same), item(1, createdAt=same)])
    assert text.index("pk_00000001") < text.index("pk_00000002")


@pytest.mark.covers("consumption.digest-is-empty-without-packets")
def test_no_packets_render_the_empty_digest() -> None:
    assert render_digest([]) == ""


@pytest.mark.covers("bounds.digest-chars.at-limit", "bounds.digest-chars.over-limit")
def test_a_digest_is_cut_with_an_omitted_line_and_stays_within_6000() -> None:
    items = [item(number, "d" * 100) for number in range(200)]
    text = render_digest(items)
    lines = text.split("\n")
    assert len(text) <= DIGEST_MAX_CHARS
    kept = len(lines) - 1
    assert lines[-1] == f"{200 - kept} older packets omitted"
    whole = render_digest(items[:kept])
    assert "omitted" not in whole


@pytest.mark.parametrize("claim_length", range(100, 121))
def test_the_cut_keeps_as_many_lines_as_fit(claim_length: int) -> None:
    items = [item(number, "d" * claim_length) for number in range(60)]
    text = render_digest(items)
    lines = text.split("\n")
    assert len(text) <= DIGEST_MAX_CHARS
    body = lines[:-1]
    # one more line would not have fit next to the footer
    next_line = digest_line(sorted(items, key=lambda i: i.created_at, reverse=True)[len(body)])
    footer = f"{60 - len(body) - 1} older packets omitted"
    assert len("\n".join([*body, next_line, footer])) > DIGEST_MAX_CHARS


def test_exactly_6000_characters_are_rendered_whole() -> None:
    items = [item(number, "d" * 100) for number in range(40)]
    while len("\n".join(digest_line(i) for i in items)) > DIGEST_MAX_CHARS:
        items.pop()
    shortfall = DIGEST_MAX_CHARS - len("\n".join(digest_line(i) for i in items))
    items[0] = item(0, "d" * (100 + min(shortfall, 20)))
    shortfall -= min(shortfall, 20)
    index = 1
    while shortfall:
        grow = min(shortfall, 20)
        items[index] = item(index, "d" * (100 + grow))
        shortfall -= grow
        index += 1
    text = render_digest(items)
    assert len(text) == DIGEST_MAX_CHARS
    assert "omitted" not in text


def test_packets_and_consumption_records_render_directly(packet: Packet) -> None:
    record = ConsumptionRecord(
        packet_id=packet.packet_id,
        consumer_ref="artifact://run_01/dec_02",
        cited=True,
        cite_kind="token",
        at="2026-09-21T10:05:00.000Z",
    )
    assert render_digest([(packet, record)]) == digest_line(DigestItem.of(packet, record))
    assert DigestItem.of(packet, None).consumed is False
    assert DigestItem.of(packet, record).consumed is True


@pytest.mark.parametrize(
    ("changes", "marker"),
    [
        (
            {"consumed": True, "consumerRef": "artifact://r/wr-1", "citeKind": "token"},
            " — consumed by artifact://r/wr-1 (token)",
        ),
        (
            {"consumed": False, "consumerRef": "artifact://r/wr-1", "citeKind": "none"},
            " — unconsumed: not cited by artifact://r/wr-1",
        ),
        ({"consumed": False}, " — unconsumed: no parent decision yet"),
    ],
)
def test_a_marked_line_labels_tokens_self_reported_and_says_where_it_was_consumed(
    changes: dict[str, Any], marker: str
) -> None:
    line = digest_line(item(3, "Limit is 5", **changes), marked=True)
    assert line == (
        "[completed/verified] [pk_00000003] explore: Limit is 5 "
        "(locate; 1000 tokens self-reported)" + marker
    )


def test_a_marked_digest_keeps_the_order_and_the_bound() -> None:
    items = [item(n, "x" * 120, consumed=n % 2 == 0) for n in range(80)]
    plain, marked = render_digest(items), render_digest(items, marked=True)
    assert len(marked) <= DIGEST_MAX_CHARS
    assert marked.splitlines()[-1].endswith("older packets omitted")
    first = [line.split("] [")[1][:11] for line in plain.splitlines()[:20]]
    assert [line.split("] [")[1][:11] for line in marked.splitlines()[:20]] == first
    assert all("self-reported" in line for line in marked.splitlines()[:-1])


def test_a_long_consumer_ref_is_cut_in_the_marker() -> None:
    ref = "artifact://r/" + "a" * 300
    line = digest_line(item(1, consumed=True, consumerRef=ref, citeKind="ref"), marked=True)
    assert line.endswith("a" * (120 - 14) + "… (ref)")


def test_observed_spend_stands_beside_the_self_reported_tokens_on_marked_lines_only(
    packet: Packet,
) -> None:
    observed = {packet.cast_id: (3, 4)}
    marked = render_digest([(packet, None)], marked=True, observed=observed)
    assert (
        f"{packet.counters.total_tokens} tokens self-reported; 3 turns, 4 tool calls observed)"
        in marked
    )
    # The contract's line is unchanged, and a packet whose child was not observed says nothing.
    assert render_digest([(packet, None)], observed=observed) == render_digest([(packet, None)])
    assert "observed" not in render_digest(
        [(packet, None)], marked=True, observed={"other": (1, 1)}
    )


@pytest.mark.parametrize(
    ("changes", "mark"),
    [
        (
            {"consumed": True, "consumerRef": "artifact://r/wr-1", "citeKind": "token"},
            {"consumption": "consumed", "consumerRef": "artifact://r/wr-1", "citeKind": "token"},
        ),
        (
            {"consumed": False, "consumerRef": "artifact://r/wr-1", "citeKind": "none"},
            {"consumption": "not_cited", "consumerRef": "artifact://r/wr-1", "citeKind": "none"},
        ),
        ({"consumed": False}, {"consumption": "no_decision_yet"}),
        (
            {"consumed": False, "observedTurns": 3, "observedToolCalls": 4},
            {"consumption": "no_decision_yet", "observedTurns": 3, "observedToolCalls": 4},
        ),
    ],
)
def test_a_view_keeps_the_contract_s_lines_and_carries_each_marker_as_data(
    changes: dict[str, Any], mark: dict[str, Any]
) -> None:
    one = item(3, "Limit is 5", **changes)
    view = digest_view([one])
    assert view.text == render_digest([one]) == digest_line(one)
    assert CONTRACT_LINE.match(view.text)
    assert view.marks == [DigestMark.from_wire({"packetId": "pk_00000003", **mark})]
    assert view.marks[0].to_wire()["tokensSelfReported"] is True
    assert view.omitted == 0


def test_a_view_of_a_cut_digest_marks_exactly_the_lines_it_kept() -> None:
    items = [item(n, "x" * 120, consumed=n % 3 == 0) for n in range(80)]
    view = digest_view(items)
    assert view.text == render_digest(items)
    lines = view.text.split("\n")
    assert lines[-1] == f"{view.omitted} older packets omitted"
    assert view.omitted > 0
    assert len(view.marks) + view.omitted == 80
    assert [m.packet_id for m in view.marks] == [line.split("] [")[1][:11] for line in lines[:-1]]
    assert all(CONTRACT_LINE.match(line) for line in lines[:-1])


def test_a_view_of_no_packets_is_empty() -> None:
    view = digest_view([])
    assert (view.text, view.marks, view.omitted) == ("", [], 0)


def test_a_view_reads_observed_spend_by_cast_id(packet: Packet) -> None:
    view = digest_view([(packet, None)], observed={packet.cast_id: (2, 5)})
    assert view.text == render_digest([(packet, None)])
    assert (view.marks[0].observed_turns, view.marks[0].observed_tool_calls) == (2, 5)
