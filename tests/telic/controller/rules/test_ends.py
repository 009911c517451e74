"""No dead ends and honest ends (issue #25).

An artifact that would leave the run no legal way to a terminal report is refused where it can
still be changed (the frame, the contract, the order that scopes a replan), and no rule forces an
untrue statement: a diagnosis may run the user's exact test command and keep its reproduced
failure, an action taken outside the permissions is recorded rather than hidden, the audit and the
report then say the permissions were not honoured, and an answered clarification can be framed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from telic._errors import InvalidTransition
from telic.ledger import Ledger, open_ledger
from tests.telic.controller.builders import ALL_GRANTS, FIX, READ, Flow, criterion, perms
from tests.telic.controller.rules.harness import (
    VR,
    compiling,
    framed,
    refuse,
    revising,
)
from tests.telic.draft_host import follow

pytestmark = pytest.mark.anyio

TEST = "pytest -q tests/test_pages.py"
SHELL_GRANTS = (*ALL_GRANTS, "shell.execute")


def _with_test(permissions: dict[str, Any]) -> dict[str, Any]:
    return permissions | {"shell": {"inspect": False, "executeAllowlist": [TEST]}}


RUN_TEST = {
    "id": "VR-TEST",
    "stage": "completion",
    "description": "Run the failing test",
    "required": True,
    "capability": "shell.execute",
    "fallback": None,
}


async def _start_with_test(ledger: Ledger, mode: str) -> Flow:
    """A grounded run whose user granted exactly one test command."""
    grants = ("repository.read", "shell.execute")
    if mode == "analyze_and_fix":
        grants = (*grants, "repository.write")
    flow = await Flow.start(
        ledger,
        mode,
        host_capabilities=SHELL_GRANTS,
        authorization_granted=grants,
        shell_execute_allowlist=[TEST],
    )
    await flow.ground()
    return flow


def _test_run(flow: Flow, aid: str, evidence: str, mutating: bool = False) -> dict[str, Any]:
    return flow.b.action(aid, "shell.execute", TEST, evidence) | {"mutating": mutating}


def _failed_test(flow: Flow, evidence: str = "evidence-1") -> dict[str, Any]:
    return {
        "id": "T-1",
        "name": "test_page_count_partial_last_page",
        "status": "failed",
        "commandRef": None,
        "outputRef": flow.b.uri(evidence),
        "exitCode": 1,
        "rationaleSummary": "Reproduced: 2 pages expected, 1 counted.",
    }


# ------------------------------------------------------------------ dead ends, caught early


@pytest.mark.rule("PF-STAGE-CRITERIA")
@pytest.mark.parametrize("mode", ["analyze_only", "report_only", "plan_only", "fix_only"])
async def test_a_frame_with_only_diagnosis_criteria_is_refused_outside_analyze_and_fix(
    mode: str,
) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger, mode)
        staged = [criterion("AC-1", "diagnosis")]
        error = await refuse(flow, "ProblemFrame", flow.b.frame(draftAcceptanceCriteria=staged))
        [issue] = [i for i in error.issues if i.rule == "PF-STAGE-CRITERIA"]
        assert issue.path == "draftAcceptanceCriteria.0.stage"
        assert "'completion'" in issue.message
        await flow.submit("ProblemFrame", flow.b.frame())


@pytest.mark.parametrize("mode", ["analyze_only", "report_only", "plan_only", "fix_only"])
async def test_a_diagnosis_criterion_beside_a_completion_one_stays_accepted_as_in_1_0(
    mode: str,
) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger, mode)
        mixed = [criterion("AC-1", "completion"), criterion("AC-2", "diagnosis")]
        await flow.submit("ProblemFrame", flow.b.frame(draftAcceptanceCriteria=mixed))


@pytest.mark.rule("PF-STAGE-CRITERIA")
async def test_a_frame_without_criteria_is_refused_because_no_contract_could_copy_it() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(draftAcceptanceCriteria=[]))


@pytest.mark.rule("PF-STAGE-CRITERIA")
@pytest.mark.parametrize("stage", ["diagnosis", "completion"])
async def test_an_analyze_and_fix_frame_needs_both_stages(stage: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger, "analyze_and_fix")
        one = [criterion("AC-1", stage)]
        error = await refuse(flow, "ProblemFrame", flow.b.frame(draftAcceptanceCriteria=one))
        missing = "completion" if stage == "diagnosis" else "diagnosis"
        assert f"stage '{missing}'" in error.issues[0].message


@pytest.mark.rule("TC-STAGE-CRITERIA")
async def test_a_revision_cannot_bring_in_a_diagnosis_criterion() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await revising(ledger)
        b = flow.b
        body = b.contract(
            "contract-2",
            version=2,
            objective="Fix the token skip",
            acceptanceCriteria=[criterion("AC-1", "diagnosis")],
        )
        await refuse(flow, "TaskContract", body, [b.uri("contract-1"), b.uri("review-1")])


@pytest.mark.rule("TC-VERIFICATION-REACHABLE")
async def test_a_verification_no_node_could_ever_run_is_refused_at_the_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)  # analyze_only, no shell.execute granted
        contract = flow.b.contract(
            verificationRequirements=[RUN_TEST], permissions=_with_test(READ)
        )
        error = await refuse(flow, "TaskContract", contract)
        [issue] = [i for i in error.issues if i.rule == "TC-VERIFICATION-REACHABLE"]
        assert issue.path == "verificationRequirements.0.capability"
        assert "use one of: repository.read, shell.inspect" in issue.message
        await flow.submit("TaskContract", flow.b.contract())


async def test_the_contract_permission_refusal_names_what_exceeds() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        error = await refuse(
            flow,
            "TaskContract",
            flow.b.contract(permissions=_with_test(READ)),
            rules=["TC-PERMISSIONS-AUTHORIZED"],
        )
        assert "in shell.execute" in error.issues[0].message


# ------------------------------------------------------------------ the user's exact test command


async def test_analyze_only_reproduces_a_failing_test_with_the_users_command_and_completes() -> (
    None
):
    async with open_ledger("memory://") as ledger:
        flow = await _start_with_test(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = _with_test(READ), [RUN_TEST]
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["shell.execute"])]))
        assert flow.action.effective_permissions.shell.execute_allowlist == [TEST]
        await flow.submit("Evidence", b.evidence(kind="test"))
        result = b.result(actions=[_test_run(flow, "A-1", "evidence-1")])
        result["testResults"] = [_failed_test(flow)]
        await flow.submit("WorkResult", result)
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-TEST"]))
        await flow.submit("ReleaseAudit", b.audit())
        await flow.submit("UserReport", b.report(verifications=["evidence-1"]))
        trace = await flow.controller.get_trace(b.run_id)
    assert flow.action.phase == "completed"
    [decision] = [e.permission_decision for e in trace.events if e.permission_decision]
    assert (decision.decision, decision.scope) == ("allow", TEST)


@pytest.mark.rule("WR-NO-MUTATION")
async def test_a_diagnosis_command_declared_mutating_stays_refused_with_a_deny() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _start_with_test(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = _with_test(READ), [RUN_TEST]
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["shell.execute"])]))
        await flow.submit("Evidence", b.evidence(kind="test"))
        body = b.result(actions=[_test_run(flow, "A-1", "evidence-1", mutating=True)])
        error = await refuse(flow, "WorkResult", body, deny=1)
        assert "status unauthorized" in error.issues[0].message
        assert "WR-ACTION-AUTHORIZED" not in error.rules, "the gate is WR-NO-MUTATION's to name"


async def _diagnosing_with_test(ledger: Ledger) -> Flow:
    """An analyze_and_fix run whose diagnosis verification runs the user's test command."""
    flow = await _start_with_test(ledger, "analyze_and_fix")
    b = flow.b
    b.permissions = _with_test(FIX)
    b.criteria = [criterion("AC-1", "diagnosis"), criterion("AC-2", "completion")]
    b.verifications = [RUN_TEST | {"stage": "diagnosis"}, VR | {"id": "VR-COMP"}]
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    return flow


async def test_analyze_and_fix_runs_the_failing_test_before_the_gate() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        b = flow.b
        node = b.node("diag", ["AC-1"], ["shell.execute"], _with_test(READ))
        await flow.submit("WorkPlan", b.plan(nodes=[node]))
        await flow.submit("Evidence", b.evidence(kind="test"))
        result = b.result(node="diag", actions=[_test_run(flow, "A-1", "evidence-1")])
        result["testResults"] = [_failed_test(flow)]
        await flow.submit("WorkResult", result)
        assert flow.action.phase == "agent_3_quality_review"


@pytest.mark.rule("WP-NODE-PERMISSIONS-CEILING")
async def test_a_write_before_the_gate_is_refused_naming_it_and_the_fix_plan() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        b = flow.b
        node = b.node("diag", ["AC-1"], ["shell.execute"], _with_test(FIX))
        error = await refuse(flow, "WorkPlan", b.plan(nodes=[node]))
        message = error.issues[0].message
        assert "repository.write" in message
        assert "shell.execute" not in message.split(" before ")[0]
        assert "fix plan" in message


# ------------------------------------------------------------------ honest records


async def _executing_read(ledger: Ledger) -> Flow:
    """An analyze_only run executing a read node, evidence-1 captured."""
    flow = await framed(ledger)
    b = flow.b
    b.permissions = READ
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
    await flow.submit("Evidence", b.evidence(kind="tool_output"))
    return flow


def _with_breach(flow: Flow) -> dict[str, Any]:
    b = flow.b
    actions = [
        b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
        b.action("A-2", "shell.execute", TEST, "evidence-1", "unauthorized"),
    ]
    body = b.result(actions=actions)
    body["deviations"] = ["Ran the failing test although shell.execute was not granted"]
    return body


async def test_an_action_outside_the_permissions_is_recorded_and_its_deny_traced() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _executing_read(ledger)
        await flow.submit("WorkResult", _with_breach(flow))
        trace = await flow.controller.get_trace(flow.b.run_id)
    decisions = [(d.decision, d.capability) for e in trace.events if (d := e.permission_decision)]
    assert decisions == [("allow", "repository.read"), ("deny", "shell.execute")]


@pytest.mark.rule("WR-UNAUTHORIZED-REAL")
async def test_an_authorized_action_cannot_be_recorded_as_unauthorized() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _executing_read(ledger)
        b = flow.b
        actions = [
            b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
            b.action("A-2", "repository.read", "src/app.py", "evidence-1", "unauthorized"),
        ]
        await refuse(flow, "WorkResult", b.result(actions=actions))


async def test_an_action_within_the_permissions_but_outside_allowed_tools_is_recordable() -> None:
    """WR-ACTION-ALLOWED-TOOL refuses it as completed and says to record it unauthorized; that
    record must then pass, or a real action would have no status (fresh-eyes trial r5)."""
    async with open_ledger("memory://") as ledger:
        flow = await _start_with_test(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = _with_test(READ), [VR]
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
        assert flow.action.effective_permissions.shell.execute_allowlist == [TEST]
        await flow.submit("Evidence", b.evidence(kind="tool_output"))
        read = b.action("A-1", "repository.read", "src/app.py", "evidence-1")
        completed = b.result(actions=[read, _test_run(flow, "A-2", "evidence-1")])
        error = await refuse(flow, "WorkResult", completed, rules=["WR-ACTION-ALLOWED-TOOL"])
        assert "status unauthorized" in error.issues[0].message
        ran = _test_run(flow, "A-2", "evidence-1") | {"status": "unauthorized"}
        await flow.submit("WorkResult", b.result(actions=[read, ran]))


async def test_after_a_recorded_breach_the_audit_draft_fails_mode_compliance() -> None:
    """The draft must not offer what RA-PERMISSIONS-BREACH refuses (fresh-eyes trial r7)."""
    async with open_ledger("memory://") as ledger:
        flow = await _executing_read(ledger)
        await flow.submit("WorkResult", _with_breach(flow))
        await flow.submit("QualityReview", flow.b.quality_review(verifications=["VR-1"]))
        assert flow.last.draft is not None
        draft = json.loads(json.dumps(flow.last.draft.to_wire()))
        assert draft["type"] == "ReleaseAudit"
        assert draft["body"]["modeCompliance"] == "fail"
        assert draft["body"]["decision"] == "partial"
        [decision] = [f for f in draft["fill"] if f["path"] == "/decision"]
        assert "release" not in [choice["value"] for choice in decision["choices"]]
        await flow.submit("ReleaseAudit", follow(draft))
        report = json.loads(json.dumps(flow.last.draft.to_wire()))
        assert report["body"]["permissionsHonored"] is False
        await flow.submit("UserReport", follow(report))
    assert flow.action.phase == "partial"


@pytest.mark.rule("RA-PERMISSIONS-BREACH")
async def test_a_recorded_breach_fails_mode_compliance_and_the_run_ends_partial() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _executing_read(ledger)
        b = flow.b
        await flow.submit("WorkResult", _with_breach(flow))
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))
        error = await refuse(flow, "ReleaseAudit", b.audit())
        assert "set modeCompliance to fail" in error.issues[0].message
        await flow.submit("ReleaseAudit", b.audit(decision="partial", modeCompliance="fail"))
        await refuse(
            flow,
            "UserReport",
            b.report(status="partial", findings=["audit-1"]),
            rules=["UR-AUDIT-LINK"],
        )
        await flow.submit(
            "UserReport", b.report(status="partial", findings=["audit-1"], honored=False)
        )
        assert flow.action.phase == "partial"


@pytest.mark.rule("WR-COMPLETED-FAILED-TEST")
async def test_fixing_work_with_a_failed_test_is_not_completed() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(
            ledger,
            "fix_only",
            host_capabilities=SHELL_GRANTS,
            authorization_granted=("repository.read", "repository.write", "shell.execute"),
            shell_execute_allowlist=[TEST],
        )
        b = flow.b
        b.permissions, b.verifications = _with_test(FIX), [VR]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        tools = ["repository.read", "shell.execute"]
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=tools)]))
        await flow.submit("Evidence", b.evidence(kind="tool_output"))
        actions = [
            b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
            _test_run(flow, "A-2", "evidence-1"),
        ]
        body = b.result(actions=actions)
        body["testResults"] = [_failed_test(flow)]
        await refuse(flow, "WorkResult", body)


# ------------------------------------------------------------------ clarification, framed


@pytest.mark.rule("PF-CLARIFICATION-NOT-REQUIRED")
async def test_an_answered_clarification_can_be_framed_with_its_unknown_kept() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        b = flow.b
        await flow.submit("ClarificationRequest", b.clarification(expanding=True))
        await flow.answer("keep")
        details = await flow.controller.get_run(b.run_id)
        lineage = [b.uri("clar-1"), b.uri(details.artifacts[-1].artifact_id)]
        unknown = {
            "id": "U-1",
            "question": "May Telic read the repository?",
            "classification": "permission_expanding",
            "impact": "Decides what can be reported.",
            "evidenceInspected": [],
        }
        cites_request = {"required": True, "reason": "Asked; the user answered", "requestRef": ""}
        wrong = b.frame(unknowns=[unknown], clarification=cites_request | {"requestRef": b.request})
        error = await refuse(flow, "ProblemFrame", wrong, lineage)
        assert "requestRef must name the ClarificationRequest" in error.issues[0].message
        right = b.frame(
            unknowns=[unknown], clarification=cites_request | {"requestRef": b.uri("clar-1")}
        )
        await flow.submit("ProblemFrame", right, lineage)
        assert flow.action.phase == "agent_2_compile"


# ------------------------------------------------------------------ work orders keep a way out


def _read_and_test() -> dict[str, Any]:
    return _with_test(READ)


@pytest.mark.rule("QR-CORRECTION-ORDER")
async def test_a_correction_order_lets_the_fix_plan_run_the_completion_verification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        order = _order(flow, ["repository.write"])
        review = await _gate_review(flow, order)
        error = await refuse(flow, "QualityReview", review)
        assert any("allow repository.read" in i.message for i in error.issues)
        order["allowedCapabilities"] = ["repository.read", "repository.write"]
        await flow.submit("QualityReview", review)
        assert flow.action.phase == "agent_3_plan"


def _inspect_only_order(flow: Flow) -> dict[str, Any]:
    return {
        "id": "RWO-1",
        "failedCriterionIds": ["AC-1"],
        "objective": "Try again",
        "allowedCapabilities": ["shell.inspect"],
        "permissions": perms(shell_inspect=True),
        "sourceRefs": [flow.b.uri("evidence-1")],
        "maximumToolCalls": 10,
        "rationaleSummary": "Remediate.",
    }


async def _judging_with_inspect(ledger: Ledger) -> Flow:
    """An analyze_only run (read and inspect permitted, VR-1 reads) waiting for its review."""
    flow = await framed(ledger)
    b = flow.b
    b.permissions = perms(read=["**"], shell_inspect=True)
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
    await flow.submit("Evidence", b.evidence())
    await flow.submit("WorkResult", b.result(status="failed"))
    return flow


@pytest.mark.rule("QR-REMEDIATION-ORDER")
async def test_a_remediation_order_lets_the_replan_run_each_required_verification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _judging_with_inspect(ledger)
        b = flow.b
        order = _inspect_only_order(flow)
        review = b.quality_review(
            decision="remediate", verifications=["VR-1"], remediationWorkOrder=order
        )
        error = await refuse(flow, "QualityReview", review)
        assert "allow repository.read" in error.issues[0].message
        order["allowedCapabilities"] = ["repository.read", "shell.inspect"]
        order["permissions"] = b.permissions
        await flow.submit("QualityReview", review)
        replan = b.node(tools=["repository.read"], input_refs=[b.uri("qr-1")])
        await flow.submit("WorkPlan", b.plan("plan-2", [replan]))


@pytest.mark.rule("RA-DEFECT-SCOPE")
async def test_an_audit_defect_lets_the_replan_run_each_required_verification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _judging_with_inspect(ledger)
        b = flow.b
        await flow.submit(
            "QualityReview", b.quality_review(decision="partial", verifications=["VR-1"])
        )
        defect = _inspect_only_order(flow) | {
            "id": "DEF-1",
            "description": "Unproven",
            "returnToRole": "quality_controller",
            "sourceRefs": [b.uri("qr-1")],
        }
        del defect["objective"]
        audit = b.audit(decision="remediate", report=None, remediationDefect=defect)
        error = await refuse(flow, "ReleaseAudit", audit)
        assert "allow repository.read" in error.issues[0].message
        defect["allowedCapabilities"] = ["repository.read"]
        defect["permissions"] = READ
        await flow.submit("ReleaseAudit", audit)


@pytest.mark.rule("QR-REMEDIATION-ORDER")
async def test_after_the_unlock_a_remediation_names_a_completion_criterion() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        b = flow.b
        tools = ["repository.read", "repository.write"]
        await flow.submit("QualityReview", await _gate_review(flow, _order(flow, tools)))
        fix = b.node("fix", ["AC-2"], tools, FIX, 10, input_refs=[b.uri("qr-1")])
        await flow.submit("WorkPlan", b.plan("plan-2", [fix]))
        await flow.submit("Evidence", b.evidence("evidence-2", kind="diff"))
        await flow.submit("Evidence", b.evidence("evidence-3", kind="tool_output"))
        failed = b.result(
            "result-2", "plan-2", "fix", "failed", evidence="evidence-2", criteria=["AC-2"]
        )
        await flow.submit("WorkResult", failed)
        diagnosis_only = b.remediation(evidence="evidence-2", tools=tools, permissions=FIX)
        review = b.quality_review(
            "qr-2",
            "plan-2",
            ["result-2"],
            "remediate",
            evidence="evidence-3",
            criteria=["AC-1", "AC-2"],
            verifications=["VR-TEST", "VR-COMP"],
            remaining=1,
            remediationWorkOrder=diagnosis_only,
        )
        error = await refuse(flow, "QualityReview", review)
        assert any("name a completion criterion" in i.message for i in error.issues)
        diagnosis_only["failedCriterionIds"] = ["AC-2"]
        await flow.submit("QualityReview", review)


# ------------------------------------------------------------------ report_only, to completed


async def test_report_only_completes_by_citing_the_plan_as_the_refusals_say() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger, "report_only")
        b = flow.b
        b.permissions = perms()  # report_only is granted nothing
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(calls=0)]))
        evidence = await refuse(
            flow, "Evidence", b.evidence(), error=InvalidTransition, rules=["EV-EXECUTION-ONLY"]
        )
        assert "cite the latest WorkPlan" in evidence.message
        wrong = b.quality_review(results=(), evidence="frame-1")
        error = await refuse(flow, "QualityReview", wrong, rules=["REF-DIRECT-EVIDENCE"])
        assert all(b.uri("plan-1") in i.message for i in error.issues)
        await flow.submit("QualityReview", b.quality_review(results=(), evidence="plan-1"))
        await flow.submit("ReleaseAudit", b.audit(results=(), evidence=("plan-1",)))
        await flow.submit("UserReport", b.report(evidence=("plan-1",)))
    assert (flow.action.kind, flow.action.phase) == ("terminal", "completed")


@pytest.mark.rule("UR-EARLY-BLOCK")
async def test_a_run_blocked_mid_execution_does_not_claim_honoured_permissions() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        b = flow.b
        b.permissions = READ
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        read = ["repository.read"]
        nodes = [b.node("node-1", tools=read), b.node("node-2", tools=read)]
        await flow.submit("WorkPlan", b.plan(nodes=nodes))
        await flow.submit("Evidence", b.evidence(kind="tool_output"))
        await flow.submit("WorkResult", _with_breach(flow))
        await flow.submit("ClarificationRequest", b.clarification())
        await flow.answer("keep")
        await flow.submit("ClarificationRequest", b.clarification("clar-2"))
        assert flow.action.phase == "user_report"
        honoured = b.report(status="blocked", findings=["review-1"])
        error = await refuse(flow, "UserReport", honoured)
        assert "permissionsHonored is false" in error.issues[0].message
        await flow.submit("UserReport", honoured | {"permissionsHonored": False})
        assert flow.action.phase == "blocked"


@pytest.mark.rule("WP-CUMULATIVE-TOOL-CALLS")
async def test_a_diagnosis_plan_leaves_the_fix_plan_its_minimum() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        b = flow.b
        tools = ["shell.execute"]
        # The fix needs 1 change + 1 read-back (VR-COMP is repository.read): 2 calls.
        nodes = [b.node(f"d{i}", ["AC-1"], tools, _read_and_test(), 1000) for i in range(4)]
        error = await refuse(flow, "WorkPlan", b.plan(nodes=nodes))
        assert "keep 2 for the fix plan" in error.issues[0].message
        nodes[-1]["budgets"]["maximumToolCalls"] = 998
        await flow.submit("WorkPlan", b.plan(nodes=nodes))


def _order(flow: Flow, tools: list[str]) -> dict[str, Any]:
    """The proceed_to_fix review's correction order for AC-2, allowing ``tools``."""
    return {
        "id": "CWO-1",
        "targetCriterionIds": ["AC-2"],
        "objective": "Fix it",
        "allowedCapabilities": tools,
        "permissions": FIX,
        "sourceRefs": [flow.b.uri("evidence-1")],
        "maximumToolCalls": 10,
        "rationaleSummary": "Fix.",
    }


async def _gate_review(flow: Flow, order: dict[str, Any]) -> dict[str, Any]:
    """Run the diagnosis node with the user's test command; return a proceed_to_fix review
    whose gate carries ``order`` (by reference: a test may change it and submit again)."""
    b = flow.b
    node = b.node("diag", ["AC-1"], ["shell.execute"], _read_and_test())
    await flow.submit("WorkPlan", b.plan(nodes=[node]))
    await flow.submit("Evidence", b.evidence(kind="test"))
    await flow.submit(
        "WorkResult", b.result(node="diag", actions=[_test_run(flow, "A-1", "evidence-1")])
    )
    gate = {
        "id": "DG-1",
        "status": "supported",
        "rootCause": "Floor division",
        "directEvidenceRefs": [b.uri("evidence-1")],
        "correctionWorkOrder": order,
        "withinApprovedScope": True,
        "permissionsSufficient": True,
        "rationaleSummary": "Shown.",
    }
    return b.quality_review(
        decision="proceed_to_fix", criteria=["AC-1"], verifications=["VR-TEST"], diagnosisGate=gate
    )


@pytest.mark.rule("QR-CORRECTION-ORDER")
@pytest.mark.parametrize("problem", ["no_change", "too_few_calls"])
async def test_a_correction_order_leaves_room_for_a_change_and_its_verification(
    problem: str,
) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _diagnosing_with_test(ledger)
        order = _order(flow, ["repository.read", "repository.write"])
        review = await _gate_review(flow, order)
        if problem == "no_change":
            order["allowedCapabilities"] = ["repository.read"]
            expected = "allow repository.write, repository.delete or shell.execute"
        else:
            order["maximumToolCalls"] = 1
            expected = "at least 2 tool calls"
        error = await refuse(flow, "QualityReview", review)
        assert any(expected in i.message for i in error.issues)
        order["allowedCapabilities"] = ["repository.read", "repository.write"]
        order["maximumToolCalls"] = 2
        await flow.submit("QualityReview", review)


async def test_a_mutating_command_already_run_in_a_diagnosis_is_recorded_and_denied() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _start_with_test(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = _with_test(READ), [RUN_TEST]
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["shell.execute"])]))
        await flow.submit("Evidence", b.evidence(kind="test"))
        ran = _test_run(flow, "A-1", "evidence-1", mutating=True) | {"status": "unauthorized"}
        # The state changed, so the verifying run follows it (WR-VERIFY-AFTER-MUTATION).
        body = b.result(actions=[ran, _test_run(flow, "A-2", "evidence-1")])
        await flow.submit("WorkResult", body)
        trace = await flow.controller.get_trace(b.run_id)
        decisions = [
            (d.decision, d.rationale_summary) for e in trace.events if (d := e.permission_decision)
        ]
        assert decisions[0] == ("deny", "Mutation is not allowed in analyze_only")
        assert decisions[1][0] == "allow"
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-TEST"]))
        await refuse(flow, "ReleaseAudit", b.audit(), rules=["RA-PERMISSIONS-BREACH"])


@pytest.mark.rule("WR-ACTION-BUDGET")
async def test_a_breach_on_record_never_needs_budget_room() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        b = flow.b
        b.permissions = READ
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"], calls=1)]))
        await flow.submit("Evidence", b.evidence(kind="tool_output"))
        read = b.action("A-1", "repository.read", "src/app.py", "evidence-1")
        second = b.action("A-3", "repository.read", "src/other.py", "evidence-1")
        await refuse(flow, "WorkResult", b.result(actions=[read, second]))
        await flow.submit("WorkResult", _with_breach(flow))  # one read + one unauthorized
