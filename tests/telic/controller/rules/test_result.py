"""WorkResult invariants: node order, budgets, coverage, action claims and file changes."""

from __future__ import annotations

from typing import Any

import pytest

from telic.ledger import open_ledger
from tests.telic.controller.builders import JSON, Flow, perms
from tests.telic.controller.rules.harness import VR, executing, fix_result, refuse
from tests.telic.controller.rules.test_plan import spawn_plan, spawning

pytestmark = pytest.mark.anyio


def unsuccessful(body: JSON, status: str) -> JSON:
    """Turn a completed result body into a ``status`` one (failing coverage, an open issue)."""
    body = body | {"status": status, "unresolvedIssues": ["It did not finish"]}
    for entry in body["acceptanceCoverage"]:
        entry["status"] = "fail"
    return body


@pytest.mark.rule("WR-PLAN-LATEST")
async def test_a_result_reports_on_the_latest_plan() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await refuse(flow, "WorkResult", flow.b.result(plan="contract-1"))
        await flow.submit("WorkResult", flow.b.result())


@pytest.mark.rule("WR-NODE-FIRST-READY")
async def test_a_result_reports_the_first_ready_node() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await refuse(flow, "WorkResult", flow.b.result(node="node-9"))


@pytest.mark.rule("WR-ACTION-BUDGET")
async def test_actions_fit_the_node_budget() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        actions = [
            b.action(f"A-{i}", "repository.read", "src/app.py", "evidence-1") for i in range(6)
        ]
        await refuse(flow, "WorkResult", b.result(actions=actions))


@pytest.mark.rule("WR-COVERAGE")
@pytest.mark.parametrize("criteria", [("AC-1", "AC-1"), ("AC-9",)])
async def test_coverage_names_the_nodes_criteria_once(criteria: tuple[str, ...]) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await refuse(flow, "WorkResult", unsuccessful(flow.b.result(criteria=criteria), "partial"))
        await flow.submit("WorkResult", unsuccessful(flow.b.result(), "partial"))


@pytest.mark.rule("WR-COMPLETED-COVERAGE")
async def test_completed_work_covers_every_node_criterion() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await refuse(flow, "WorkResult", flow.b.result(criteria=()))


@pytest.mark.rule("WR-COMPLETED-CAPABILITIES")
async def test_completed_work_exercised_every_required_capability() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await refuse(flow, "WorkResult", flow.b.result(actions=[]))


@pytest.mark.rule("WR-VERIFY-AFTER-MUTATION")
async def test_completion_verification_follows_the_last_mutation() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        body = fix_result(flow)
        body["actions"].reverse()
        await refuse(flow, "WorkResult", body)
        await flow.submit("WorkResult", fix_result(flow))


async def _inspecting(ledger: Any) -> Flow:
    flow = await Flow.start(ledger, "analyze_only")
    flow.b.permissions, flow.b.verifications = perms(read=["**"], shell_inspect=True), [VR]
    await flow.ground()
    await flow.submit("ProblemFrame", flow.b.frame())
    await flow.submit("TaskContract", flow.b.contract())
    await flow.submit("PromptReview", flow.b.prompt_review())
    await flow.submit(
        "WorkPlan", flow.b.plan(nodes=[flow.b.node(tools=["repository.read", "shell.inspect"])])
    )
    await flow.submit("Evidence", flow.b.evidence())
    await flow.submit("Evidence", flow.b.evidence("evidence-tool", kind="tool_output"))
    return flow


def _with_inspect(flow: Flow, target: str) -> JSON:
    b = flow.b
    actions = [
        b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
        b.action("A-2", "shell.inspect", target, "evidence-tool"),
    ]
    return b.result(actions=actions)


@pytest.mark.rule("WR-SHELL-INSPECT-TARGET")
@pytest.mark.parametrize("target", ["cat /etc/passwd", "git status", "git.status; rm -rf /"])
async def test_shell_inspect_names_a_typed_target(target: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _inspecting(ledger)
        # An untyped target is refused by the permission algebra too: one DENY record.
        error = await refuse(flow, "WorkResult", _with_inspect(flow, target), deny=1)
        assert "WR-ACTION-AUTHORIZED" not in error.rules
        await flow.submit("WorkResult", _with_inspect(flow, "git.status"))


@pytest.mark.rule("WR-ACTION-ALLOWED-TOOL")
async def test_an_action_uses_an_allowed_tool() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        actions = [
            b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
            b.action("A-2", "browser.inspect", "http://localhost:3000", "evidence-1", "failed"),
        ]
        body = unsuccessful(b.result(actions=actions), "failed")
        await refuse(flow, "WorkResult", body, deny=1)  # the node grants no browser.inspect


@pytest.mark.rule("WR-ACTION-AUTHORIZED")
@pytest.mark.parametrize(
    "target", ["../etc/passwd", "/etc/passwd", "%2e%2e/secrets", "src/../../x"]
)
async def test_an_action_target_is_authorized(target: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        actions = [b.action("A-1", "repository.read", target, "evidence-1")]
        await refuse(flow, "WorkResult", b.result(actions=actions), deny=1)
        await flow.submit("WorkResult", b.result())


@pytest.mark.rule("WR-FALSE-DENIAL")
async def test_a_denial_must_be_real() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        denied = b.action("A-2", "repository.read", "src/app.py", "evidence-1", "denied")
        actions = [b.action("A-1", "repository.read", "src/app.py", "evidence-1"), denied]
        await refuse(flow, "WorkResult", unsuccessful(b.result(actions=actions), "partial"))
        actions[1] = denied | {"target": "../outside.txt"}
        await flow.submit("WorkResult", unsuccessful(b.result(actions=actions), "partial"))


@pytest.mark.rule("WR-MUTATING-FLAG")
async def test_the_mutating_flag_tells_the_truth() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        body = fix_result(flow)
        body["actions"][0]["mutating"] = False
        await refuse(flow, "WorkResult", body)


@pytest.mark.rule("WR-SPAWN-COUNT")
async def test_completed_spawns_fit_the_child_budget() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await spawning(ledger)
        b = flow.b
        await flow.submit("WorkPlan", spawn_plan(flow, 1))
        await flow.submit("Evidence", b.evidence())
        await flow.submit("Evidence", b.evidence("evidence-tool", kind="tool_output"))
        read = b.action("A-1", "repository.read", "src/app.py", "evidence-1")
        spawns = [
            b.action(f"S-{i}", "subagent.spawn", f"child-{i}", "evidence-tool") for i in range(2)
        ]
        await refuse(flow, "WorkResult", b.result(actions=[read, *spawns]))
        await flow.submit("WorkResult", b.result(actions=[read, spawns[0]]))


STATUSES = ["completed", "partial", "blocked", "failed"]


def _status(body: JSON, status: str) -> JSON:
    return body if status == "completed" else unsuccessful(body, status)


@pytest.mark.rule("WR-FILE-CHANGES")
@pytest.mark.parametrize("status", STATUSES)
async def test_a_file_change_needs_its_completed_action(status: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        body = fix_result(flow)
        body["filesChanged"].append(body["filesChanged"][0] | {"path": "src/other.py"})
        await refuse(flow, "WorkResult", _status(body, status))
        await flow.submit("WorkResult", _status(fix_result(flow), status))


@pytest.mark.rule("WR-WRITE-FILE-CHANGE")
@pytest.mark.parametrize("status", STATUSES)
async def test_a_completed_write_needs_its_file_change(status: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        body = fix_result(flow)
        body["filesChanged"][0]["changeType"] = "modified"
        body["filesChanged"][0]["beforeHash"] = "sha256:" + "d" * 64
        deleted = fix_result(flow)
        deleted["filesChanged"][0] |= {
            "changeType": "deleted",
            "beforeHash": "sha256:" + "d" * 64,
            "afterHash": None,
        }
        await refuse(flow, "WorkResult", _status(deleted, status), deny=1)  # no delete grant
        await flow.submit("WorkResult", _status(body, status))


@pytest.mark.rule("WR-FILE-CHANGE-AUTHORIZED")
async def test_a_file_change_path_is_authorized() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        await refuse(flow, "WorkResult", fix_result(flow, path="docs/readme.md"), deny=1)
