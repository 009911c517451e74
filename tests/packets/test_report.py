"""Report artifacts: every status has its own fields, and a viewer states it explicitly."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic_packets import ReportArtifact

GENERATOR = {"name": "telic-reports", "version": "0.1.0"}
PRESENT: dict[str, Any] = {
    "kind": "loop_report",
    "status": "present",
    "path": "reports/run_01/loop.md",
    "sha256": "sha256:" + "ab" * 32,
    "generator": GENERATOR,
    "generatedAt": "2026-09-21T11:00:00Z",
    "sourceRefs": ["artifact://run_01/ev_tests"],
    "covers": "run run_01",
}
ABSENT: dict[str, Any] = {
    "kind": "loop_report",
    "status": "absent",
    "generator": GENERATOR,
    "covers": "run run_01",
}
STALE = {**PRESENT, "status": "stale", "staleReason": "the run gained 3 packets"}
INVALID = {**PRESENT, "status": "invalid"}
del INVALID["sha256"]


@pytest.mark.parametrize(
    ("value", "banner"),
    [
        pytest.param(PRESENT, "", marks=pytest.mark.covers("report.present")),
        pytest.param(ABSENT, "not generated yet", marks=pytest.mark.covers("report.absent")),
        pytest.param(
            STALE, "stale: the run gained 3 packets", marks=pytest.mark.covers("report.stale")
        ),
        pytest.param(
            INVALID,
            "invalid: the stored report does not match its digest",
            marks=pytest.mark.covers("report.invalid"),
        ),
    ],
)
def test_each_status_is_valid_and_shown_explicitly(value: dict[str, Any], banner: str) -> None:
    assert ReportArtifact.from_wire(value).banner() == banner


def without(value: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(
            {**PRESENT, "status": "stale"}, marks=pytest.mark.covers("report.stale-needs-reason")
        ),
        pytest.param(
            {**PRESENT, "staleReason": "why"},
            marks=pytest.mark.covers("report.reason-only-when-stale"),
        ),
        pytest.param(
            without(PRESENT, "sha256"), marks=pytest.mark.covers("report.present-needs-sha256")
        ),
        pytest.param(without(PRESENT, "generatedAt"), id="present-without-time"),
        pytest.param(
            {**ABSENT, "path": "reports/run_01/loop.md"},
            marks=pytest.mark.covers("report.absent-has-no-path"),
        ),
        pytest.param({**ABSENT, "generatedAt": "2026-09-21T11:00:00Z"}, id="absent-with-time"),
        pytest.param(without(INVALID, "path"), id="invalid-without-path"),
        pytest.param(
            {**PRESENT, "status": "missing"}, marks=pytest.mark.covers("report.status-closed-set")
        ),
        pytest.param(
            {**PRESENT, "path": "/var/reports/loop.md"},
            marks=pytest.mark.covers("report.path-is-relative"),
        ),
        pytest.param({**PRESENT, "path": "reports/../../etc/passwd"}, id="parent-segment"),
        pytest.param({**PRESENT, "path": "C:/reports/loop.md"}, id="drive"),
        pytest.param({**PRESENT, "covers": " "}, id="blank-covers"),
    ],
)
def test_fields_that_do_not_match_the_status_are_invalid(value: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ReportArtifact.from_wire(value)


@pytest.mark.covers("bounds.report-source-refs.at-limit", "bounds.report-source-refs.over-limit")
def test_a_report_lists_at_most_32_source_refs() -> None:
    refs = [f"artifact://run_01/ev_{i}" for i in range(33)]
    assert len(ReportArtifact.from_wire({**PRESENT, "sourceRefs": refs[:32]}).source_refs) == 32
    with pytest.raises(ValidationError):
        ReportArtifact.from_wire({**PRESENT, "sourceRefs": refs})
