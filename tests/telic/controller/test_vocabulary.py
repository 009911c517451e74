"""One vocabulary: every protocol phase and run status has exactly one label for people."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from telic.controller import PHASES
from telic.controller._vocabulary import (
    PHASE_LABELS,
    STATUS_LABELS,
    event_summary,
    human_time,
    phase_label,
    protocol_phase,
    run_phase,
    status_label,
)
from telic.protocol import PHASES as PROTOCOL_PHASES, InternalRunStatus, RunStatus


def test_every_protocol_phase_has_one_label_and_nothing_else_does() -> None:
    assert set(PHASE_LABELS) == set(PROTOCOL_PHASES)
    assert len(set(PHASE_LABELS.values())) == len(PHASE_LABELS), "no two phases look alike"


@pytest.mark.parametrize(
    ("internal", "protocol"),
    [
        ("context_grounding", "context_discovery"),
        ("agent_2_revise", "agent_2_revision"),
        ("agent_3_review", "agent_3_quality_review"),
        ("agent_5_audit", "agent_5_release_audit"),
        ("agent_5_report", "user_report"),
        ("agent_4_execute", "agent_4_execute"),
        ("user_report", "user_report"),
    ],
)
def test_an_internal_phase_is_shown_by_its_protocol_name(internal: str, protocol: str) -> None:
    assert protocol_phase(internal) == protocol


def test_every_run_status_on_the_wire_and_in_the_ledger_has_a_label() -> None:
    assert set(STATUS_LABELS) == set(get_args(RunStatus)) | set(get_args(InternalRunStatus))


def test_an_internal_phase_is_labelled_by_its_protocol_name() -> None:
    for internal, spec in PHASES.items():
        assert phase_label(internal) == PHASE_LABELS[spec.protocol]
    assert phase_label("agent_5_report") == "Writing the report"


@pytest.mark.parametrize(
    ("phase", "status", "shown"),
    [
        ("agent_5_report", "completed", "completed"),
        ("agent_3_review", "blocked", "blocked"),
        ("agent_1_frame", "awaiting_clarification", "awaiting_clarification"),
        ("agent_2_revise", "running", "agent_2_revision"),
        ("user_report", "active", "user_report"),
    ],
)
def test_a_run_is_where_its_status_or_its_protocol_phase_says(
    phase: str, status: str, shown: str
) -> None:
    assert run_phase(phase, status) == shown


def test_unknown_names_are_shown_as_they_are() -> None:
    assert phase_label("some_future_phase") == "some_future_phase"
    assert status_label("some_future_status") == "some_future_status"


def test_times_are_shown_to_the_second_in_utc() -> None:
    assert human_time("2026-12-01T19:48:42.417Z") == "2026-12-01 19:48:42 UTC"
    assert human_time("2026-12-01T21:48:42+02:00") == "2026-12-01 19:48:42 UTC"
    assert human_time("not a time") == "not a time"


def test_a_summary_that_only_repeats_an_event_name_says_what_was_produced() -> None:
    ref = "artifact://run-1/frame-1"
    assert event_summary("phase_submitted", "phase_submitted", [ref]) == "accepted frame-1"
    assert (
        event_summary("artifact_recorded", "evidence_captured", ["artifact://run-1/ev-1"])
        == "captured evidence ev-1"
    )
    assert event_summary("run_started", "Run started in fix_only") == "Run started in fix_only"


def test_a_packet_consumption_record_is_summarised_not_printed_as_json() -> None:
    record = (
        '{"at":"2026-12-01T19:48:42.156Z","citeKind":"token","cited":true,'
        '"consumerRef":"artifact://run-1/result-01","packetId":"pk_1"}'
    )
    assert (
        event_summary("artifact_recorded", record, ["artifact://run-1/pk_1"])
        == "packet pk_1 cited by result-01 (token)"
    )


def test_the_cli_document_lists_exactly_the_labels_defined_here() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")[2].strip()
        for line in doc.splitlines()
        if line.startswith("| `") and line.count("|") == 3
    }
    for table in (PHASE_LABELS, STATUS_LABELS):
        for name, label in table.items():
            assert rows.get(name) == label, f"docs/cli.md shows {name} as {rows.get(name)!r}"
