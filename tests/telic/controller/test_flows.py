"""The §3.2 flows beyond the happy paths, and refusals that leave the ledger unchanged."""

from __future__ import annotations

import pytest

from telic._errors import InvalidTransition, LimitExceeded, RuleViolation, StaleToken
from telic.controller import ELICITED_EVENT, ELICITED_SUMMARY
from telic.ledger import open_ledger

from .builders import READ, Flow, shape

pytestmark = pytest.mark.anyio

VR = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read it",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}


async def _to_plan(flow: Flow) -> None:
    flow.b.permissions = READ
    flow.b.verifications = [VR]
    await flow.ground()
    await flow.submit("ProblemFrame", flow.b.frame())
    await flow.submit("TaskContract", flow.b.contract())
    await flow.submit("PromptReview", flow.b.prompt_review())


async def _executed(flow: Flow, status: str = "completed") -> None:
    b = flow.b
    await _to_plan(flow)
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
    await flow.submit("Evidence", b.evidence())
    await flow.submit("WorkResult", b.result(status=status))


async def _snapshot(flow: Flow) -> tuple[object, ...]:
    details = await flow.controller.get_run(flow.b.run_id)
    trace = await flow.controller.get_trace(flow.b.run_id, limit=500)
    return details.run, details.artifacts, tuple(e.id for e in trace.events)


async def test_stale_version_and_foreign_action_are_rejected_without_change() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_plan(flow)
        before = await _snapshot(flow)
        body = flow.b.plan(nodes=[flow.b.node(tools=["repository.read"])])
        action_id, version = flow.token()
        with pytest.raises(StaleToken, match="Stale run version 4; current version is 5"):
            await flow.controller.submit_artifact(flow.b.run_id, action_id, 4, "WorkPlan", body)
        with pytest.raises(StaleToken, match="Stale or foreign action_id"):
            await flow.controller.submit_artifact(
                flow.b.run_id, "action:other:5", version, "WorkPlan", body
            )
        assert await _snapshot(flow) == before


async def test_wrong_type_and_controller_owned_types_are_rejected_without_change() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_plan(flow)
        before = await _snapshot(flow)
        with pytest.raises(InvalidTransition) as wrong:
            await flow.submit("WorkResult", flow.b.result())
        assert wrong.value.rules == ("RUN-PHASE-TYPE",)
        with pytest.raises(InvalidTransition) as owned:
            await flow.submit("RunEnvelope", {"id": "x", "runId": flow.b.run_id})
        assert owned.value.rules == ("RUN-CONTROLLER-OWNED",)
        assert await _snapshot(flow) == before


async def test_revise_then_v2_then_pass_reaches_planning() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = READ, [VR]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review(decision="revise"))
        assert shape(flow.action)[1] == "agent_2_revision"
        assert flow.action.remaining_budgets.prompt_revisions == 0
        v2 = b.contract("contract-2", version=2, objective="Fix the parser's token skip")
        await flow.submit("TaskContract", v2, [b.uri("contract-1"), b.uri("review-1")])
        await flow.submit("PromptReview", b.prompt_review("review-2", "contract-2", revision=1))
        assert shape(flow.action)[1] == "agent_3_plan"
        assert flow.version == 7


async def test_a_revision_that_changes_an_uncorrected_field_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = READ, [VR]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review(decision="revise"))
        v2 = b.contract("contract-2", version=2, requiredOutputs=["A patch"])
        with pytest.raises(RuleViolation) as refused:
            await flow.submit("TaskContract", v2, [b.uri("contract-1"), b.uri("review-1")])
        assert "TC-REVISE-FIELDS" in refused.value.rules


async def test_a_blocking_prompt_review_leads_to_a_blocked_report() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        b.permissions, b.verifications = READ, [VR]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review(decision="block"))
        assert shape(flow.action)[1] == "user_report"
        with pytest.raises(RuleViolation):
            await flow.submit("UserReport", b.report())
        await flow.submit("UserReport", b.report(status="blocked", findings=["review-1"]))
        assert shape(flow.action) == ("terminal", "blocked", "blocked", None)


@pytest.mark.parametrize(
    ("choice", "status"), [("keep", "running"), ("stop", "cancelled"), ("restart", "cancelled")]
)
async def test_a_clarification_answer_resumes_or_cancels(choice: str, status: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await flow.ground()
        await flow.submit("ClarificationRequest", b.clarification(expanding=choice == "restart"))
        assert shape(flow.action) == ("clarification", "awaiting_clarification", None, None)
        assert flow.last.run.resume_phase == "agent_1_frame"
        await flow.answer(f"  {choice} ")
        assert flow.version == 4
        assert flow.last.run.status == status
        if status == "running":
            assert shape(flow.action)[1] == "agent_1_frame"
            with pytest.raises(RuleViolation) as missing:
                await flow.submit("ProblemFrame", b.frame())
            assert missing.value.rules == ("RUN-RESUME-LINEAGE",)
            answer = flow.last.run  # unchanged
            details = await flow.controller.get_run(b.run_id)
            answer_uri = b.uri(details.artifacts[-1].artifact_id)
            await flow.submit("ProblemFrame", b.frame(), [b.uri("clar-1"), answer_uri])
            assert answer.version == 4
            assert flow.version == 5
        else:
            assert shape(flow.action) == ("terminal", "cancelled", "cancelled", None)


async def test_a_second_clarification_is_stored_and_routes_to_a_blocked_report() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await flow.ground()
        await flow.submit("ClarificationRequest", b.clarification())
        await flow.answer("keep")
        await flow.submit("ClarificationRequest", b.clarification("clar-2"))
        assert shape(flow.action)[1] == "user_report"
        trace = await flow.controller.get_trace(b.run_id)
        assert trace.events[-1].event_type == "artifact_recorded"  # internal budget_consumed
        await flow.submit("UserReport", b.report(status="blocked", findings=["clar-2"]))
        assert shape(flow.action) == ("terminal", "blocked", "blocked", None)


async def test_quality_review_remediation_leads_to_a_new_plan_and_is_spent_once() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await _executed(flow)
        order = b.remediation()
        qr = b.quality_review(
            decision="remediate", verifications=["VR-1"], remediationWorkOrder=order
        )
        await flow.submit("QualityReview", qr)
        assert shape(flow.action)[1] == "agent_3_plan"
        assert flow.action.remaining_budgets.post_execution_remediations == 0
        node = b.node("node-2", tools=["repository.read"], input_refs=[b.uri("qr-1")])
        await flow.submit("WorkPlan", b.plan("plan-2", [node]))
        await flow.submit("Evidence", b.evidence("evidence-2"))
        await flow.submit(
            "WorkResult", b.result("result-2", "plan-2", "node-2", evidence="evidence-2")
        )
        again = b.quality_review(
            "qr-2",
            "plan-2",
            ["result-2"],
            "remediate",
            "evidence-2",
            verifications=["VR-1"],
            remediationWorkOrder=order,
        )
        with pytest.raises(RuleViolation) as exhausted:
            await flow.submit("QualityReview", again)
        assert "QR-REMAINING-REMEDIATIONS" in exhausted.value.rules
        block = b.quality_review(
            "qr-2",
            "plan-2",
            ["result-2"],
            "block",
            "evidence-2",
            verifications=["VR-1"],
            remaining=0,
        )
        await flow.submit("QualityReview", block)
        audit = b.audit(
            decision="block",
            qr="qr-2",
            plans=("plan-1", "plan-2"),
            results=("result-1", "result-2"),
            remaining=0,
        )
        await flow.submit("ReleaseAudit", audit)
        await flow.submit("UserReport", b.report(status="blocked", findings=["audit-1"]))
        assert shape(flow.action) == ("terminal", "blocked", "blocked", None)


async def test_release_audit_remediation_returns_to_planning() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await _executed(flow)
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))
        defect = {
            "id": "DEF-1",
            "failedCriterionIds": ["AC-1"],
            "description": "Unproven",
            "allowedCapabilities": ["repository.read"],
            "permissions": READ,
            "sourceRefs": [b.uri("qr-1")],
            "maximumToolCalls": 50,
            "returnToRole": "quality_controller",
            "rationaleSummary": "Again.",
        }
        audit = b.audit(decision="remediate", report=None, remediationDefect=defect)
        await flow.submit("ReleaseAudit", audit)
        assert shape(flow.action)[1] == "agent_3_plan"
        assert flow.last.run.outcome_hint is None
        assert flow.action.remaining_budgets.post_execution_remediations == 0


@pytest.mark.parametrize(
    ("result", "report"), [("partial", "partial"), ("failed", "failed_verification")]
)
async def test_an_unsuccessful_result_ends_execution_and_reports_honestly(
    result: str, report: str
) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await _executed(flow, status=result)
        assert shape(flow.action)[1] == "agent_3_quality_review"
        await flow.submit(
            "QualityReview", b.quality_review(decision="partial", verifications=["VR-1"])
        )
        await flow.submit("ReleaseAudit", b.audit(decision="partial"))
        with pytest.raises(RuleViolation):
            await flow.submit("UserReport", b.report())
        await flow.submit("UserReport", b.report(status=report, findings=["audit-1"]))
        assert shape(flow.action) == ("terminal", "partial", report, None)


async def test_cancel_mid_run_terminates_and_a_terminal_run_is_returned_unchanged() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_plan(flow)
        await flow.cancel()
        assert flow.version == 6
        assert shape(flow.action) == ("terminal", "cancelled", "cancelled", None)
        assert flow.action.report_ref is None
        await flow.cancel()
        assert flow.version == 6


async def test_four_thousand_tool_calls_are_accepted_and_one_more_is_rejected_atomically() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await _to_plan(flow)
        read = ["repository.read"]
        calls = [1000, 1000, 1000, 1]
        nodes = [b.node(f"n{i}", tools=read, calls=c) for i, c in enumerate(calls)]
        await flow.submit("WorkPlan", b.plan(nodes=nodes))
        assert flow.action.remaining_budgets.remaining_plan_tool_calls == 999
        await flow.submit("Evidence", b.evidence())
        for i in range(4):
            await flow.submit("WorkResult", b.result(f"result-{i}", node=f"n{i}"))
        results = [f"result-{i}" for i in range(4)]
        order = b.remediation(calls=1000)
        qr = b.quality_review(
            results=results,
            decision="remediate",
            verifications=["VR-1"],
            remediationWorkOrder=order,
        )
        await flow.submit("QualityReview", qr)
        cite = [b.uri("qr-1")]
        before = await _snapshot(flow)
        too_many = b.plan("plan-2", [b.node("m", tools=read, calls=1000, input_refs=cite)])
        with pytest.raises(RuleViolation) as refused:
            await flow.submit("WorkPlan", too_many)
        assert refused.value.rules == ("WP-CUMULATIVE-TOOL-CALLS",)
        assert await _snapshot(flow) == before
        exact = b.plan("plan-2", [b.node("m", tools=read, calls=999, input_refs=cite)])
        await flow.submit("WorkPlan", exact)
        assert flow.action.remaining_budgets.remaining_plan_tool_calls == 0


async def test_a_closure_of_257_references_fails_loudly_and_256_fit() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        before = await _snapshot(flow)
        with pytest.raises(LimitExceeded, match=r"exceeds 256 references \(257\)"):
            await flow.ground(documents=255)  # request + manifest + 255 documents
        assert await _snapshot(flow) == before
        await flow.ground(documents=254)
        assert len(flow.action.input_refs) == 256


@pytest.mark.parametrize("elicited", [False, True])
async def test_an_answer_the_user_chose_in_a_form_is_traced_with_its_provenance(
    elicited: bool,
) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await flow.ground()
        await flow.submit("ClarificationRequest", b.clarification())
        answered = await flow.controller.answer_clarification(
            b.run_id, *flow.token(), "keep", elicited=elicited
        )
        internal = [e.event_type for e in (await ledger.page_trace(b.run_id, 0, 500)).events]
        trace = await flow.controller.get_trace(b.run_id, limit=500)
    assert answered.run.status == "running"
    assert answered.run.version == 4
    expected = ELICITED_EVENT if elicited else "clarification_answered"
    assert internal[-1] == expected
    last = trace.events[-1]
    assert last.event_type == "transition_allowed"  # the canonical trace keeps 1.0's name
    suffix = f" {ELICITED_SUMMARY}" if elicited else ""
    assert last.rationale_summary == f"Clarification answered with resume{suffix}"
