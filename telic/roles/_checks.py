"""The bounds of ``telic_check_tool_action``: what a pre-action check may append to a run.

A host hook may call the check before every native tool use, thousands of times per run, and
each decision is traced in the run's hash chain, which must not grow without bound.
"Already recorded" must hold across processes too (two ``telic serve`` on one store), so a check
record's event id is derived from the decision and the ledger writes an id the run already holds
at most once (``Ledger.record_events(..., once=True)``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from telic._errors import InvalidTransition, Issue, LimitExceeded
from telic.controller import RunState
from telic.protocol import canonical_json

MAX_CHECK_RECORDS: Final = 1024
"""Most ``telic_check_tool_action`` records one run may hold."""

CHECK_ACTOR: Final = "host"
"""The actor of every check record (WorkResult decisions are the executor's)."""

_CHECK_EVENTS: Final = frozenset({"permission_checked", "tool_action_refused", "broker_decision"})


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """The one trace event a check appends."""

    event_type: str
    permission_decision: dict[str, Any] | None


def check_event_id(run_id: str, record: CheckRecord) -> str:
    """The event id of ``record`` in run ``run_id``: the same decision always gets the same id.

    ``check-`` and 32 hex digits of the sha256 of the run id, the event type and the decision,
    so two processes recording one decision collide on the ledger's event id instead of both
    appending it.
    """
    decision = record.permission_decision
    digest = hashlib.sha256(canonical_json([run_id, record.event_type, decision])).hexdigest()
    return f"check-{digest[:32]}"


def record_plan(state: RunState, record: CheckRecord) -> bool:
    """Whether the check must append ``record`` (False: an identical one is in the trace).

    Raises:
        InvalidTransition: the run has ended (``CT-RUN-ACTIVE``).
        LimitExceeded: the run already holds ``MAX_CHECK_RECORDS`` check records and this
            decision is new (``CT-CHECK-CAP``).
    """
    run = state.run
    if run.terminal:
        message = f"telic_check_tool_action: the run is {run.status}; it records no more checks"
        issue = Issue("run_id", "run_terminal", message, "CT-RUN-ACTIVE")
        raise InvalidTransition(message, issues=(issue,))
    held = 0
    for entry in state.trace:
        if entry.actor != CHECK_ACTOR or entry.event_type not in _CHECK_EVENTS:
            continue
        held += 1
        seen = None if entry.permission_decision is None else dict(entry.permission_decision)
        if entry.event_type == record.event_type and seen == record.permission_decision:
            return False
    if held >= MAX_CHECK_RECORDS:
        message = (
            f"telic_check_tool_action: the run already holds {MAX_CHECK_RECORDS} check records; "
            "a new decision is refused, treat the action as denied"
        )
        issue = Issue("run_id", "check_cap", message, "CT-CHECK-CAP")
        raise LimitExceeded(message, issues=(issue,))
    return True
