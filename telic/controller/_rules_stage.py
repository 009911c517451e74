"""Invariants of a plan's reach: coverage, scoped replans and the verification preflight.

A plan that would make its own contract unfinishable is refused before execution: it covers
every criterion of its stage (or of the work order that scopes it), maps each required
verification of the active stage to a node able to run it, and orders completion verification
after every node that may mutate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import controlling_order, stage_criteria
from telic.controller._phases import MAY_MUTATE
from telic.controller._rules_plan import unlocks
from telic.permissions import is_subset
from telic.protocol import WorkNode, WorkPlan

__all__ = ["RULES"]

_WP = ("WorkPlan",)
_S = "§3.4 WorkPlan"

rule = Rules(_WP, _S)


@rule("WP-NODE-SPAWN-CHILDREN", "Requiring subagent.spawn in a node that reserves no child.")
def wp_node_spawn_children(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A node that requires subagent.spawn reserves at least one child."""
    for index, node in enumerate(c.body.nodes):
        if "subagent.spawn" in node.required_capabilities and node.budgets.maximum_children < 1:
            yield Violation(
                f"nodes.{index}.budgets.maximumChildren", "A required spawn needs a child budget"
            )


@rule(
    "WP-COVERAGE",
    "Leaving a criterion of the active stage (or of the controlling work order) uncovered.",
)
def wp_coverage(c: Check[WorkPlan]) -> Iterator[Violation]:
    """The plan covers every criterion of its stage (or of its work order when scoped)."""
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


@rule(
    "WP-SCOPED-ORDER",
    "A replan that escapes its work order: uncited review, more calls, tools, permissions "
    "or criteria than the order grants.",
    section="§3.4 WorkPlan (scoped replanning)",
)
def wp_scoped(c: Check[WorkPlan]) -> Iterator[Violation]:
    """A replan after remediate or proceed_to_fix stays inside the controlling work order."""
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


def _stage_of(c: Check[WorkPlan]) -> str | None:
    """The one active verification stage, or None when every stage counts."""
    if c.mode != "analyze_and_fix":
        return None
    return "completion" if unlocks(c) else "diagnosis"


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
    active = _stage_of(c)
    for index, v in enumerate(contract.body.verification_requirements):
        if v.required and active in (None, v.stage):
            yield index, v.capability, v.stage


@rule(
    "WP-VERIFICATION-PREFLIGHT",
    "A plan in which some required verification of the active stage can never run.",
    section="§3.4 WorkPlan (verification preflight)",
)
def wp_verification_preflight(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Each required verification of the active stage has a node able to run it."""
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


@rule(
    "WP-VERIFIER-AFTER-MUTATION",
    "A completion verifier node that does not depend on every potentially-mutating node.",
    section="§3.4 WorkPlan (verification preflight)",
)
def wp_verifier_after_mutation(c: Check[WorkPlan]) -> Iterator[Violation]:
    """Completion verifiers are, or transitively depend on, every potentially-mutating node."""
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
