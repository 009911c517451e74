"""Consumption: a mechanical check of whether the parent's next decision cites a packet."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from telic_packets import CiteKind, ConsumptionRecord, Packet, cite_kind, consumption

SHA = "sha256:" + "3f9a0c1d2e4b" + "5" * 52
URI = "artifact://run_01/pk_0123abcd"


def kind(text: str, refs: tuple[str, ...] = ()) -> CiteKind:
    return cite_kind(
        packet_id="pk_0123abcd", packet_sha256=SHA, packet_uri=URI, text=text, refs=refs
    )


@pytest.mark.parametrize(
    ("text", "refs", "expected"),
    [
        pytest.param(
            "Per pk_0123abcd the limit is 5.",
            (),
            "token",
            marks=pytest.mark.covers("consumption.token"),
        ),
        pytest.param("The limit is 5.", (URI,), "ref", marks=pytest.mark.covers("consumption.ref")),
        pytest.param(
            "See packet 3f9a0c1d2e4b.", (), "hash", marks=pytest.mark.covers("consumption.hash")
        ),
        pytest.param(
            "The limit is 5.",
            ("artifact://run_01/pk_9999abcd",),
            "none",
            marks=pytest.mark.covers("consumption.none"),
        ),
        pytest.param(
            "Per pk_0123abcde the limit is 5.",
            (),
            "none",
            marks=pytest.mark.covers("consumption.token-is-whole"),
        ),
        pytest.param("xpk_0123abcd", (), "none", id="token-glued-before"),
        pytest.param("(pk_0123abcd)", (), "token", id="token-in-brackets"),
        pytest.param(
            "See 3f9a0c1d2e4 for details.",
            (),
            "none",
            marks=pytest.mark.covers("consumption.hash-needs-12"),
        ),
        pytest.param(
            "pk_0123abcd and 3f9a0c1d2e4b",
            (URI,),
            "token",
            marks=pytest.mark.covers("consumption.token-before-ref"),
        ),
        pytest.param("3f9a0c1d2e4b", (URI,), "ref", id="ref-before-hash"),
        pytest.param(
            # A cast's decision text: its brief, then its packetRefs.
            "Check whether callers override the limit. pk_0123abcd",
            ("repo://src/retry.py", URI),
            "token",
            marks=pytest.mark.covers("consumption.cast-cites-by-packet-ref"),
        ),
        pytest.param(
            "Find where the backoff is set.",
            ("repo://src/backoff.py",),
            "none",
            marks=pytest.mark.covers("consumption.cast-without-citation"),
        ),
    ],
)
def test_cite_kind_checks_token_then_ref_then_hash(
    text: str, refs: tuple[str, ...], expected: CiteKind
) -> None:
    assert kind(text, refs) == expected


def test_consumption_builds_a_record_from_a_packet(packet: Packet) -> None:
    at = datetime(2026, 9, 21, 10, 5, tzinfo=UTC)
    record = consumption(
        packet,
        packet_uri="artifact://run_01/" + packet.packet_id,
        consumer_ref="artifact://run_01/dec_02",
        artifact_text="Decided per " + packet.packet_sha256[7:19],
        artifact_refs=[],
        at=at,
    )
    assert (record.cited, record.cite_kind) == (True, "hash")
    assert record.at == "2026-09-21T10:05:00.000Z"
    silent = consumption(
        packet,
        packet_uri="artifact://run_01/" + packet.packet_id,
        consumer_ref="artifact://run_01/dec_02",
        artifact_text="Decided.",
        artifact_refs=["artifact://run_01/other"],
        at=at,
    )
    assert (silent.cited, silent.cite_kind) == (False, "none")


RECORD = {
    "packetId": "pk_0123abcd",
    "consumerRef": "artifact://run_01/dec_02",
    "cited": True,
    "citeKind": "token",
    "at": "2026-09-21T10:05:00.000Z",
}


@pytest.mark.covers("schema.consumption.valid", "schema.consumption.cited-agrees-with-kind")
def test_cited_must_agree_with_cite_kind() -> None:
    ConsumptionRecord.from_wire(RECORD)
    with pytest.raises(ValidationError):
        ConsumptionRecord.from_wire({**RECORD, "citeKind": "none"})
    with pytest.raises(ValidationError):
        ConsumptionRecord.from_wire({**RECORD, "cited": False})
