"""The machine's own gates: tokens, run status, phase, body identity and caller sourceRefs."""

from __future__ import annotations

import pytest

from telic._errors import (
    InvalidTransition,
    LedgerConflict,
    RuleViolation,
    SchemaViolation,
    StaleToken,
)
from telic.ledger import open_ledger
from tests.telic.controller.builders import Flow, grounding
from tests.telic.controller.rules.harness import framed, planning, refuse, snapshot

pytestmark = pytest.mark.anyio


@pytest.mark.rule("RUN-TOKEN-VERSION")
async def test_a_stale_version_is_refused_without_change() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        before = await snapshot(flow)
        with pytest.raises(StaleToken) as caught:
            await flow.controller.submit_artifact(
                flow.b.run_id, flow.action.id, flow.version - 1, "ProblemFrame", flow.b.frame()
            )
        assert caught.value.rules == ("RUN-TOKEN-VERSION",)
        assert await snapshot(flow) == before
        await flow.submit("ProblemFrame", flow.b.frame())


@pytest.mark.rule("RUN-TOKEN-ACTION")
async def test_a_foreign_action_id_is_refused_without_change() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        before = await snapshot(flow)
        with pytest.raises(StaleToken) as caught:
            await flow.controller.submit_artifact(
                flow.b.run_id, "action:other:2", flow.version, "ProblemFrame", flow.b.frame()
            )
        assert caught.value.rules == ("RUN-TOKEN-ACTION",)
        assert await snapshot(flow) == before


@pytest.mark.rule("RUN-ACTIVE")
async def test_a_cancelled_run_accepts_nothing() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await flow.cancel()
        await refuse(flow, "ProblemFrame", flow.b.frame(), error=InvalidTransition)


@pytest.mark.rule("RUN-CONTROLLER-OWNED")
async def test_a_controller_owned_type_cannot_be_submitted() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        body = {"id": "m", "runId": flow.b.run_id}
        await refuse(flow, "ContextManifest", body, error=InvalidTransition)


@pytest.mark.rule("RUN-PHASE-TYPE")
async def test_a_type_the_phase_does_not_accept_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        await refuse(flow, "WorkResult", flow.b.result(), error=InvalidTransition)
        await flow.submit("WorkPlan", flow.b.plan(nodes=[flow.b.node(tools=["repository.read"])]))


@pytest.mark.rule("ANY-BODY")
async def test_a_body_without_string_id_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        body = flow.b.frame()
        body["id"] = 7
        await refuse(flow, "ProblemFrame", body, error=SchemaViolation)


@pytest.mark.rule("ANY-ID-FRESH")
async def test_an_artifact_id_is_never_reused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        plan = flow.b.plan("contract-1", [flow.b.node(tools=["repository.read"])])
        await refuse(flow, "WorkPlan", plan, error=LedgerConflict)


@pytest.mark.rule("REF-SOURCE-VALID")
@pytest.mark.parametrize("refs", [["repo://src/file0.py"] * 2, ["https://example.com"]])
async def test_repeated_or_invalid_caller_source_refs_are_refused(refs: list[str]) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(), refs, error=SchemaViolation)


@pytest.mark.rule("REF-SOURCE-LIMIT")
async def test_more_than_256_merged_source_refs_are_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        refs = [f"trace://{flow.b.run_id}/event-{n:04d}" for n in range(256)]
        await refuse(flow, "ProblemFrame", flow.b.frame(), refs)


@pytest.mark.rule("CM-DERIVED-REFS")
async def test_a_manifest_must_derive_from_exactly_its_documents() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        manifest, documents = grounding(flow.b.run_id, 2)
        before = await snapshot(flow)
        with pytest.raises(RuleViolation) as caught:
            await flow.controller.ground(flow.b.run_id, *flow.token(), manifest, documents[:1])
        assert caught.value.rules == ("CM-DERIVED-REFS",)
        assert await snapshot(flow) == before
        await flow.controller.ground(flow.b.run_id, *flow.token(), manifest, documents)


@pytest.mark.rule("CR-ANSWER-CHOICE")
async def test_a_clarification_answer_must_be_an_offered_choice() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await flow.submit("ClarificationRequest", flow.b.clarification())
        before = await snapshot(flow)
        with pytest.raises(RuleViolation) as caught:
            await flow.answer("keep going please")
        assert caught.value.rules == ("CR-ANSWER-CHOICE",)
        assert await snapshot(flow) == before
        await flow.answer("keep")


@pytest.mark.rule("EV-EXECUTION-ONLY")
async def test_evidence_outside_execution_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await planning(ledger)
        await refuse(flow, "Evidence", flow.b.evidence(), error=InvalidTransition)
