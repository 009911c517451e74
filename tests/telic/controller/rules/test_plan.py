"""WorkPlan invariants: lineage, budgets, node permissions, coverage and the preflight."""

from __future__ import annotations

from typing import Any

import pytest

from telic.ledger import Ledger, open_ledger
from tests.telic.controller.builders import ALL_GRANTS, FIX, READ, Flow, perms
from tests.telic.controller.rules.harness import VR, judging, planning, refuse

pytestmark = pytest.mark.anyio
READ_TOOLS = ["repository.read"]


def _read_plan(flow: Flow, **node: Any) -> dict[str, Any]:
    return flow.b.plan(nodes=[flow.b.node(tools=READ_TOOLS, **node)])


async def _planning_with(
    ledger: Ledger, permissions: dict[str, Any], mode: str = "analyze_only", **start: Any
) -> Flow:
    flow = await Flow.start(ledger, mode, **start)
    flow.b.permissions, flow.b.verifications = permissions, [VR]
    await flow.ground()
    await flow.submit("ProblemFrame", flow.b.frame())
    await flow.submit("TaskContract", flow.b.contract())
    await flow.submit("PromptReview", flow.b.prompt_review())
    return flow


SPAWN = perms(read=["**"]) | {"subagents": {"spawn": True, "maximumChildren": 3, "maximumDepth": 1}}


async def spawning(ledger: Ledger) -> Flow:
    """An analyze_only run whose contract may spawn subagents, waiting for its plan."""
    return await _planning_with(
        ledger,
        SPAWN,
        native_subagents="available",
        host_capabilities=(*ALL_GRANTS, "subagent.spawn"),
        authorization_granted=("repository.read", "subagent.spawn"),
    )


def spawn_plan(flow: Flow, children: int) -> dict[str, Any]:
    """A plan whose node reads and spawns, reserving ``children`` children."""
    node = flow.b.node(tools=[*READ_TOOLS, "subagent.spawn"], permissions=SPAWN)
    node["budgets"]["maximumChildren"] = children
    plan = flow.b.plan(nodes=[node])
    plan["globalBudgets"]["maximumSubagentDepth"] = 1
    return plan


@pytest.mark.rule("WP-CONTRACT-LATEST")
async def test_a_plan_follows_the_latest_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        await refuse(
            flow,
            "WorkPlan",
            flow.b.plan(contract="review-1", nodes=[flow.b.node(tools=READ_TOOLS)]),
        )
        await flow.submit("WorkPlan", _read_plan(flow))


@pytest.mark.rule("WP-PLAN-VALID")
async def test_a_plan_is_declared_valid() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        await refuse(flow, "WorkPlan", _read_plan(flow) | {"planValidation": "pending"})


@pytest.mark.rule("WP-PLAN-TOOL-CALLS")
async def test_node_budgets_fit_the_plan_budget() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        plan = flow.b.plan(nodes=[flow.b.node(tools=READ_TOOLS)], budget=4)
        await refuse(flow, "WorkPlan", plan)


@pytest.mark.rule("WP-CUMULATIVE-TOOL-CALLS")
async def test_a_run_reserves_at_most_four_thousand_calls() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        nodes = [flow.b.node(f"n{i}", tools=READ_TOOLS, calls=1000) for i in range(5)]
        await refuse(flow, "WorkPlan", flow.b.plan(nodes=nodes, budget=4000))
        nodes = [flow.b.node(f"n{i}", tools=READ_TOOLS, calls=1000) for i in range(4)]
        await flow.submit("WorkPlan", flow.b.plan(nodes=nodes))


@pytest.mark.rule("WP-ENVELOPE-BUDGETS")
async def test_plan_depth_fits_the_envelope() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        plan = _read_plan(flow)
        plan["globalBudgets"]["maximumSubagentDepth"] = 1
        await refuse(flow, "WorkPlan", plan)


@pytest.mark.rule("WP-NODE-PERMISSIONS-CONTRACT")
async def test_a_node_is_no_broader_than_the_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        wider = perms(read=["**"], shell_inspect=True)
        await refuse(flow, "WorkPlan", _read_plan(flow, permissions=wider))


@pytest.mark.rule("WP-NODE-PERMISSIONS-CEILING")
async def test_no_write_before_the_diagnosis_gate() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger, "analyze_and_fix")
        node = flow.b.node("diag", ["AC-1"], ["repository.read"], FIX)
        await refuse(flow, "WorkPlan", flow.b.plan(nodes=[node]))
        node = flow.b.node("diag", ["AC-1"], ["repository.read"], READ)
        await flow.submit("WorkPlan", flow.b.plan(nodes=[node]))


@pytest.mark.rule("WP-NODE-CHILDREN")
async def test_a_node_child_budget_fits_its_permission() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        plan = _read_plan(flow)
        plan["nodes"][0]["budgets"]["maximumChildren"] = 2
        await refuse(flow, "WorkPlan", plan)


@pytest.mark.rule("WP-NODE-CAPABILITIES")
@pytest.mark.parametrize("problem", ["unbacked", "unallowed", "none", "too_few_calls"])
async def test_node_capabilities_are_backed_allowed_and_affordable(problem: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        plan = _read_plan(flow)
        node = plan["nodes"][0]
        if problem == "unbacked":
            node["allowedTools"].append("shell.inspect")
        elif problem == "unallowed":
            node["requiredCapabilities"].append("shell.inspect")
        elif problem == "none":
            node["requiredCapabilities"] = []
        else:
            node["budgets"]["maximumToolCalls"] = 0
            plan["globalBudgets"]["maximumToolCalls"] = 0
        await refuse(flow, "WorkPlan", plan)


@pytest.mark.rule("WP-NODE-CRITERIA")
@pytest.mark.parametrize("mode", ["analyze_only", "analyze_and_fix"])
async def test_node_criteria_exist_and_fit_the_stage(mode: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger, mode)
        criteria = ["AC-1", "AC-9"] if mode == "analyze_only" else ["AC-1", "AC-2"]
        perms_ = READ
        await refuse(
            flow,
            "WorkPlan",
            flow.b.plan(
                nodes=[flow.b.node(criteria=criteria, tools=READ_TOOLS, permissions=perms_)]
            ),
        )


@pytest.mark.rule("WP-NODE-SPAWN-CHILDREN")
async def test_a_required_spawn_reserves_a_child() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await spawning(ledger)
        await refuse(flow, "WorkPlan", spawn_plan(flow, 0))
        await flow.submit("WorkPlan", spawn_plan(flow, 1))


@pytest.mark.rule("WP-COVERAGE")
async def test_a_plan_covers_every_criterion_of_its_stage() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        await refuse(flow, "WorkPlan", _read_plan(flow, criteria=()))


@pytest.mark.rule("WP-SCOPED-ORDER")
@pytest.mark.parametrize("escape", ["uncited", "tools", "calls", "criteria"])
async def test_a_replan_stays_inside_its_work_order(escape: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        b = flow.b
        order = b.remediation(calls=10)
        review = b.quality_review(
            decision="remediate", verifications=["VR-1"], remediationWorkOrder=order
        )
        await flow.submit("QualityReview", review)
        cite = [b.uri("qr-1")]
        node = b.node("node-2", tools=READ_TOOLS, input_refs=cite)
        if escape == "uncited":
            node["inputRefs"] = []
        elif escape == "tools":
            node["allowedTools"] = [*READ_TOOLS, "shell.inspect"]
        elif escape == "calls":
            node["budgets"]["maximumToolCalls"] = 11
        plan = b.plan("plan-2", [node])
        rules = None if escape != "criteria" else ["WP-SCOPED-ORDER"]
        if escape == "criteria":
            plan["nodes"].append(
                b.node("node-3", criteria=("AC-9",), tools=READ_TOOLS, input_refs=cite)
            )
            plan["globalBudgets"]["maximumToolCalls"] = 10
            plan["nodes"][0]["budgets"]["maximumToolCalls"] = 5
        await refuse(flow, "WorkPlan", plan, rules=rules)
        await flow.submit(
            "WorkPlan", b.plan("plan-2", [b.node("node-2", tools=READ_TOOLS, input_refs=cite)])
        )


@pytest.mark.rule("WP-VERIFICATION-PREFLIGHT")
async def test_each_required_verification_has_a_node_to_run_it() -> None:
    async with open_ledger("memory://") as ledger:
        inspect = perms(read=["**"], shell_inspect=True)
        flow = await _planning_with(ledger, inspect)
        node = flow.b.node(tools=["repository.read", "shell.inspect"])
        node["requiredCapabilities"] = ["shell.inspect"]
        await refuse(flow, "WorkPlan", flow.b.plan(nodes=[node]))
        node["requiredCapabilities"] = ["repository.read"]
        await flow.submit("WorkPlan", flow.b.plan(nodes=[node]))


@pytest.mark.rule("WP-VERIFIER-AFTER-MUTATION")
async def test_completion_verification_depends_on_every_mutating_node() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _planning_with(ledger, FIX, "fix_only")
        b = flow.b
        write = b.node("write", tools=["repository.write"])
        verify = b.node("verify", tools=READ_TOOLS)
        await refuse(flow, "WorkPlan", b.plan(nodes=[write, verify]))
        verify["dependsOn"] = ["write"]
        await flow.submit("WorkPlan", b.plan(nodes=[write, verify]))
