"""Pure queries over a run state that the machine, NextAction and the rules share.

Serial execution, the analyze_and_fix "unlock", the controlling work order of a scoped replan and
the cumulative tool-call reservation are all *derived* from the stored artifacts, never kept as
separate counters, so that replaying the same artifacts always gives the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from telic.controller._state import RunState, StoredArtifact
from telic.protocol import Capability, PermissionSet, TaskContract, WorkNode, WorkPlan

__all__ = [
    "MAX_RUN_TOOL_CALLS",
    "WorkOrder",
    "breaches",
    "controlling_order",
    "fix_minimum",
    "is_unlocked",
    "pending_node",
    "plan_reservation",
    "reserved_tool_calls",
    "results_of",
    "stage_criteria",
    "stage_verifications",
]

MAX_RUN_TOOL_CALLS: Final = 4_000
"""Σ node maximumToolCalls over all plans of a run (§3.3)."""


def plan_reservation(plan: WorkPlan) -> int:
    """Return the tool calls a plan reserves: the sum of its nodes' budgets."""
    return sum(node.budgets.maximum_tool_calls for node in plan.nodes)


def reserved_tool_calls(state: RunState) -> int:
    """Return the tool calls reserved by every WorkPlan of the run so far (kept while only
    Evidence is appended)."""
    return state.carried(_reserved_tool_calls)


def _reserved_tool_calls(state: RunState) -> int:
    return sum(plan_reservation(plan.body) for plan in state.all("WorkPlan"))


def results_of(state: RunState, plan: StoredArtifact) -> tuple[StoredArtifact, ...]:
    """Return the WorkResults reported against ``plan``, in ledger order."""
    return tuple(r for r in state.all("WorkResult") if r.body.work_plan_ref == plan.uri)


def fix_minimum(contract: TaskContract) -> int:
    """Return the fewest tool calls a passing analyze_and_fix fix plan can reserve.

    A passing fix needs a completed mutating action (``QR-PASS-NEEDS-MUTATION``) and, after it,
    one completed read-only action for each capability of a required completion verification
    (``WR-VERIFY-AFTER-MUTATION``); a node reports no more actions than its budget.
    """
    verified = {
        v.capability
        for v in contract.verification_requirements
        if v.required and v.stage == "completion"
    }
    return 1 + len(verified)


def breaches(state: RunState) -> tuple[tuple[StoredArtifact, str], ...]:
    """Return ``(result, action id)`` for every action a WorkResult records as ``unauthorized``.

    Each is the host's admission that it acted outside its permissions: once one is on record,
    the run's permissions were not honoured, whatever else it proved.
    """
    return tuple(
        (result, action.id)
        for result in state.all("WorkResult")
        for action in result.body.actions
        if action.status == "unauthorized"
    )


def pending_node(state: RunState) -> WorkNode | None:
    """Return the first dependency-ready node of the latest plan that has no result yet.

    Serial execution: nodes run in plan order; a node is ready when every node it depends on has
    a ``completed`` result. A node with an unsuccessful result is never retried, and its
    dependants never become ready. Computed once per state and kept while only Evidence is
    appended, which cannot change it.
    """
    return state.carried(_pending_node)


def _pending_node(state: RunState) -> WorkNode | None:
    plan = state.latest("WorkPlan")
    if plan is None:
        return None
    statuses = {r.body.node_id: r.body.status for r in results_of(state, plan)}
    body: WorkPlan = plan.body
    for node in body.nodes:
        if node.id in statuses:
            continue
        if all(statuses.get(dep) == "completed" for dep in node.depends_on):
            return node
    return None


def _cites_gate(plan: WorkPlan, gate_uri: str) -> bool:
    return all(gate_uri in node.input_refs for node in plan.nodes)


def is_unlocked(state: RunState) -> bool:
    """Whether analyze_and_fix has unlocked its fix.

    Unlocked means a ``proceed_to_fix`` QualityReview with a correction order exists and some
    WorkPlan cites that review in every node's inputRefs.
    """
    gates = [
        review.uri
        for review in state.all("QualityReview")
        if review.body.decision == "proceed_to_fix"
        and review.body.diagnosis_gate is not None
        and review.body.diagnosis_gate.correction_work_order is not None
    ]
    return any(_cites_gate(plan.body, gate) for plan in state.all("WorkPlan") for gate in gates)


@dataclass(frozen=True, slots=True)
class WorkOrder:
    """The scope a replan must stay inside: a remediation, audit defect or correction order."""

    source: StoredArtifact
    """The QualityReview or ReleaseAudit that issued the order."""
    criterion_ids: tuple[str, ...]
    allowed_capabilities: tuple[Capability, ...]
    permissions: PermissionSet
    maximum_tool_calls: int


def controlling_order(state: RunState) -> WorkOrder | None:
    """Return the order the next WorkPlan is scoped by, or None for an unscoped plan.

    The most recent QualityReview or ReleaseAudit controls: a ``remediate`` review or audit
    scopes by its work order or defect, a ``proceed_to_fix`` review by its correction order.
    """
    found = [a for a in (state.latest("QualityReview"), state.latest("ReleaseAudit")) if a]
    if not found:
        return None
    latest = max(found, key=state.position)
    body = latest.body
    if latest.type == "QualityReview" and body.decision == "remediate":
        order = body.remediation_work_order
        criteria = tuple(order.failed_criterion_ids)
    elif latest.type == "ReleaseAudit" and body.decision == "remediate":
        order = body.remediation_defect
        criteria = tuple(order.failed_criterion_ids)
    elif latest.type == "QualityReview" and body.decision == "proceed_to_fix":
        order = body.diagnosis_gate.correction_work_order
        criteria = tuple(order.target_criterion_ids)
    else:
        return None
    return WorkOrder(
        source=latest,
        criterion_ids=criteria,
        allowed_capabilities=tuple(order.allowed_capabilities),
        permissions=order.permissions,
        maximum_tool_calls=order.maximum_tool_calls,
    )


def _contract(state: RunState) -> TaskContract | None:
    latest = state.latest("TaskContract")
    return None if latest is None else latest.body


def stage_criteria(state: RunState) -> tuple[str, ...]:
    """Return the criterion ids of the active stage.

    In analyze_and_fix before the unlock only diagnosis criteria count; otherwise all of them.
    """
    contract = _contract(state)
    if contract is None:
        return ()
    diagnosis_only = state.run.mode == "analyze_and_fix" and not is_unlocked(state)
    return tuple(
        c.id for c in contract.acceptance_criteria if not diagnosis_only or c.stage == "diagnosis"
    )


def stage_verifications(state: RunState) -> tuple[str, ...]:
    """Return the verification requirement ids of the active stage (see ``stage_criteria``)."""
    contract = _contract(state)
    if contract is None:
        return ()
    diagnosis_only = state.run.mode == "analyze_and_fix" and not is_unlocked(state)
    return tuple(
        v.id
        for v in contract.verification_requirements
        if not diagnosis_only or v.stage == "diagnosis"
    )
