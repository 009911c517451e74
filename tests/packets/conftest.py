"""Shared fixtures of the packet-contract tests and the ``covers`` marker.

``@pytest.mark.covers("row-id", ...)`` (or ``marks=pytest.mark.covers(...)`` on a parameter)
says which conformance-table rows a test pins down; ``test_conformance.py`` checks that every row
is cited and that no test cites a row the table does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from telic_packets import (
    Cast,
    CastBudget,
    Counters,
    Harness,
    Outcome,
    Packet,
    RoutingReason,
    StopReason,
    archive_verifier,
    seal_packet,
)

RETRY = "repo://src/retry.py"
TESTLOG = "artifact://run_01/ev_tests"
ARCHIVE = {
    RETRY: (
        "MAX_RETRIES = 5\n\ndef retry(fn):\n    for attempt in range(MAX_RETRIES):\n        fn()\n"
    ),
    TESTLOG: "tests: 12 passed, 1 failed (test_retry_gives_up) in 3.2s\n",
}
NOW = datetime(2026, 9, 21, 10, 0, tzinfo=UTC)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``covers`` marker (``--strict-markers`` is on)."""
    config.addinivalue_line("markers", "covers(*row_ids): conformance rows this test pins down")


@pytest.fixture
def archive() -> dict[str, str]:
    """Stored content by source ref: what quotes are verified against."""
    return dict(ARCHIVE)


@pytest.fixture
def routing() -> RoutingReason:
    """A routing reason that expects a file_state line."""
    return RoutingReason(
        need_code="locate",
        text="Find where the retry limit is defined",
        expected_evidence=["file_state"],
    )


@pytest.fixture
def cast(routing: RoutingReason) -> Cast:
    """An admitted cast with an 8-turn, 20000-token, 600 s budget."""
    return Cast(
        run_id="run_01",
        cast_id="cast_01",
        cast_type="explore",
        work_node_id="node_01",
        routing=routing,
        budget=CastBudget(max_turns=8, max_total_tokens=20000, max_wall_ms=600000),
    )


@pytest.fixture
def counters() -> Counters:
    """Counters well within the cast's budget."""
    return Counters(
        turns=3,
        tool_calls=4,
        input_tokens=5000,
        output_tokens=800,
        total_tokens=5800,
        wall_ms=42000,
        evidence_proposed=0,
        evidence_verified=0,
    )


@pytest.fixture
def line() -> dict[str, Any]:
    """A child's evidence line that verifies against ``ARCHIVE``."""
    return {"kind": "file_state", "source": RETRY, "locator": "L1", "quote": "MAX_RETRIES = 5"}


@pytest.fixture
def raw_return(line: dict[str, Any]) -> dict[str, Any]:
    """A child's well-formed raw return."""
    return {"claim": "The retry limit is MAX_RETRIES = 5", "evidence": [line], "completed": [0]}


Seal = Callable[..., Packet]


@pytest.fixture
def seal(cast: Cast, counters: Counters) -> Seal:
    """Return ``seal(returned, **overrides)`` sealing against ``ARCHIVE`` with fixed facts."""

    def run(
        returned: object,
        *,
        outcome: Outcome = "completed",
        stop_reason: StopReason | None = None,
        archive: dict[str, str] | None = None,
        **overrides: Any,
    ) -> Packet:
        facts: dict[str, Any] = {
            "cast": cast,
            "cast_open": True,
            "packet_id": "pk_0123abcd",
            "counters": counters,
            "verifier": archive_verifier(ARCHIVE if archive is None else archive),
            "now": NOW,
            "harness": Harness(name="telic-tests", version="1"),
        }
        facts.update(overrides)
        return seal_packet(returned, outcome=outcome, stop_reason=stop_reason, **facts)

    return run


@pytest.fixture
def packet(seal: Seal, raw_return: dict[str, Any]) -> Packet:
    """A verified, completed packet."""
    return seal(raw_return)
