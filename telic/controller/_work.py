"""Execution helpers shared by the WorkResult rules and the trace: node lookup and decisions.

Every attempted action of an accepted WorkResult (completed, failed or denied) is judged against
the mode policy, the run authorization and its node's permissions, and one ``permission_checked``
trace event records each verdict. Skipped actions were never attempted, so they are not traced.
A *rejected* WorkResult writes nothing but its DENY decisions (``deny_notes``). Every traced
scope passes through ``telic._secrets.redact``: the body was refused if it held a secret the
detector knows, so this only matters for what the scope adds to the target.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from telic._secrets import redact
from telic.controller._authority import decide, run_authorization
from telic.controller._derive import is_unlocked, node_of
from telic.controller._events import TraceNote
from telic.controller._phases import MUTATING_MODES
from telic.controller._state import RunState, StoredArtifact
from telic.permissions import Decision, permission_record
from telic.protocol import Capability, WorkAction, WorkNode, WorkResult

ATTEMPTED: Final = frozenset({"completed", "failed", "denied", "unauthorized"})
"""Action statuses that count as attempts (skipped actions were never tried)."""
GATED: Final = "mutation_not_allowed"
"""The decision code of a mutating action where the run may not mutate (``WR-NO-MUTATION``)."""


def mutation_allowed(state: RunState) -> bool:
    """Whether the run may mutate now: a fix mode, and in analyze_and_fix only after unlock."""
    mode = state.run.requested_mode
    if mode not in MUTATING_MODES:
        return False
    return mode != "analyze_and_fix" or is_unlocked(state)


def gate_reason(state: RunState) -> str:
    """Why a mutation is refused where the run may not mutate (the DENY's rationale)."""
    if state.run.requested_mode == "analyze_and_fix":
        return "Mutation attempted before the diagnosis review gate"
    return f"Mutation is not allowed in {state.run.requested_mode}"


def decide_action(state: RunState, node: WorkNode, action: WorkAction) -> Decision:
    """Decide one reported action: the permission layers, then the mutation gate.

    An action the host declares mutating is refused wherever the run may not mutate (a
    read-only mode, or analyze_and_fix before the unlock), even when every layer allows its
    target, e.g. an allowlisted command that changes files during a diagnosis.
    """
    decision = decide(state, node.permissions, action.capability, action.target)
    if decision.allowed and action.mutating and not mutation_allowed(state):
        return Decision(False, action.capability, decision.scope, "mode", gate_reason(state), GATED)
    return decision


def action_decisions(
    state: RunState, result: WorkResult
) -> Iterator[tuple[int, WorkAction, Decision]]:
    """Yield ``(index, action, decision)`` for every attempted action of ``result``."""
    node = node_of(state, result)
    if node is None:
        return
    for index, action in enumerate(result.actions):
        if action.status in ATTEMPTED:
            yield index, action, decide_action(state, node, action)


def permission_notes(state: RunState, record: StoredArtifact) -> Iterator[TraceNote]:
    """Yield one ``permission_checked`` note per attempted action of an accepted WorkResult."""
    result: WorkResult = record.body
    for _, action, decision in action_decisions(state, result):
        yield TraceNote(
            "permission_checked",
            record.producer,
            state.run.phase,
            input_refs=(record.uri,),
            permission_decision=permission_record(
                decision.verdict,
                action.capability,
                redact(decision.scope or action.capability),
                decision.reason,
            ),
            summary=decision.reason[:800],
        )


def _attempted_targets(
    result: WorkResult, mutations: bool = False
) -> Iterator[tuple[Capability, str]]:
    """Every (capability, target) the result says it tried (only mutations, if ``mutations``;
    a denied one changed nothing): file changes, then actions."""
    for change in result.files_changed:
        deleted = change.change_type == "deleted"
        yield ("repository.delete" if deleted else "repository.write"), change.path
    for action in result.actions:
        if mutations and not (action.mutating and action.status != "denied"):
            continue
        if action.status in ATTEMPTED:
            yield action.capability, action.target


def deny_notes(state: RunState, result: WorkResult) -> tuple[TraceNote, ...]:
    """Return the DENY events a rejected WorkResult persists, minus the ones already traced.

    Every attempted target that some permission layer refuses is one DENY decision: the mode
    (a mutation in a read-only mode, or before analyze_and_fix's diagnosis gate), the run
    authorization (the user's grant ∩ the host's capabilities), or the node (which the plan
    already holds inside the contract, so a target outside the contract is outside the node
    too). A decision identical to one in the trace, or earlier in this result, is not repeated.
    """
    node = node_of(state, result)
    permissions = run_authorization(state) if node is None else node.permissions
    plan = state.latest("WorkPlan")
    known: list[Mapping[str, Any]] = [
        entry.permission_decision
        for entry in state.trace
        if entry.event_type == "permission_checked" and entry.permission_decision is not None
    ]
    gated = set() if mutation_allowed(state) else set(_attempted_targets(result, mutations=True))
    notes: list[TraceNote] = []
    for capability, target in _attempted_targets(result):
        decided = decide(state, permissions, capability, target)
        if (capability, target) in gated:
            reason = gate_reason(state)
        elif decided.allowed:
            continue
        else:
            reason = decided.reason
        decision = permission_record(
            "deny", capability, redact(decided.scope or capability), reason
        )
        if any(dict(seen) == decision for seen in known):
            continue
        known.append(decision)
        notes.append(
            TraceNote(
                "permission_checked",
                "executor",
                state.run.phase,
                input_refs=() if plan is None else (plan.uri,),
                permission_decision=decision,
                summary=reason[:800],
            )
        )
    return tuple(notes)
