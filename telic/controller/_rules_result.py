"""Invariants of execution: which node a WorkResult reports on and what completed work proves.

Execution is serial: a result reports the first dependency-ready pending node of the latest plan,
stays inside its tool-call budget, and — in read-only situations — claims no mutation at all
(such an attempt is also traced as a DENY decision; see ``_work.deny_notes``). Completed work
exercised every required capability, covered every criterion of its node, and verified after its
final mutation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import completion_capabilities, last_mutation, pending_node
from telic.controller._rules_frame import latest_ref
from telic.controller._work import mutation_allowed, node_of
from telic.protocol import WorkResult

__all__ = ["RULES"]

_WR = ("WorkResult",)
_S = "§3.4 WorkResult"

rule = Rules(_WR, _S)


@rule("WR-PLAN-LATEST", "Reporting against anything but the latest WorkPlan.")
def wr_plan_latest(c: Check[WorkResult]) -> Iterator[Violation]:
    """workPlanRef is the latest plan."""
    return latest_ref(c, "workPlanRef", c.body.work_plan_ref, "WorkPlan")


@rule(
    "WR-NODE-FIRST-READY",
    "Reporting a node out of order, twice, or before its dependencies completed.",
)
def wr_node_first_ready(c: Check[WorkResult]) -> Iterator[Violation]:
    """nodeId is the first dependency-ready node without a result, in plan order."""
    node = pending_node(c.state)
    if node is None or c.body.node_id != node.id:
        yield Violation(
            "nodeId",
            "nodeId must be the first dependency-ready pending node",
            None if node is None else node.id,
        )


@rule("WR-ACTION-BUDGET", "More actions or tool events than the node's maximumToolCalls.")
def wr_action_budget(c: Check[WorkResult]) -> Iterator[Violation]:
    """Actions and tool events each fit the node's maximumToolCalls.

    Actions recorded ``unauthorized`` are not counted: the budget bounds what the node may do,
    and a breach already on record must never be one the host has to leave out for lack of room.
    """
    node = node_of(c.state, c.body)
    if node is None:
        return
    limit = node.budgets.maximum_tool_calls
    if sum(a.status != "unauthorized" for a in c.body.actions) > limit:
        yield Violation("actions", "More actions than the node's tool-call budget")
    if len(c.body.tool_event_refs) > limit:
        yield Violation("toolEventRefs", "More tool events than the node's tool-call budget")


@rule(
    "WR-NO-MUTATION",
    "File changes or completed/failed mutating actions in a read-only mode or before the "
    "analyze_and_fix gate (also persisted as DENY permission decisions).",
)
def wr_no_mutation(c: Check[WorkResult]) -> Iterator[Violation]:
    """Read-only situations report no file changes and no attempted mutating action."""
    if mutation_allowed(c.state):
        return
    for index, _ in enumerate(c.body.files_changed):
        yield Violation(f"filesChanged.{index}", "This mode (or stage) may not change files")
    for index, action in enumerate(c.body.actions):
        if action.mutating and action.status in ("completed", "failed"):
            yield Violation(
                f"actions.{index}",
                "This mode (or stage) may not mutate; if you already did it, keep the action "
                "with status unauthorized",
            )


@rule(
    "WR-COMPLETED-FAILED-TEST",
    "A completed result with a failed test where the run fixes (a diagnosis may keep its "
    "reproduced failure).",
)
def wr_completed_failed_test(c: Check[WorkResult]) -> Iterator[Violation]:
    """A completed result lists a failed test only in a diagnosis, where it is the finding.

    A diagnosis is work that may not mutate (analyze_only, analyze_and_fix before the unlock):
    there a reproduced failure is what the node was asked to find. Where the run fixes, a
    failed test means the work is not complete.
    """
    if c.body.status != "completed" or not mutation_allowed(c.state):
        return
    for index, test in enumerate(c.body.test_results):
        if test.status == "failed":
            yield Violation(
                f"testResults.{index}.status",
                "Fixing work with a failed test is not completed: report it partial or failed "
                "(a failing test stays failed in a completed result only in a diagnosis)",
            )


@rule("WR-COVERAGE", "Coverage of a criterion the node does not own, or of one criterion twice.")
def wr_coverage(c: Check[WorkResult]) -> Iterator[Violation]:
    """Coverage names the node's criteria, each at most once."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    seen: set[str] = set()
    for index, entry in enumerate(c.body.acceptance_coverage):
        if entry.criterion_id in seen or entry.criterion_id not in node.acceptance_criteria:
            yield Violation(
                f"acceptanceCoverage.{index}.criterionId",
                "Coverage must name the node's criteria, each once",
                list(node.acceptance_criteria),
            )
        seen.add(entry.criterion_id)


@rule("WR-COMPLETED-COVERAGE", "Completed work that leaves one of its node's criteria uncovered.")
def wr_completed_coverage(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed work covers every criterion of its node."""
    node = node_of(c.state, c.body)
    if node is None or c.body.status != "completed":
        return
    covered = {entry.criterion_id for entry in c.body.acceptance_coverage}
    for missing in sorted(set(node.acceptance_criteria) - covered):
        yield Violation(
            "acceptanceCoverage",
            f"Completed work must cover criterion {missing}",
            list(node.acceptance_criteria),
        )


@rule(
    "WR-COMPLETED-CAPABILITIES",
    "Completed work without a completed action for each required capability.",
)
def wr_completed_capabilities(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed work has a completed action for every required capability of its node."""
    node = node_of(c.state, c.body)
    if node is None or c.body.status != "completed":
        return
    completed = {a.capability for a in c.body.actions if a.status == "completed"}
    for capability in node.required_capabilities:
        if capability not in completed:
            yield Violation(
                "actions",
                f"Required capability {capability} has no completed action",
                list(node.required_capabilities),
            )


@rule(
    "WR-VERIFY-AFTER-MUTATION",
    "Completed mutating work whose completion verification does not follow its last mutation.",
    section="§3.4 WorkResult",
)
def wr_verify_after_mutation(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed mutating work verifies each required completion capability after the mutation."""
    node, contract = node_of(c.state, c.body), c.state.latest("TaskContract")
    last = last_mutation(c.body)
    if node is None or contract is None or c.body.status != "completed" or last < 0:
        return
    criteria = {a.id for a in contract.body.acceptance_criteria if a.stage == "completion"}
    if not criteria & set(node.acceptance_criteria):
        return
    after = {
        a.capability
        for a in c.body.actions[last + 1 :]
        if a.status == "completed" and not a.mutating
    }
    verified = completion_capabilities(contract.body)
    for capability in sorted(verified & set(node.required_capabilities) - after):
        yield Violation(
            "actions",
            f"Verify {capability} with a completed read-only action after the last mutation",
        )


RULES: Final = rule.registered
