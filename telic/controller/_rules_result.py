"""Invariants of execution: which node a WorkResult reports on and what completed work proves.

Execution is serial: a result reports the first dependency-ready pending node of the latest plan,
stays inside its tool-call budget, and — in read-only situations — claims no mutation at all
(such an attempt is also traced as a DENY decision; see ``_work.deny_notes``). Completed work
exercised every required capability, covered every criterion of its node, and verified after its
final mutation.

Telic cannot intercept a host's tools, so it judges the *claims* of the actions too: every
attempted action uses a tool its node allows, on a target the mode, the run authorization and the
node all authorize; a denial is a real one; an action the host admits it took outside its
permissions is recorded (status ``unauthorized``, which must be true) rather than refused; the
mutating flag tells the truth; and file changes and completed write/delete actions correspond
exactly, in both directions, whatever the result's status.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._authority import decide
from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import completion_capabilities, last_mutation, node_of, pending_node
from telic.controller._rules_frame import latest_ref
from telic.controller._work import GATED, action_decisions, mutation_allowed
from telic.permissions import MUTATING_REPOSITORY, TYPED_INSPECT_TARGETS, capability_is_mutating
from telic.protocol import Capability, FileChange, WorkResult

rule = Rules(("WorkResult",), "§3.4 WorkResult")
changes = Rules(("WorkResult",), "§3.4 WorkResult (FileChange ↔ action, every status)")


@rule("WR-PLAN-LATEST")
def wr_plan_latest(c: Check[WorkResult]) -> Iterator[Violation]:
    """Reporting against anything but the latest WorkPlan."""
    return latest_ref(c, "workPlanRef", c.body.work_plan_ref, "WorkPlan")


@rule("WR-NODE-FIRST-READY")
def wr_node_first_ready(c: Check[WorkResult]) -> Iterator[Violation]:
    """Reporting a node out of order, twice, or before its dependencies completed."""
    node = pending_node(c.state)
    if node is None or c.body.node_id != node.id:
        yield Violation(
            "nodeId",
            "nodeId must be the first dependency-ready pending node",
            None if node is None else node.id,
        )


@rule("WR-ACTION-BUDGET")
def wr_action_budget(c: Check[WorkResult]) -> Iterator[Violation]:
    """More actions or tool events than the node's maximumToolCalls.

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


@rule("WR-NO-MUTATION")
def wr_no_mutation(c: Check[WorkResult]) -> Iterator[Violation]:
    """File changes or completed/failed mutating actions in a read-only mode or before the
    analyze_and_fix gate (also persisted as DENY permission decisions)."""
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


@rule("WR-COMPLETED-FAILED-TEST")
def wr_completed_failed_test(c: Check[WorkResult]) -> Iterator[Violation]:
    """A completed result with a failed test where the run fixes (a diagnosis may keep its
    reproduced failure).

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


@rule("WR-COVERAGE")
def wr_coverage(c: Check[WorkResult]) -> Iterator[Violation]:
    """Coverage of a criterion the node does not own, or of one criterion twice."""
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


@rule("WR-COMPLETED-COVERAGE")
def wr_completed_coverage(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed work that leaves one of its node's criteria uncovered."""
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


@rule("WR-COMPLETED-CAPABILITIES")
def wr_completed_capabilities(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed work without a completed action for each required capability."""
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


@rule("WR-VERIFY-AFTER-MUTATION")
def wr_verify_after_mutation(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed mutating work whose completion verification does not follow its last mutation."""
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


_REPORTED_ELSEWHERE: Final = frozenset({"untyped_inspect_target", GATED})
"""Refusals other rules name (WR-SHELL-INSPECT-TARGET, WR-NO-MUTATION)."""


def _capability(change: FileChange) -> Capability:
    return "repository.delete" if change.change_type == "deleted" else "repository.write"


@rule("WR-ACTION-ALLOWED-TOOL")
def wr_allowed_tool(c: Check[WorkResult]) -> Iterator[Violation]:
    """An attempted action with a capability outside its node's allowedTools.

    An action recorded as ``unauthorized`` is the host's admission that it went outside its
    permissions, so it is exempt: refusing it would only teach the host to hide it.
    """
    node = node_of(c.state, c.body)
    for index, action, _ in action_decisions(c.state, c.body):
        if action.status == "unauthorized":
            continue
        if node is not None and action.capability not in node.allowed_tools:
            yield Violation(
                f"actions.{index}.capability",
                "Capability is not among the node's allowedTools; if you already did it, keep "
                "the action with status unauthorized",
            )


@rule("WR-SHELL-INSPECT-TARGET")
def wr_shell_inspect_target(c: Check[WorkResult]) -> Iterator[Violation]:
    """shell.inspect with free shell text instead of one of the six typed targets."""
    for index, action, _ in action_decisions(c.state, c.body):
        if action.capability == "shell.inspect" and action.target not in TYPED_INSPECT_TARGETS:
            yield Violation(
                f"actions.{index}.target",
                "shell.inspect targets are git.status, git.diff, git.log, network.listen, "
                "process.list or runtime.logs; running a command (a test) is shell.execute",
            )


@rule("WR-ACTION-AUTHORIZED", section="§3.4 WorkResult; §3.5")
def wr_action_authorized(c: Check[WorkResult]) -> Iterator[Violation]:
    """A completed or failed action on a target that mode, run authorization or node deny."""
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status in ("denied", "unauthorized") or decision.code in _REPORTED_ELSEWHERE:
            continue
        if not decision.allowed:
            yield Violation(
                f"actions.{index}.target",
                f"Unauthorized: {decision.reason}. If you already did it, keep it with status "
                "unauthorized; if it was refused, status denied",
            )


@rule("WR-UNAUTHORIZED-REAL")
def wr_unauthorized_real(c: Check[WorkResult]) -> Iterator[Violation]:
    """Recording as unauthorized an action that mode, run authorization, node permissions and
    allowedTools allowed.

    ``WR-ACTION-ALLOWED-TOOL`` holds every other action to its allowedTools, so each real
    action has a status that records it.
    """
    node = node_of(c.state, c.body)
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status != "unauthorized" or not decision.allowed:
            continue
        if node is None or action.capability in node.allowed_tools:
            yield Violation(
                f"actions.{index}.status",
                "This action was within the node's allowedTools and permissions: record it as "
                "completed or failed",
            )


@rule("WR-FALSE-DENIAL")
def wr_false_denial(c: Check[WorkResult]) -> Iterator[Violation]:
    """Reporting as denied an action that was in fact authorized."""
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status == "denied" and decision.allowed:
            yield Violation(
                f"actions.{index}.status", "A denied action must really be unauthorized"
            )


@rule("WR-MUTATING-FLAG")
def wr_mutating_flag(c: Check[WorkResult]) -> Iterator[Violation]:
    """A mutating flag that contradicts the capability's class.

    shell.execute may be either.
    """
    for index, action in enumerate(c.body.actions):
        expected = capability_is_mutating(action.capability)
        if expected is not None and action.mutating != expected:
            yield Violation(f"actions.{index}.mutating", "Flag does not match the capability")


@rule("WR-SPAWN-COUNT")
def wr_spawn_count(c: Check[WorkResult]) -> Iterator[Violation]:
    """More completed subagent.spawn actions than min(node child budget, permitted children)."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    limit = min(node.budgets.maximum_children, node.permissions.subagents.maximum_children)
    spawns = [
        i
        for i, a in enumerate(c.body.actions)
        if a.capability == "subagent.spawn" and a.status == "completed"
    ]
    for index in spawns[limit:]:
        yield Violation(
            f"actions.{index}", f"More completed spawns than the node's {limit} children"
        )


@changes("WR-FILE-CHANGES")
def wr_file_changes(c: Check[WorkResult]) -> Iterator[Violation]:
    """A FileChange without a completed write/delete action on the same path."""
    done = {
        (a.capability, a.target)
        for a in c.body.actions
        if a.status == "completed" and a.mutating and a.capability in MUTATING_REPOSITORY
    }
    for index, change in enumerate(c.body.files_changed):
        if (_capability(change), change.path) not in done:
            yield Violation(f"filesChanged.{index}", "No completed action made this change")


@changes("WR-WRITE-FILE-CHANGE")
def wr_write_file_change(c: Check[WorkResult]) -> Iterator[Violation]:
    """A completed write/delete action without its exact FileChange."""
    made = {(_capability(f), f.path) for f in c.body.files_changed}
    for index, action in enumerate(c.body.actions):
        done = action.status == "completed" and action.capability in MUTATING_REPOSITORY
        if done and (action.capability, action.target) not in made:
            yield Violation(f"actions.{index}", "A completed write or delete needs its FileChange")


@changes("WR-FILE-CHANGE-AUTHORIZED")
def wr_file_change_authorized(c: Check[WorkResult]) -> Iterator[Violation]:
    """A FileChange on a path not authorized for its write or delete."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    for index, change in enumerate(c.body.files_changed):
        decision = decide(c.state, node.permissions, _capability(change), change.path)
        if not decision.allowed:
            yield Violation(f"filesChanged.{index}.path", f"Unauthorized: {decision.reason}")


RULES: Final = (*rule.registered, *changes.registered)
