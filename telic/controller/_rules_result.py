"""Invariants of execution: WorkResult node order, action claims, file changes and coverage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from telic.controller._check import Check, Violation
from telic.controller._derive import is_unlocked, pending_node
from telic.controller._phases import MUTATING_MODES
from telic.controller._work import action_decisions, node_of
from telic.permissions import capability_is_mutating
from telic.protocol._evidence import Evidence
from telic.protocol._result import WorkResult

__all__: list[str] = []

_WRITES = frozenset({"repository.write", "repository.delete"})
MAX_EVIDENCE_PER_PLAN = 128


def _mutating_allowed(c: Check[Any]) -> bool:
    mode = c.state.run.mode
    if mode not in MUTATING_MODES:
        return False
    return mode != "analyze_and_fix" or is_unlocked(c.state)


def wr_plan_latest(c: Check[WorkResult]) -> Iterator[Violation]:
    """workPlanRef is the latest plan."""
    latest = c.state.latest("WorkPlan")
    if latest is None or c.body.work_plan_ref != latest.uri:
        yield Violation("workPlanRef", "workPlanRef must be the latest WorkPlan")


def wr_node_first_ready(c: Check[WorkResult]) -> Iterator[Violation]:
    """nodeId is the first dependency-ready node without a result, in plan order."""
    node = pending_node(c.state)
    if node is None or c.body.node_id != node.id:
        yield Violation("nodeId", "nodeId must be the first dependency-ready pending node")


def wr_action_budget(c: Check[WorkResult]) -> Iterator[Violation]:
    """Actions and tool events each fit the node's maximumToolCalls."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    limit = node.budgets.maximum_tool_calls
    if len(c.body.actions) > limit:
        yield Violation("actions", "More actions than the node's tool-call budget")
    if len(c.body.tool_event_refs) > limit:
        yield Violation("toolEventRefs", "More tool events than the node's tool-call budget")


def wr_no_mutation(c: Check[WorkResult]) -> Iterator[Violation]:
    """Read-only situations report no file changes and no attempted mutating action."""
    if _mutating_allowed(c):
        return
    if c.body.files_changed:
        yield Violation("filesChanged", "This mode (or stage) may not change files")
    for index, action in enumerate(c.body.actions):
        if action.mutating and action.status in ("completed", "failed"):
            yield Violation(f"actions.{index}", "This mode (or stage) may not mutate")


def wr_action_authorized(c: Check[WorkResult]) -> Iterator[Violation]:
    """Attempted actions use allowed tools and are authorized; a denial must be a real one."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    for index, action, decision in action_decisions(c.state, c.body):
        path = f"actions.{index}"
        if action.capability not in node.allowed_tools:
            yield Violation(f"{path}.capability", "Capability is not among the node's allowedTools")
        elif action.status == "denied" and decision.allowed:
            yield Violation(f"{path}.status", "A denied action must really be unauthorized")
        elif action.status != "denied" and not decision.allowed:
            yield Violation(f"{path}.target", f"Unauthorized: {decision.reason}")


def wr_mutating_flag(c: Check[WorkResult]) -> Iterator[Violation]:
    """The mutating flag matches the capability's class (shell.execute may be either)."""
    for index, action in enumerate(c.body.actions):
        expected = capability_is_mutating(action.capability)
        if expected is not None and action.mutating != expected:
            yield Violation(f"actions.{index}.mutating", "Flag does not match the capability")


def wr_file_changes(c: Check[WorkResult]) -> Iterator[Violation]:
    """File changes and completed write/delete actions correspond both ways."""
    done = {
        (a.capability, a.target)
        for a in c.body.actions
        if a.status == "completed" and a.capability in _WRITES
    }
    changes = {
        ("repository.delete" if f.change_type == "deleted" else "repository.write", f.path)
        for f in c.body.files_changed
    }
    for index, change in enumerate(c.body.files_changed):
        kind = "repository.delete" if change.change_type == "deleted" else "repository.write"
        if (kind, change.path) not in done:
            yield Violation(f"filesChanged.{index}", "No completed action made this change")
    for index, action in enumerate(c.body.actions):
        if (action.capability, action.target) in done - changes:
            yield Violation(f"actions.{index}", "A completed write needs its FileChange")


def wr_coverage(c: Check[WorkResult]) -> Iterator[Violation]:
    """Coverage names the node's criteria once each; completed work covers all of them."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    ids = [entry.criterion_id for entry in c.body.acceptance_coverage]
    if len(set(ids)) != len(ids) or not set(ids) <= set(node.acceptance_criteria):
        yield Violation("acceptanceCoverage", "Coverage must name the node's criteria once each")
    if c.body.status == "completed" and set(ids) != set(node.acceptance_criteria):
        yield Violation("acceptanceCoverage", "Completed work covers every criterion of its node")


def wr_completed_capabilities(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed work exercised every required capability, verifying after the last mutation."""
    node = node_of(c.state, c.body)
    if node is None or c.body.status != "completed":
        return
    actions = c.body.actions
    completed = {a.capability for a in actions if a.status == "completed"}
    for capability in node.required_capabilities:
        if capability not in completed:
            yield Violation("actions", f"Required capability {capability} has no completed action")
    last_mutation = max((i for i, a in enumerate(actions) if a.mutating), default=None)
    if last_mutation is None:
        return
    after = {
        a.capability
        for a in actions[last_mutation + 1 :]
        if a.status == "completed" and not a.mutating
    }
    for verified in _completion_verifications(c):
        if verified in node.required_capabilities and verified not in after:
            yield Violation("actions", f"Verify {verified} after the last mutation")


def _completion_verifications(c: Check[WorkResult]) -> set[str]:
    contract = c.state.latest("TaskContract")
    if contract is None:
        return set()
    return {
        v.capability
        for v in contract.body.verification_requirements
        if v.required and v.stage == "completion"
    }


def ev_quota(c: Check[Evidence]) -> Iterator[Violation]:
    """At most 128 Evidence artifacts per current WorkPlan."""
    since = c.state.after(c.state.latest("WorkPlan"))
    if sum(1 for a in since if a.type == "Evidence") >= MAX_EVIDENCE_PER_PLAN:
        yield Violation("", "The current plan already has 128 Evidence artifacts")
