"""Execution helpers shared by the WorkResult rules and the trace: node lookup and decisions.

Every attempted action of an accepted WorkResult (completed, failed or denied) is judged against
the mode policy, the run authorization and its node's permissions, and one ``permission_checked``
trace event records each verdict. Skipped actions were never attempted, so they are not traced.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._authority import decide
from telic.controller._events import TraceNote
from telic.controller._state import RunState, StoredArtifact
from telic.permissions import Decision
from telic.protocol._plan import WorkNode
from telic.protocol._result import WorkAction, WorkResult

__all__ = ["ATTEMPTED", "action_decisions", "node_of", "permission_notes"]

ATTEMPTED: Final = frozenset({"completed", "failed", "denied"})
"""Action statuses that count as attempts (skipped actions were never tried)."""


def node_of(state: RunState, result: WorkResult) -> WorkNode | None:
    """Return the node of the plan ``result`` reports on, or None."""
    plan = state.by_uri(result.work_plan_ref)
    if plan is None or plan.type != "WorkPlan":
        return None
    return next((n for n in plan.body.nodes if n.id == result.node_id), None)


def action_decisions(
    state: RunState, result: WorkResult
) -> Iterator[tuple[int, WorkAction, Decision]]:
    """Yield ``(index, action, decision)`` for every attempted action of ``result``."""
    node = node_of(state, result)
    if node is None:
        return
    for index, action in enumerate(result.actions):
        if action.status in ATTEMPTED:
            yield index, action, decide(state, node.permissions, action.capability, action.target)


def permission_notes(state: RunState, record: StoredArtifact) -> Iterator[TraceNote]:
    """Yield one ``permission_checked`` note per attempted action of an accepted WorkResult."""
    result: WorkResult = record.body
    for _, action, decision in action_decisions(state, result):
        yield TraceNote(
            "permission_checked",
            record.producer,
            state.run.phase,
            input_refs=(record.uri,),
            permission_decision={
                "decision": decision.verdict,
                "capability": action.capability,
                "scope": decision.scope or action.capability,
                "policyRefs": [],
                "rationaleSummary": decision.reason,
            },
            summary=decision.reason[:800],
        )
