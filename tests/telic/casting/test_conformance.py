"""The packet conformance table's seal rows, evaluated through the casting layer.

``telic_packets`` passes every row by calling ``seal_packet`` directly. Here the same rows go
through what the run actor uses — an ``OpenCast`` holding the row's counters, ``seal_return``
deciding the outcome and stop reason from those counters, ``seal_unreturned`` for a child that
never came back — and must give the row's verdict, refusal code and packet hash. Rows whose
outcome the casting layer never produces itself (``failed``, ``refused``) or that need a closed
cast are listed as not applicable.
"""

from __future__ import annotations

from typing import Any

import pytest

from telic.casting import OpenCast, parse_time, seal_return, seal_unreturned
from telic.protocol._types import PermissionSet
from telic_packets import Cast, Harness, PacketRefusal, archive_verifier
from telic_packets.conformance import check_row, load_table

SEAL_ROWS = [row for row in load_table()["rows"] if row["input"]["op"] == "seal"]


def _open_cast(spec: dict[str, Any]) -> OpenCast:
    counters = spec["counters"]
    open_cast = OpenCast(
        cast=Cast.from_wire(spec["cast"]),
        permissions=PermissionSet.empty(),
        depth=1,
        plan_uri="artifact://run_01/plan",
        started_at=0.0,
    )
    open_cast.turns = counters["turns"]
    open_cast.tool_calls = counters["toolCalls"]
    open_cast.input_tokens = counters["inputTokens"]
    open_cast.output_tokens = counters["outputTokens"]
    open_cast.stop_reason = spec["stopReason"]  # the supervisor marked the cast capped
    return open_cast


NOT_EXPRESSIBLE = {
    "refusal.return.missing-partial-fields": (
        "a capped child's return without remaining items is answered with "
        "budget_exhausted_requires_partial (its outcome cannot be partial without them)"
    ),
    "partial.stop-reason-required": (
        "below every cap the casting layer seals completed, so remaining items are not_a_packet"
    ),
}


def _applicable(row: dict[str, Any]) -> str | None:
    spec = row["input"]
    if row["id"] in NOT_EXPRESSIBLE:
        return NOT_EXPRESSIBLE[row["id"]]
    counters = spec["counters"]
    if not spec["castOpen"]:
        return "a closed cast never reaches sealing (the run actor answers cast_not_open)"
    if spec["outcome"] in ("failed", "refused"):
        return f"the casting layer never seals a {spec['outcome']} outcome itself"
    if counters["totalTokens"] != counters["inputTokens"] + counters["outputTokens"]:
        return "the casting layer always counts totalTokens as input plus output"
    return None


def _evaluate(row: dict[str, Any]) -> dict[str, Any]:
    spec = row["input"]
    open_cast = _open_cast(spec)
    wall = spec["counters"]["wallMs"] / 1000
    common = {
        "now": parse_time(spec["now"]),
        "clock": lambda: wall,
        "packet_id": spec["packetId"],
        "harness": Harness.from_wire(spec["harness"]),
    }
    try:
        if spec["outcome"] == "cancelled":
            packet = seal_unreturned(open_cast, **common)
        else:
            packet = seal_return(
                open_cast, spec["returned"], verifier=archive_verifier(spec["archive"]), **common
            )
    except PacketRefusal as refusal:
        return {"valid": False, "errorCode": refusal.code}
    return {
        "valid": True,
        "verdict": packet.verdict,
        "canonicalSha256": packet.packet_sha256,
        "outcome": packet.outcome,
        "stopReason": packet.stop_reason,
    }


APPLICABLE = [row for row in SEAL_ROWS if _applicable(row) is None]
"""Rows the casting layer can express; the others pass in telic_packets' own conformance run."""


@pytest.mark.parametrize("row", APPLICABLE, ids=[row["id"] for row in APPLICABLE])
def test_a_seal_row_gives_the_same_result_through_the_casting_layer(row: dict[str, Any]) -> None:
    actual = _evaluate(row)
    expected = row["expected"]
    assert {key: actual.get(key) for key in expected} == expected
    if expected.get("valid"):
        assert actual["outcome"] == row["input"]["outcome"]
        assert actual["stopReason"] == row["input"]["stopReason"]


def test_most_seal_rows_are_exercised_through_the_casting_layer() -> None:
    assert len(APPLICABLE) >= len(SEAL_ROWS) * 2 // 3, [row["id"] for row in APPLICABLE]


@pytest.mark.parametrize(
    "row",
    [row for row in SEAL_ROWS if _applicable(row) is not None],
    ids=[row["id"] for row in SEAL_ROWS if _applicable(row) is not None],
)
def test_every_row_left_out_of_the_casting_run_is_checked_by_the_packet_runner(
    row: dict[str, Any],
) -> None:
    assert check_row(row).passed, row["id"]
