"""Rules every reference obeys, and what may stand as direct evidence (§3.4, every submission)."""

from __future__ import annotations

import pytest

from telic.ledger import open_ledger
from tests.telic.controller.rules.harness import executing, fix_result, framed, judging, refuse

pytestmark = pytest.mark.anyio


@pytest.mark.rule("REF-SAME-RUN")
async def test_a_reference_into_another_run_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(), ["artifact://other-run/frame-1"])
        await flow.submit("ProblemFrame", flow.b.frame())


@pytest.mark.rule("REF-EXISTS")
async def test_a_reference_to_a_missing_artifact_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(), [flow.b.uri("nothing-here")])


@pytest.mark.rule("REF-TYPED-TARGET")
async def test_a_typed_reference_must_name_its_type() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await flow.submit("ProblemFrame", flow.b.frame())
        contract = flow.b.contract(problemFrameRef=flow.b.request)
        await refuse(flow, "TaskContract", contract)
        await flow.submit("TaskContract", flow.b.contract())


@pytest.mark.rule("REF-SYSTEM")
@pytest.mark.parametrize(
    "ref", ["artifact://system/roles/executor-v1", "artifact://system/roles/overlord-v1"]
)
async def test_system_references_stay_in_system_fields_and_are_known(ref: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        frame = flow.b.frame(applicableRuleRefs=[ref])
        refs = [ref] if ref.endswith("executor-v1") else []
        await refuse(flow, "ProblemFrame", frame, refs)


@pytest.mark.rule("REF-REPO-SELECTED")
async def test_a_repo_reference_must_be_selected_by_the_manifest() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        fact = {"id": "F-2", "claim": "x", "provenance": "repository"}
        bad = flow.b.frame()
        bad["knownFacts"].append(fact | {"sourceRef": "repo://secret/notes.md"})
        await refuse(flow, "ProblemFrame", bad)
        good = flow.b.frame()
        good["knownFacts"].append(fact | {"sourceRef": "repo://src/file0.py"})
        await flow.submit("ProblemFrame", good)


@pytest.mark.rule("REF-TRACE-EVENT")
@pytest.mark.parametrize("event", ["event-9999", "no-such-event"])
async def test_a_trace_reference_must_name_an_existing_event(event: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(), [f"trace://{flow.b.run_id}/{event}"])
        first = (await flow.controller.get_trace(flow.b.run_id)).events[0]
        await flow.submit("ProblemFrame", flow.b.frame(), [f"trace://{flow.b.run_id}/{first.id}"])


@pytest.mark.rule("REF-DIRECT-EVIDENCE")
@pytest.mark.parametrize("proof", ["repo://src/file0.py", "trace", "request"])
async def test_only_evidence_proves_an_executed_outcome(proof: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        uri = {
            "repo://src/file0.py": proof,
            "trace": f"trace://{b.run_id}/event-0001",
            "request": b.request,
        }[proof]
        bad = b.result()
        bad["acceptanceCoverage"][0]["evidenceRefs"] = [uri]
        error = await refuse(flow, "WorkResult", bad)
        if uri.startswith(("repo://", "trace://")):  # the refusal says what passes instead
            assert "submit what you observed as Evidence" in error.issues[0].message
        await flow.submit("WorkResult", b.result())


@pytest.mark.rule("REF-DIRECT-EVIDENCE")
async def test_a_user_reported_claim_cites_the_users_message() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        observation = {
            "id": "O-1",
            "text": "The user saw it fail",
            "status": "user_reported",
            "evidenceRefs": [b.uri("evidence-1")],
            "confidence": 1,
        }
        bad = b.result()
        bad["observations"] = [observation]
        await refuse(flow, "WorkResult", bad)
        bad["observations"] = [observation | {"evidenceRefs": [b.request]}]
        await flow.submit("WorkResult", bad)


@pytest.mark.rule("REF-EVIDENCE-KIND")
@pytest.mark.parametrize("kind", ["browser", "runtime", "log"])
async def test_action_evidence_must_fit_the_capability(kind: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        await flow.submit("Evidence", b.evidence("evidence-2", kind=kind))
        bad = b.result()
        bad["actions"][0]["evidenceRefs"] = [b.uri("evidence-2")]
        await refuse(flow, "WorkResult", bad)
        await flow.submit("WorkResult", b.result())


@pytest.mark.rule("REF-EVIDENCE-KIND")
async def test_a_diff_ref_must_be_diff_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        await flow.submit("Evidence", flow.b.evidence("evidence-log", kind="log"))
        bad = fix_result(flow)
        bad["filesChanged"][0]["diffRef"] = flow.b.uri("evidence-log")
        await refuse(flow, "WorkResult", bad)
        await flow.submit("WorkResult", fix_result(flow))


@pytest.mark.rule("REF-EVIDENCE-KIND")
async def test_test_output_and_command_refs_must_be_tool_output_like() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        b = flow.b
        test = {
            "id": "T-1",
            "name": "unit tests",
            "status": "passed",
            "commandRef": b.uri("evidence-1"),
            "outputRef": b.uri("evidence-1"),
            "exitCode": 0,
            "rationaleSummary": "Ran.",
        }
        bad = b.result()
        bad["testResults"] = [test]
        await refuse(flow, "WorkResult", bad)
        await flow.submit("Evidence", b.evidence("evidence-t", kind="tool_output"))
        good = b.result()
        good["testResults"] = [
            test | {"commandRef": b.uri("evidence-t"), "outputRef": b.uri("evidence-t")}
        ]
        await flow.submit("WorkResult", good)


@pytest.mark.rule("REF-PERMISSION-NOT-EVIDENCE")
async def test_a_permission_decision_is_not_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await judging(ledger)
        b = flow.b
        trace = await flow.controller.get_trace(b.run_id, limit=500)
        checked = next(e for e in trace.events if e.event_type == "permission_checked")
        for ref in (
            f"trace://{b.run_id}/{checked.id}",
            f"trace://{b.run_id}/event-{checked.sequence:04d}",
        ):
            bad = b.quality_review(verifications=["VR-1"])
            bad["hardGates"][0]["evidenceRefs"] = [ref]
            await refuse(flow, "QualityReview", bad)
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))


@pytest.mark.rule("RUN-RESUME-LINEAGE")
async def test_the_resumed_phase_cites_the_clarification_and_its_answer() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await flow.submit("ClarificationRequest", flow.b.clarification())
        await flow.answer("keep")
        await refuse(flow, "ProblemFrame", flow.b.frame(), [flow.b.uri("clar-1")])
        details = await flow.controller.get_run(flow.b.run_id)
        answer = flow.b.uri(details.artifacts[-1].artifact_id)
        await flow.submit("ProblemFrame", flow.b.frame(), [flow.b.uri("clar-1"), answer])
