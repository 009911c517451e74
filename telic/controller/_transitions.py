"""Where each accepted phase artifact takes the run (the "On accept" column of §3.2).

``transition`` is total over the phase artifact types and ends in ``assert_never``-style
exhaustiveness on the decision literals, so a decision added to the protocol without a route
here fails type checking.
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from telic.controller._derive import pending_node
from telic.controller._phases import EXECUTING_MODES
from telic.controller._state import RunState, StoredArtifact
from telic.ledger import OutcomeHint, RunRecord
from telic.protocol import PromptReview, QualityReview, ReleaseAudit, UserReport, WorkResult


def transition(state: RunState, artifact: StoredArtifact) -> RunRecord:
    """Return the run after ``artifact`` (already judged legal) is accepted, version unchanged.

    A first ClarificationRequest pauses the run; a second spends the clarification budget and
    routes it to the report (``budget_consumed``).
    """
    run = state.run
    match artifact.type:
        case "ClarificationRequest":
            if state.latest("ClarificationRequest") is None:
                return replace(run, status="awaiting_clarification", resume_phase=run.phase)
            return _to_report(run, "blocked")
        case "ContextManifest":
            return replace(run, phase="agent_1_frame")
        case "ProblemFrame":
            if run.topology == "micro":  # the controller stored contract-01 and plan-01 with it
                executes = run.requested_mode not in ("report_only", "plan_only")
                return replace(run, phase="agent_4_execute" if executes else "agent_3_review")
            return replace(run, phase="agent_2_compile")
        case "TaskContract":
            return replace(run, phase="agent_1_review")
        case "PromptReview":
            return _after_prompt_review(run, artifact.body)
        case "WorkPlan":
            if run.requested_mode in EXECUTING_MODES:
                return replace(run, phase="agent_4_execute")
            return replace(run, phase="agent_3_review")
        case "WorkResult":
            return _after_work_result(state, artifact)
        case "QualityReview":
            if run.topology == "micro":
                return _after_spot_review(run, artifact.body)
            if run.phase == "agent_3_evidence_reverify":
                return _after_reverify(run, artifact.body)
            moved = _after_quality_review(run, artifact.body)
            if run.topology == "forensic" and moved.phase == "agent_5_audit":
                return replace(moved, phase="agent_3_evidence_reverify")
            return moved
        case "ReleaseAudit":
            return _after_audit(run, artifact.body)
        case "UserReport":
            return _after_report(run, artifact.body)
    raise AssertionError(f"{artifact.type} is not a phase artifact")


def _to_report(run: RunRecord, hint: OutcomeHint | None) -> RunRecord:
    return replace(run, phase="agent_5_report", outcome_hint=hint)


def _after_prompt_review(run: RunRecord, review: PromptReview) -> RunRecord:
    match review.decision:
        case "pass":
            return replace(run, phase="agent_3_plan")
        case "revise":
            if run.prompt_revisions_remaining > 0:
                return replace(
                    run,
                    phase="agent_2_revise",
                    prompt_revisions_remaining=run.prompt_revisions_remaining - 1,
                )
            return _to_report(run, "blocked")
        case "block":
            return _to_report(run, "blocked")
        case _:
            assert_never(review.decision)


def _after_work_result(state: RunState, artifact: StoredArtifact) -> RunRecord:
    result: WorkResult = artifact.body
    if result.status != "completed":
        return replace(state.run, phase="agent_3_review")
    after = state.extended((artifact,))
    if pending_node(after) is None:
        return replace(state.run, phase="agent_3_review")
    return state.run


def _after_quality_review(run: RunRecord, review: QualityReview) -> RunRecord:
    audit = replace(run, phase="agent_5_audit")
    match review.decision:
        case "proceed_to_fix":
            return replace(run, phase="agent_3_plan")
        case "pass":
            return audit
        case "partial":
            return replace(audit, outcome_hint="partial")
        case "block":
            return replace(audit, outcome_hint="blocked")
        case "remediate":
            if run.remediations_remaining > 0:
                return replace(
                    run, phase="agent_3_plan", remediations_remaining=run.remediations_remaining - 1
                )
            return replace(audit, outcome_hint="blocked")
        case _:
            assert_never(review.decision)


def _after_spot_review(run: RunRecord, review: QualityReview) -> RunRecord:
    """A micro run's spot review (docs/protocol.md §3.7): report, or escalate to standard."""
    match review.decision:
        case "pass":
            return _to_report(run, run.outcome_hint)
        case "block":
            return _to_report(run, "blocked")
        case "partial" | "remediate":
            # Escalation to the standard path at contract review; no remediation is spent.
            return replace(
                run,
                phase="agent_1_review",
                topology="standard",
                escalation_count=run.escalation_count + 1,
            )
        case "proceed_to_fix":
            raise AssertionError("proceed_to_fix is refused in a micro run (TP-MICRO-NO-FIX)")
        case _:
            assert_never(review.decision)


def _after_reverify(run: RunRecord, review: QualityReview) -> RunRecord:
    """A forensic run's re-verifying review leads to the audit, the hint set as a review's."""
    match review.decision:
        case "pass" | "partial" | "block":
            return _after_quality_review(run, review)
        case "remediate" | "proceed_to_fix":
            raise AssertionError("refused in the reverify phase (TP-REVERIFY-DECISION)")
        case _:
            assert_never(review.decision)


def _after_audit(run: RunRecord, audit: ReleaseAudit) -> RunRecord:
    match audit.decision:
        case "release":
            return _to_report(run, run.outcome_hint or "completed")
        case "partial":
            return _to_report(run, "partial")
        case "block":
            return _to_report(run, "blocked")
        case "remediate":
            if run.remediations_remaining > 0:
                return replace(
                    run,
                    phase="agent_3_plan",
                    remediations_remaining=run.remediations_remaining - 1,
                    outcome_hint=None,
                )
            return _to_report(run, "blocked")
        case _:
            assert_never(audit.decision)


def _after_report(run: RunRecord, report: UserReport) -> RunRecord:
    match report.terminal_status:
        case "completed":
            return replace(run, status="completed")
        case "partial" | "failed_verification":
            return replace(run, status="partial")
        case "blocked":
            return replace(run, status="blocked")
        case "cancelled":
            raise AssertionError("a cancelled report is refused before it is accepted")
        case _:
            assert_never(report.terminal_status)
