"""Wire records as people read them: the one vocabulary's labels, human times, trace summaries.

``--json`` prints the wire's own names; human tables go through these functions, which take
every label from ``telic.controller._vocabulary`` (defined once, shared with the reports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from telic.controller import event_summary, human_time, phase_label, run_phase, status_label


def phase_words(run: Mapping[str, Any]) -> str:
    """The label of where a wire run record is (a finished run shows its ending)."""
    return phase_label(run_phase(str(run.get("phase", "")), str(run.get("status", ""))))


def status_words(run: Mapping[str, Any]) -> str:
    """The label of a wire run record's status."""
    return status_label(str(run.get("status", "")))


def trace_rows(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Wire trace events with a ``when``, a phase label and a summary that says something."""
    return [
        {
            **event,
            "when": human_time(str(event.get("timestamp", ""))),
            "phaseLabel": phase_label(str(event.get("phase", ""))),
            "summary": event_summary(
                str(event.get("eventType", "")),
                str(event.get("rationaleSummary") or ""),
                [str(r) for r in event.get("outputRefs") or ()],
            ),
        }
        for event in events
    ]
