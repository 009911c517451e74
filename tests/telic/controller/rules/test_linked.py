"""Run lineage at the controller: which runs may be followed, and what a linked run may cite.

A run started with ``prior_run_id`` may follow only an ended, verifying run of its own ledger
and repository (``RUN-PRIOR-*``, checked before anything is stored). Its submissions may cite
the prior run's Evidence, read and re-verified for each submission; any other reference out of
the run is refused (``REF-SAME-RUN``), and so is a prior artifact that is missing, is not
Evidence or fails its digest check (``REF-LINKED-EVIDENCE``). Every refusal changes nothing.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from telic._errors import LineageRefused, RuleViolation
from telic.controller import Controller, StartRequest
from telic.ledger import Ledger, open_ledger
from tests.telic.controller.builders import READ, ROOT, Flow, clock_from, ids_from
from tests.telic.controller.rules.harness import VR, executing, judging, refuse

pytestmark = pytest.mark.anyio


async def _finished(ledger: Ledger) -> Flow:
    """An analyze_only run that completed with evidence-1 (of kind repository) stored."""
    flow = await judging(ledger)
    await flow.submit("QualityReview", flow.b.quality_review(verifications=["VR-1"]))
    await flow.submit("ReleaseAudit", flow.b.audit())
    await flow.submit("UserReport", flow.b.report(verifications=["evidence-1"]))
    assert flow.last.run.status == "completed"
    return flow


async def _linked(ledger: Ledger, prior: str, ids: str = "next") -> Flow:
    """Another run of the same ledger (ids ``<ids>-NNNN``), linked to ``prior``, executing its
    first plan with its own evidence-1 captured."""
    return await executing(ledger, prior_run_id=prior, new_id=ids_from(ids))


async def test_a_linked_run_records_its_prior_and_the_trace_says_so() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        second = await Flow.start(
            ledger, "analyze_only", prior_run_id=first.b.run_id, new_id=ids_from("next")
        )
        assert second.last.run.prior_run_id == first.b.run_id
        assert second.last.run.to_wire()["priorRunId"] == first.b.run_id
        trace = await second.controller.get_trace(second.b.run_id)
    linked = trace.events[1]
    assert [e.event_type for e in trace.events] == ["run_started", "lineage_linked"]
    assert (linked.actor, linked.phase) == ("controller", "context_discovery")
    assert linked.input_refs == [f"trace://{first.b.run_id}"]
    assert linked.output_refs == []
    assert linked.rationale_summary == f"Linked to prior run {first.b.run_id}"


async def test_a_linked_run_cites_the_prior_runs_evidence_and_completes() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        prior_evidence = first.b.uri("evidence-1")
        flow = await _linked(ledger, first.b.run_id)
        b = flow.b
        result = b.result()
        result["evidenceRefs"].append(prior_evidence)
        result["acceptanceCoverage"][0]["evidenceRefs"].append(prior_evidence)
        await flow.submit("WorkResult", result, [prior_evidence])
        review = b.quality_review(verifications=["VR-1"])
        review["acceptanceResults"][0]["evidenceRefs"].append(prior_evidence)
        await flow.submit("QualityReview", review)
        await flow.submit("ReleaseAudit", b.audit())
        report = b.report(verifications=["evidence-1"])
        await flow.submit("UserReport", report)
        assert flow.last.run.status == "completed"
        stored = await flow.controller.get_run(b.run_id)
    result_record = next(a for a in stored.artifacts if a.artifact_id == "result-1")
    assert prior_evidence in result_record.source_refs  # the caller's sourceRef is kept


@pytest.mark.rule("RUN-PRIOR-EXISTS")
@pytest.mark.parametrize("prior", ["no-such-run", "not a run id"])
async def test_a_prior_run_that_does_not_exist_is_refused_and_nothing_is_stored(
    prior: str,
) -> None:
    async with open_ledger("memory://") as ledger:
        with pytest.raises(LineageRefused) as caught:
            await Flow.start(ledger, "analyze_only", prior_run_id=prior)
        assert await ledger.list_runs() == ()
    assert caught.value.rules == ("RUN-PRIOR-EXISTS",)
    assert caught.value.code == "lineage_refused"
    assert caught.value.message.startswith(f"Prior run {prior} does not exist")


@pytest.mark.rule("RUN-PRIOR-TERMINAL")
async def test_a_running_prior_run_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        first = await executing(ledger)
        with pytest.raises(LineageRefused) as caught:
            await _linked(ledger, first.b.run_id)
        assert len(await ledger.list_runs()) == 1
    assert caught.value.rules == ("RUN-PRIOR-TERMINAL",)
    assert "Prior run must be terminal before lineage link" in caught.value.message
    assert "cancel" in caught.value.message


async def test_a_cancelled_prior_run_may_be_followed() -> None:
    async with open_ledger("memory://") as ledger:
        first = await executing(ledger)
        await first.controller.cancel(first.b.run_id, *first.token())
        second = await _linked(ledger, first.b.run_id)
    assert second.last.run.prior_run_id == first.b.run_id


@pytest.mark.rule("RUN-PRIOR-ROOT")
async def test_a_prior_run_of_another_repository_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        controller = Controller(ledger, clock=clock_from(), new_id=ids_from("other"))
        with pytest.raises(LineageRefused) as caught:
            await controller.start_run(
                StartRequest("Explain the parser", "analyze_only", prior_run_id=first.b.run_id),
                repository_root=ROOT + "-elsewhere",
            )
        assert len(await ledger.list_runs()) == 1
    assert caught.value.rules == ("RUN-PRIOR-ROOT",)
    assert caught.value.message.startswith("Prior run repository root mismatch")


def _tamper(state: Path, run_id: str, artifact_id: str) -> None:
    """Rewrite a stored body behind the ledger's back, as someone with the file could."""
    with closing(sqlite3.connect(state / "ledger.sqlite3")) as connection, connection:
        (digest,) = connection.execute(
            "SELECT sha256 FROM artifacts WHERE run_id = ? AND artifact_id = ?",
            (run_id, artifact_id),
        ).fetchone()
        connection.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (b"{}", digest))


def _rewrite_row(state: Path, run_id: str) -> None:
    """Change a sealed run row behind the ledger's back (its chain and bodies stay intact)."""
    with closing(sqlite3.connect(state / "ledger.sqlite3")) as connection, connection:
        sql = "UPDATE runs SET outcome_hint = 'partial' WHERE run_id = ?"
        connection.execute(sql, (run_id,))


@pytest.mark.rule("RUN-PRIOR-INTACT")
@pytest.mark.parametrize("broken", ["body", "row"])
async def test_a_prior_run_that_does_not_verify_is_refused(tmp_path: Path, broken: str) -> None:
    async with open_ledger(f"sqlite:///{tmp_path}") as ledger:
        first = await _finished(ledger)
        if broken == "body":
            _tamper(tmp_path, first.b.run_id, "evidence-1")
        else:
            _rewrite_row(tmp_path, first.b.run_id)
        with pytest.raises(LineageRefused) as caught:
            await _linked(ledger, first.b.run_id)
        assert len(await ledger.list_runs()) == 1
    assert caught.value.rules == ("RUN-PRIOR-INTACT",)
    assert caught.value.message.startswith("Artifact integrity check failed")


@pytest.mark.rule("REF-SAME-RUN")
async def test_an_unlinked_run_cannot_cite_another_runs_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        flow = await executing(ledger, new_id=ids_from("next"))
        error = await refuse(flow, "WorkResult", flow.b.result(), [first.b.uri("evidence-1")])
    assert "prior_run_id" in error.message


@pytest.mark.rule("REF-SAME-RUN")
async def test_a_linked_run_cannot_cite_a_run_other_than_its_prior() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        second = await _finished_after(ledger, first)
        flow = await _linked(ledger, second.b.run_id, ids="third")
        third_ref = first.b.uri("evidence-1")  # evidence, but of the prior's prior
        error = await refuse(flow, "WorkResult", flow.b.result(), [third_ref])
    assert "Cross-run artifact reference denied" in error.message
    assert second.b.uri("<evidence id>") in error.message


@pytest.mark.rule("REF-SAME-RUN")
async def test_evidence_of_a_linked_run_cites_only_its_own_run() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        flow = await _linked(ledger, first.b.run_id)
        evidence = flow.b.evidence("evidence-2")
        await refuse(flow, "Evidence", evidence, [first.b.uri("evidence-1")])


@pytest.mark.rule("REF-LINKED-EVIDENCE")
@pytest.mark.parametrize("target", ["result-1", "no-such-evidence"])
async def test_a_linked_run_cites_only_prior_evidence_that_exists(target: str) -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        flow = await _linked(ledger, first.b.run_id)
        error = await refuse(flow, "WorkResult", flow.b.result(), [first.b.uri(target)])
    expected = "must target an Evidence artifact" if target == "result-1" else "does not exist"
    assert expected in error.message


@pytest.mark.rule("REF-LINKED-EVIDENCE")
async def test_prior_evidence_that_fails_its_digest_on_read_is_refused(tmp_path: Path) -> None:
    async with open_ledger(f"sqlite:///{tmp_path}") as ledger:
        first = await _finished(ledger)
        flow = await _linked(ledger, first.b.run_id)
        _tamper(tmp_path, first.b.run_id, "evidence-1")
        error = await refuse(flow, "WorkResult", flow.b.result(), [first.b.uri("evidence-1")])
    assert "digest check" in error.message


@pytest.mark.rule("REF-TYPED-TARGET")
async def test_a_typed_field_cannot_name_prior_evidence() -> None:
    async with open_ledger("memory://") as ledger:
        first = await _finished(ledger)
        flow = await _linked(ledger, first.b.run_id)
        result = flow.b.result() | {"workPlanRef": first.b.uri("evidence-1")}
        await refuse(flow, "WorkResult", result)


async def _finished_after(ledger: Ledger, prior: Flow) -> Flow:
    """A second completed run, linked to ``prior``."""
    flow = await _linked(ledger, prior.b.run_id)
    await flow.submit("WorkResult", flow.b.result())
    await flow.submit("QualityReview", flow.b.quality_review(verifications=["VR-1"]))
    await flow.submit("ReleaseAudit", flow.b.audit())
    await flow.submit("UserReport", flow.b.report(verifications=["evidence-1"]))
    return flow


async def test_a_refused_citation_is_a_rule_violation_not_a_crash() -> None:
    assert issubclass(LineageRefused, RuleViolation)


@pytest.mark.parametrize("ending", ["blocked", "new_run", "cancel", "completed"])
async def test_an_ended_run_tells_the_host_how_to_follow_it_up_only_when_it_asks_for_one(
    ending: str,
) -> None:
    async with open_ledger("memory://") as ledger:
        if ending == "completed":
            flow = await _finished(ledger)
        else:
            flow = await Flow.start(ledger, "analyze_only")
            b = flow.b
            b.permissions, b.verifications = READ, [VR]
            await flow.ground()
        if ending == "blocked":
            await flow.submit("ProblemFrame", b.frame())
            await flow.submit("TaskContract", b.contract())
            await flow.submit("PromptReview", b.prompt_review(decision="block"))
            await flow.submit("UserReport", b.report(status="blocked", findings=["review-1"]))
        elif ending in ("new_run", "cancel"):
            await flow.submit("ClarificationRequest", b.clarification(expanding=True))
            await flow.answer("restart" if ending == "new_run" else "stop")
        action = flow.action
    assert action.kind == "terminal"
    hint = f'prior_run_id "{flow.b.run_id}"'
    if ending in ("blocked", "new_run"):
        assert hint in action.rationale_summary
    else:
        assert action.rationale_summary == "The run has ended; nothing more may happen."
