"""Invariants of planning: the WorkPlan's lineage, budgets and each node's permissions.

Node permissions stay inside the contract and inside the plan ceiling — for analyze_and_fix the
analyze_only projection until the plan that cites a proceed_to_fix review unlocks the fix — and
every tool a node may use is backed by them.

A plan that would make its own contract unfinishable is refused before execution: it covers
every criterion of its stage (or of the work order that scopes it), maps each required
verification of the active stage to a node able to run it, and orders completion verification
after every node that may mutate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import (
    controlling_order,
    fix_minimum,
    is_unlocked,
    plan_reservation,
    reserved_tool_calls,
    stage_criteria,
)
from telic.controller._phases import EXECUTING_MODES, MAY_MUTATE
from telic.controller._rules_quality import contract_latest
from telic.permissions import capability_backed, exceeding, is_subset, plan_ceiling
from telic.protocol import MAX_PLAN_TOOL_CALLS, TaskContract, WorkNode, WorkPlan

rule = Rules(("WorkPlan",), "§3.4 WorkPlan")


def _contract(c: Check[Any]) -> TaskContract | None:
    latest = c.state.latest("TaskContract")
    return None if latest is None else latest.body


def unlocks(c: Check[WorkPlan]) -> bool:
    """Whether the fix is unlocked once this plan is accepted (it may be the unlocking plan)."""
    if is_unlocked(c.state):
        return True
    order = controlling_order(c.state)
    return (
        order is not None
        and order.source.body.decision == "proceed_to_fix"
        and all(order.source.uri in node.input_refs for node in c.body.nodes)
    )


rule("WP-CONTRACT-LATEST", "Planning against anything but the latest TaskContract.")(
    contract_latest
)


@rule("WP-PLAN-VALID")
def wp_valid(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Submitting a plan that is not declared valid."""
    if c.body.plan_validation != "valid":
        yield Violation(
            "planValidation", "planValidation must be valid (the only accepted value)", "valid"
        )


@rule("WP-PLAN-TOOL-CALLS", section="§3.3 per plan")
def wp_plan_tool_calls(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Node tool-call budgets that add up to more than the plan's global budget."""
    if plan_reservation(c.body) > c.body.global_budgets.maximum_tool_calls:
        yield Violation("globalBudgets.maximumToolCalls", "Node budgets exceed the plan budget")


@rule("WP-CUMULATIVE-TOOL-CALLS", section="§3.3 per run")
def wp_cumulative_tool_calls(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Reserving more than 4,000 tool calls across all plans of the run (before the analyze_and_fix
    unlock, more than leaves the fix plan its minimum).

    A plan that took every call before the unlock would leave the run no legal fix plan after
    ``proceed_to_fix``.
    """
    total = reserved_tool_calls(c.state) + plan_reservation(c.body)
    contract = _contract(c)
    reserve = 0
    if c.mode == "analyze_and_fix" and not unlocks(c) and contract is not None:
        reserve = fix_minimum(contract)
    if total + reserve > MAX_PLAN_TOOL_CALLS:
        kept = f" and keep {reserve} for the fix plan" if reserve else ""
        yield Violation(
            "nodes",
            f"Plans would reserve {total} tool calls{kept}; the run limit is {MAX_PLAN_TOOL_CALLS}",
        )


@rule("WP-ENVELOPE-BUDGETS")
def wp_envelope_budgets(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Plan parallelism or subagent depth beyond the run envelope's budgets."""
    envelope, plan = c.state.envelope.budgets, c.body.global_budgets
    if plan.maximum_parallel_workers > envelope.maximum_parallel_workers:
        yield Violation("globalBudgets.maximumParallelWorkers", "Exceeds the run's workers")
    if plan.maximum_subagent_depth > envelope.maximum_subagent_depth:
        yield Violation("globalBudgets.maximumSubagentDepth", "Exceeds the run's subagent depth")


@rule("WP-NODE-PERMISSIONS-CONTRACT")
def wp_node_permissions_contract(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A node broader than the TaskContract's permissions."""
    contract = _contract(c)
    for index, node in enumerate(c.body.nodes):
        if contract is not None and not is_subset(node.permissions, contract.permissions):
            yield Violation(f"nodes.{index}.permissions", "Node permissions exceed the contract")


@rule("WP-NODE-PERMISSIONS-CEILING")
def wp_node_permissions_ceiling(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A node beyond the plan ceiling: beyond the mode, or (analyze_and_fix) beyond the analyze_only
    projection before the diagnosis review gate."""
    fix_unlocked = unlocks(c)
    ceiling = plan_ceiling(c.mode, fix_unlocked=fix_unlocked)
    gated = c.mode == "analyze_and_fix" and not fix_unlocked
    where = (
        "before the diagnosis gate (the analyze_only projection: reads, inspection and the "
        "user's exact shell.execute commands; writes belong in the fix plan that cites the "
        "proceed_to_fix QualityReview)"
        if gated
        else f"in {c.mode}"
    )
    for index, node in enumerate(c.body.nodes):
        beyond = exceeding(node.permissions, ceiling)
        if beyond:
            yield Violation(
                f"nodes.{index}.permissions",
                f"No node may hold {', '.join(beyond)} {where}; drop it from the node",
            )


@rule("WP-NODE-CHILDREN")
def wp_node_children(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A node child budget above its subagent permission, or a depth the plan does not allow."""
    depth = c.body.global_budgets.maximum_subagent_depth
    for index, node in enumerate(c.body.nodes):
        sub = node.permissions.subagents
        if node.budgets.maximum_children > sub.maximum_children:
            yield Violation(f"nodes.{index}.budgets.maximumChildren", "Exceeds permitted children")
        if sub.maximum_depth > depth or (sub.spawn and depth == 0):
            yield Violation(f"nodes.{index}.permissions.subagents", "Exceeds the plan's depth")


@rule("WP-NODE-CAPABILITIES")
def wp_node_capabilities(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Unbacked tools, repeated or unallowed required capabilities, an executed node without one, or
    fewer tool calls than required capabilities."""
    needs_capability = c.mode in EXECUTING_MODES
    for index, node in enumerate(c.body.nodes):
        path = f"nodes.{index}"
        for tool in node.allowed_tools:
            if not capability_backed(tool, node.permissions):
                yield Violation(f"{path}.allowedTools", f"{tool} is not backed by the permissions")
        required = node.required_capabilities
        if len(set(required)) != len(required) or not set(required) <= set(node.allowed_tools):
            yield Violation(f"{path}.requiredCapabilities", "Must be unique and allowed tools")
        if needs_capability and not required:
            yield Violation(f"{path}.requiredCapabilities", "An executed node needs a capability")
        if node.budgets.maximum_tool_calls < len(set(required)):
            yield Violation(
                f"{path}.budgets.maximumToolCalls", "Too few calls for its capabilities"
            )


@rule("WP-NODE-CRITERIA")
def wp_node_criteria(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Unknown criteria, or completion criteria in the initial analyze_and_fix plan."""
    contract = _contract(c)
    if contract is None:
        return
    stages = {criterion.id: criterion.stage for criterion in contract.acceptance_criteria}
    diagnosis_only = c.mode == "analyze_and_fix" and not unlocks(c)
    for index, node in enumerate(c.body.nodes):
        for criterion in node.acceptance_criteria:
            if criterion not in stages:
                yield Violation(f"nodes.{index}.acceptanceCriteria", "Unknown criterion")
            elif diagnosis_only and stages[criterion] != "diagnosis":
                yield Violation(
                    f"nodes.{index}.acceptanceCriteria",
                    "Before the diagnosis gate a plan holds diagnosis criteria only: the "
                    "completion criteria go in the fix plan, after a proceed_to_fix QualityReview",
                )


@rule("WP-NODE-SPAWN-CHILDREN")
def wp_node_spawn_children(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Requiring subagent.spawn in a node that reserves no child."""
    for index, node in enumerate(c.body.nodes):
        if "subagent.spawn" in node.required_capabilities and node.budgets.maximum_children < 1:
            yield Violation(
                f"nodes.{index}.budgets.maximumChildren", "A required spawn needs a child budget"
            )


@rule("WP-COVERAGE")
def wp_coverage(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Leaving a criterion of the active stage (or of the controlling work order) uncovered."""
    order = controlling_order(c.state)
    needed = set(stage_criteria(c.state) if order is None else order.criterion_ids)
    covered = {criterion for node in c.body.nodes for criterion in node.acceptance_criteria}
    for missing in sorted(needed - covered):
        yield Violation(
            "nodes",
            f"No node covers criterion {missing} of this stage or order; expected lists the "
            "criteria the plan must cover",
            sorted(needed),
        )


@rule("WP-SCOPED-ORDER", section="§3.4 WorkPlan (scoped replanning)")
def wp_scoped(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A replan that escapes its work order: uncited review, more calls, tools, permissions or
    criteria than the order grants."""
    order = controlling_order(c.state)
    if order is None:
        return
    if c.body.global_budgets.maximum_tool_calls > order.maximum_tool_calls:
        yield Violation("globalBudgets.maximumToolCalls", "Exceeds the work order's tool calls")
    for index, node in enumerate(c.body.nodes):
        path = f"nodes.{index}"
        if order.source.uri not in node.input_refs:
            yield Violation(f"{path}.inputRefs", "Every node must cite the controlling review")
        if not set(node.allowed_tools) <= set(order.allowed_capabilities):
            yield Violation(f"{path}.allowedTools", "Exceeds the work order's capabilities")
        if not is_subset(node.permissions, order.permissions):
            yield Violation(f"{path}.permissions", "Exceeds the work order's permissions")
        if not set(node.acceptance_criteria) <= set(order.criterion_ids):
            yield Violation(f"{path}.acceptanceCriteria", "Outside the work order's criteria")


def _verifiers(c: Check[WorkPlan], capability: str, stage: str) -> list[int]:
    contract = c.state.latest("TaskContract")
    if contract is None:
        return []
    stages = {a.id: a.stage for a in contract.body.acceptance_criteria}
    return [
        index
        for index, node in enumerate(c.body.nodes)
        if capability in node.required_capabilities
        and any(stages.get(criterion) == stage for criterion in node.acceptance_criteria)
    ]


def _required(c: Check[WorkPlan]) -> Iterator[tuple[int, str, str]]:
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    # The one active verification stage, or None when every stage counts.
    active = None if c.mode != "analyze_and_fix" else "completion" if unlocks(c) else "diagnosis"
    for index, v in enumerate(contract.body.verification_requirements):
        if v.required and active in (None, v.stage):
            yield index, v.capability, v.stage


@rule("WP-VERIFICATION-PREFLIGHT", section="§3.4 WorkPlan (verification preflight)")
def wp_verification_preflight(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A plan in which some required verification of the active stage can never run."""
    for index, capability, stage in _required(c):
        if not _verifiers(c, capability, stage):
            yield Violation(
                "nodes",
                f"No node requires {capability} and covers a {stage} criterion, so required "
                f"verification #{index} could never run",
            )


def _ancestors(nodes: list[WorkNode], start: WorkNode) -> set[str]:
    by_id = {node.id: node for node in nodes}
    seen: set[str] = set()
    stack = list(start.depends_on)
    while stack:
        current = stack.pop()
        if current not in seen and current in by_id:
            seen.add(current)
            stack.extend(by_id[current].depends_on)
    return seen


@rule("WP-VERIFIER-AFTER-MUTATION", section="§3.4 WorkPlan (verification preflight)")
def wp_verifier_after_mutation(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A completion verifier node that does not depend on every potentially-mutating node."""
    nodes = list(c.body.nodes)
    mutators = {n.id for n in nodes if MAY_MUTATE & set(n.allowed_tools)}
    flagged: set[int] = set()
    for _, capability, stage in _required(c):
        if stage != "completion":
            continue
        for index in _verifiers(c, capability, stage):
            node = nodes[index]
            if index not in flagged and mutators - {node.id} - _ancestors(nodes, node):
                flagged.add(index)
                yield Violation(
                    f"nodes.{index}.dependsOn",
                    "A completion verifier must run after every node that may mutate",
                )


RULES: Final = rule.registered
