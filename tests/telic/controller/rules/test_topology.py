"""Topologies on request (docs/protocol.md §3.5): classification, micro, escalation, forensic.

``classify`` is the original Telic's classification, with ASCII word semantics and UTF-16
lengths; a run asks for a topology and is refused when its request does not fit. Each
``TP-*`` rule is proven by a refusal that changes nothing, except the pre-escalation, which
is a committed move whose error says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from telic._errors import InvalidTransition, RuleViolation
from telic.controller import Controller, StartRequest
from telic.controller._events import Rejection, SubmitArtifact, Token
from telic.controller._machine import step
from telic.controller._state import RunState
from telic.controller._topology import certify, classify
from telic.ledger import Ledger, open_ledger
from tests.telic.controller.builders import READ, Flow
from tests.telic.controller.rules.harness import VR, first_plan, refuse, snapshot
from tests.telic.controller.rules.test_quality import gate

pytestmark = pytest.mark.anyio


def _classify(
    request: str,
    mode: Any = "report_only",
    granted: tuple[str, ...] = (),
    override: Any = None,
    **lists: Any,
) -> tuple[str, str]:
    found = classify(
        request=request,
        mode=mode,
        granted=granted,
        shell_execute_allowlist=lists.get("allowlist", ()),
        network_read_domains=lists.get("domains", ()),
        override=override,
    )
    return found.topology, found.rationale


READ_ONLY = ("repository.read",)
WRITE = ("repository.read", "repository.write")


@pytest.mark.parametrize(
    ("request_text", "mode", "granted", "expected"),
    [
        ("Summarise the repository.", "report_only", (), ("micro", "MICRO_SHORT_REPORT_ONLY")),
        ("Summarise it.", "report_only", READ_ONLY, ("micro", "MICRO_SHORT_REPORT_ONLY")),
        ("Either summarise or list it.", "report_only", (), ("standard", "DEFAULT_STANDARD")),
        ("x" * 201, "report_only", (), ("standard", "DEFAULT_STANDARD")),
        ("x" * 513, "report_only", (), ("forensic", "LONG_REQUEST")),
        ("\n".join("x" * 13), "report_only", (), ("forensic", "LONG_REQUEST")),
        ("Refactor the parser.", "report_only", (), ("forensic", "COMPLEXITY_KEYWORD")),
        ("Refactoring notes.", "report_only", (), ("micro", "MICRO_SHORT_REPORT_ONLY")),
        ("Fix typo in src/foo.ts", "fix_only", WRITE, ("micro", "MICRO_SHORT_FIX_ONLY")),
        ("Fix typo in src/a.ts and src/b.ts", "fix_only", WRITE, ("micro", "MICRO_SHORT_FIX_ONLY")),
        ("Fix the typo", "fix_only", WRITE, ("forensic", "ELEVATED_CAPABILITY")),
        ("Fix it", "fix_only", READ_ONLY, ("standard", "FIX_ONLY")),
        (
            "Find it",
            "analyze_only",
            ("repository.read", "shell.inspect"),
            ("standard", "INVESTIGATIVE_MODE"),
        ),
        ("Find it", "analyze_only", READ_ONLY, ("standard", "DEFAULT_STANDARD")),
        ("Plan it", "plan_only", READ_ONLY, ("standard", "PLAN_ONLY")),
        ("Fix it", "analyze_and_fix", READ_ONLY, ("forensic", "ANALYZE_AND_FIX")),
    ],
)
def test_classification_follows_the_originals_rules_in_order(
    request_text: str, mode: str, granted: tuple[str, ...], expected: tuple[str, str]
) -> None:
    assert _classify(request_text, mode, granted) == expected


def test_word_tests_use_ascii_boundaries_and_lengths_count_utf16_units() -> None:
    # "é" is no ASCII word character, so a boundary sits beside "refactor" as in JavaScript
    # (with Unicode semantics neither word below would hold a boundary there).
    assert _classify("Ére-refactor notes", "report_only")[0] == "forensic"
    assert _classify("Les notes refactorées", "report_only")[0] == "forensic"
    assert _classify("Les notes refactoring", "report_only")[0] == "micro"
    # 100 emoji are 100 code points but 200 UTF-16 units: still short; 101 are not.
    assert _classify("\U0001f600" * 100)[0] == "micro"
    assert _classify("\U0001f600" * 101)[0] == "standard"


def test_signals_and_overrides() -> None:
    signals = classify(
        request="Refactor it",
        mode="analyze_only",
        granted=READ_ONLY,
        shell_execute_allowlist=("pytest",),
        network_read_domains=("example.com",),
        override="forensic",
    ).signals
    assert signals == (
        "COMPLEXITY_KEYWORD",
        "NETWORK_READ",
        "OVERRIDE_FORENSIC",
        "SHELL_EXECUTE_ALLOWLIST",
    )
    assert _classify("Summarise it.", override="standard") == ("standard", "OVERRIDE_STANDARD")
    assert _classify("Summarise it.", override="micro") == ("micro", "MICRO_SHORT_REPORT_ONLY")
    # A micro fix can only be classified, never asked for: its write grant is a forensic signal.
    with pytest.raises(RuleViolation):
        _classify("Fix typo in src/foo.ts", "fix_only", WRITE, override="micro")


async def _refused_start(ledger: Ledger, mode: str, topology: str, rule: str) -> None:
    controller = Controller(ledger)
    with pytest.raises(RuleViolation) as caught:
        await controller.start_run(
            StartRequest(
                "Refactor the parser across the codebase.",
                mode,  # type: ignore[arg-type]
                topology_override=topology,  # type: ignore[arg-type]
            ),
            repository_root="/repo",
        )
    assert caught.value.rules == (rule,)
    assert caught.value.issues[0].expected == "forensic"
    assert await controller.list_runs() == ()  # nothing was stored


@pytest.mark.rule("TP-OVERRIDE-MICRO")
async def test_micro_is_refused_for_a_request_that_is_not_a_short_question() -> None:
    async with open_ledger("memory://") as ledger:
        await _refused_start(ledger, "report_only", "micro", "TP-OVERRIDE-MICRO")


@pytest.mark.rule("TP-OVERRIDE-STANDARD")
async def test_standard_is_refused_for_a_request_with_forensic_signals() -> None:
    async with open_ledger("memory://") as ledger:
        await _refused_start(ledger, "report_only", "standard", "TP-OVERRIDE-STANDARD")


async def _started(ledger: Ledger, mode: str, topology: str) -> Flow:
    flow = await Flow.start(ledger, mode, topology_override=topology)
    if mode != "report_only":
        flow.b.permissions = READ
    flow.b.verifications = [] if mode in ("report_only", "plan_only") else [VR]
    await flow.ground(1)
    return flow


async def _spot(ledger: Ledger) -> Flow:
    """A micro report_only run waiting for its spot review."""
    flow = await _started(ledger, "report_only", "micro")
    await flow.submit("ProblemFrame", flow.b.frame())
    return flow


def _spot_review(flow: Flow, decision: str = "pass", **over: Any) -> dict[str, Any]:
    return flow.b.quality_review(
        "qr-1",
        plan="plan-01",
        results=(),
        evidence="plan-01",
        contract="contract-01",
        decision=decision,
        **over,
    )


async def test_a_micro_run_takes_five_versions_and_rests_on_its_receipt() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        assert (flow.version, flow.last.run.phase) == (3, "agent_3_review")
        assert flow.action.instruction_ref.endswith("/quality_controller-spot-v1")
        details = await flow.controller.get_run(flow.b.run_id)
        assert [a.artifact_id for a in details.artifacts][-3:] == [
            "frame-1",
            "contract-01",
            "plan-01",
        ]
        await flow.submit("QualityReview", _spot_review(flow))
        receipt = await flow.controller.get_artifact(flow.b.run_id, "receipt-01")
        assert receipt.body["digestStatus"] == "verified"
        review = await flow.controller.get_artifact(flow.b.run_id, "qr-1")
        assert review.body["reviewKind"] == "spot"  # stored with the default, as the original
        await flow.submit("UserReport", flow.b.report(evidence=("plan-01",)))
        assert (flow.version, flow.last.run.status) == (5, "completed")


@pytest.mark.rule("TP-RESERVED-ID")
async def test_a_host_cannot_take_an_id_the_controller_will_store() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "micro")
        await refuse(flow, "ProblemFrame", flow.b.frame("contract-01"))
        await flow.submit("ProblemFrame", flow.b.frame())
        await refuse(flow, "QualityReview", _spot_review(flow) | {"id": "receipt-01"})


@pytest.mark.rule("TP-MICRO-FRAME-CRITERIA")
async def test_a_micro_frame_has_exactly_one_criterion() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "micro")
        two = [*flow.b.criteria, flow.b.criteria[0] | {"id": "AC-2"}]
        await refuse(flow, "ProblemFrame", flow.b.frame(draftAcceptanceCriteria=two))


@pytest.mark.rule("TP-MICRO-FRAME-FACTS")
async def test_a_micro_frame_has_at_most_three_facts() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "micro")
        fact = flow.b.frame()["knownFacts"][0]
        facts = [fact | {"id": f"F-{n}"} for n in range(1, 5)]
        await refuse(flow, "ProblemFrame", flow.b.frame(knownFacts=facts))


@pytest.mark.rule("TP-MICRO-FRAME-CLARIFICATION")
async def test_a_micro_frame_never_requires_clarification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "micro")
        await flow.submit("ClarificationRequest", flow.b.clarification())
        await flow.answer("keep")
        clarification = {"required": True, "reason": "Asked.", "requestRef": flow.b.request}
        frame = flow.b.frame(clarification=clarification)
        clar = flow.b.uri("clar-1")
        answer = next(
            a.artifact_id
            for a in (await flow.controller.get_run(flow.b.run_id)).artifacts
            if a.type == "UserMessage" and clar in a.source_refs
        )
        await refuse(flow, "ProblemFrame", frame, [clar, flow.b.uri(answer)])


@pytest.mark.rule("TP-MICRO-NO-FIX")
async def test_a_micro_spot_review_never_proceeds_to_fix() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        bad = _spot_review(flow, "proceed_to_fix", diagnosisGate=gate(flow, ("AC-1",)))
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("TP-MICRO-REPORT-RECEIPT")
async def test_a_completed_micro_report_needs_the_receipt_of_the_latest_review() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        await flow.submit("QualityReview", _spot_review(flow, "block"))
        await refuse(flow, "UserReport", flow.b.report(evidence=("plan-01",)))


@pytest.mark.rule("TP-MICRO-REPORT-CITE")
async def test_a_micro_report_that_is_not_completed_cites_the_latest_review() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        await flow.submit("QualityReview", _spot_review(flow, "block"))
        await refuse(flow, "UserReport", flow.b.report(status="blocked"))
        await flow.submit("UserReport", flow.b.report(status="blocked", findings=("qr-1",)))
        assert flow.last.run.status == "blocked"


async def test_a_partial_spot_review_escalates_to_contract_review_without_a_remediation() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        await flow.submit("QualityReview", _spot_review(flow, "partial"))
        run = flow.last.run
        assert (run.topology, run.escalation_count, run.phase) == ("standard", 1, "agent_1_review")
        assert run.remediations_remaining == 1
        trace = (await flow.controller.get_trace(flow.b.run_id)).events
        assert [e.event_type for e in trace][-2:] == ["phase_submitted", "topology_escalated"]
        assert trace[-1].rationale_summary == "MICRO_SPOT_PARTIAL"
        assert trace[-2].rationale_summary.startswith("MICRO_SPOT_PARTIAL")


@pytest.mark.rule("TP-PRE-ESCALATION")
async def test_a_user_reported_micro_claim_moves_the_run_to_standard_and_stores_nothing() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        await flow.submit("QualityReview", _spot_review(flow))
        report = flow.b.report(evidence=("plan-01",))
        report["completionClaims"][0]["status"] = "user_reported"
        before = await snapshot(flow)
        with pytest.raises(InvalidTransition) as caught:
            await flow.submit("UserReport", report)
        assert caught.value.rules == ("TP-PRE-ESCALATION",)
        assert caught.value.message.startswith(
            "Topology escalated to standard (MICRO_USER_REPORTED)"
        )
        after = await snapshot(flow)
        assert after.version == before.version + 1
        assert after.artifacts == before.artifacts  # the report was not stored
        details = await flow.controller.get_run(flow.b.run_id)
        assert (details.run.topology, details.run.phase) == ("standard", "agent_1_review")
        assert caught.value.issues[0].expected == {
            "actionId": details.next_action.id,
            "expectedRunVersion": details.run.version,
        }


async def _forensic(ledger: Ledger) -> Flow:
    """A forensic analyze_only run waiting for its second, re-verifying review."""
    flow = await _started(ledger, "analyze_only", "forensic")
    b = flow.b
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    await flow.submit("WorkPlan", first_plan(flow))
    await flow.submit("Evidence", b.evidence())
    await flow.submit("WorkResult", b.result())
    await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))
    assert flow.last.run.phase == "agent_3_evidence_reverify"
    return flow


@pytest.mark.rule("TP-REVERIFY-KIND")
async def test_the_reverify_review_says_it_reverifies() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _forensic(ledger)
        await refuse(flow, "QualityReview", flow.b.quality_review("qr-2", verifications=["VR-1"]))
        again = flow.b.quality_review(
            "qr-2", verifications=["VR-1"], reviewKind="evidence_reverify"
        )
        await flow.submit("QualityReview", again)
        assert flow.last.run.phase == "agent_5_audit"
        details = await flow.controller.get_run(flow.b.run_id)
        assert "receipt-01" not in [a.artifact_id for a in details.artifacts]


@pytest.mark.rule("TP-REVERIFY-DECISION")
async def test_the_reverify_review_decides_pass_partial_or_block() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _forensic(ledger)
        bad = flow.b.quality_review(
            "qr-2",
            verifications=["VR-1"],
            decision="remediate",
            reviewKind="evidence_reverify",
            remediationWorkOrder=flow.b.remediation(),
        )
        await refuse(flow, "QualityReview", bad)


@pytest.mark.rule("TP-ESCALATION-LIMIT")
async def test_a_third_escalation_is_refused() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "standard")
        b = flow.b
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        await flow.submit("WorkPlan", first_plan(flow))
        await flow.submit("QualityReview", b.quality_review(results=(), evidence="plan-1"))
        audit = b.audit(results=(), evidence=("plan-1",))
        audit["claimEvidenceMatrix"][0] |= {"basis": "user_reported", "evidenceRefs": [b.request]}
        state = await flow.controller.load(b.run_id)
        spent = RunState(
            run=dataclasses.replace(state.run, escalation_count=2),
            artifacts=state.artifacts,
            trace=state.trace,
        )
        token = Token(*flow.token())
        outcome = step(
            spent, SubmitArtifact(token, "ReleaseAudit", audit, (), "2026-01-01T00:00:00.000Z")
        )
        assert isinstance(outcome, Rejection)
        assert outcome.error.rules == ("TP-ESCALATION-LIMIT",)
        assert "budget exhausted" in outcome.error.message


async def test_a_receipt_fails_when_a_cited_artifact_no_longer_matches_its_digest() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _spot(ledger)
        state = await flow.controller.load(flow.b.run_id)
        tampered = [
            dataclasses.replace(a, sha256="sha256:" + "0" * 64) if a.id == "plan-01" else a
            for a in state.artifacts
        ]
        changed = RunState(run=state.run, artifacts=tampered, trace=state.trace)
        review = step(
            changed,
            SubmitArtifact(
                Token(*flow.token()),
                "QualityReview",
                _spot_review(flow),
                (),
                "2026-01-01T00:00:00.000Z",
            ),
        )
        assert not isinstance(review, Rejection)
        record = next(a for a in review.artifacts if a.type == "QualityReview")
        receipt, verified = certify(changed, record, "2026-01-01T00:00:00.000Z")
        assert (receipt.wire["digestStatus"], verified) == ("failed", ())
        assert receipt.wire["claimEvidenceMatrix"][0]["status"] == "unverified"
        assert [e.event_type for e in review.events] == ["phase_submitted"]  # no digest_verified


async def test_a_micro_run_ended_by_a_second_clarification_reports_blocked_citing_it() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await _started(ledger, "report_only", "micro")
        await flow.submit("ClarificationRequest", flow.b.clarification())
        await flow.answer("keep")
        clar = flow.b.uri("clar-1")
        answer = next(
            a.artifact_id
            for a in (await flow.controller.get_run(flow.b.run_id)).artifacts
            if a.type == "UserMessage" and clar in a.source_refs
        )
        await flow.submit(
            "ClarificationRequest", flow.b.clarification("clar-2"), [clar, flow.b.uri(answer)]
        )
        assert (flow.last.run.phase, flow.last.run.outcome_hint) == ("agent_5_report", "blocked")
        assert flow.last.draft is not None
        assert flow.last.draft.body["findingRefs"] == [flow.b.uri("clar-2")]
        await flow.submit("UserReport", dict(flow.b.report(status="blocked", findings=("clar-2",))))
        assert flow.last.run.status == "blocked"
