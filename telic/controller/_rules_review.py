"""Invariants of judgement: QualityReview, ReleaseAudit and UserReport."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from telic.controller._authority import intersect, run_authorization, subset
from telic.controller._check import Check, Violation
from telic.controller._derive import (
    is_unlocked,
    results_of,
    stage_criteria,
    stage_verifications,
)
from telic.controller._phases import EXECUTING_MODES
from telic.protocol._audit import ReleaseAudit
from telic.protocol._quality import QualityReview
from telic.protocol._report import UserReport

__all__: list[str] = []


def _latest_uri(c: Check[Any], artifact_type: str) -> str | None:
    latest = c.state.latest(artifact_type)
    return None if latest is None else latest.uri


def remaining_remediations(c: Check[QualityReview | ReleaseAudit]) -> Iterator[Violation]:
    """remainingRemediations equals the controller's shared counter."""
    if c.body.remaining_remediations != c.state.run.remediations_remaining:
        yield Violation("remainingRemediations", "Must equal the run's remaining remediations")


def contract_latest(c: Check[QualityReview | ReleaseAudit]) -> Iterator[Violation]:
    """taskContractRef is the latest contract."""
    if c.body.task_contract_ref != _latest_uri(c, "TaskContract"):
        yield Violation("taskContractRef", "taskContractRef must be the latest TaskContract")


def qr_current_work(c: Check[QualityReview]) -> Iterator[Violation]:
    """The review names the latest plan and exactly that plan's results."""
    plan = c.state.latest("WorkPlan")
    if plan is None:
        return
    if plan.uri not in c.body.work_plan_refs:
        yield Violation("workPlanRefs", "workPlanRefs must include the latest WorkPlan")
    if set(c.body.work_result_refs) != {r.uri for r in results_of(c.state, plan)}:
        yield Violation("workResultRefs", "workResultRefs must equal the latest plan's results")


def qr_progression(c: Check[QualityReview]) -> Iterator[Violation]:
    """pass/proceed_to_fix need every node completed; proceed only before unlock; pass after."""
    mode, decision = c.state.run.mode, c.body.decision
    unlocked = is_unlocked(c.state)
    plan = c.state.latest("WorkPlan")
    if decision in ("pass", "proceed_to_fix") and mode in EXECUTING_MODES and plan is not None:
        done = {r.body.node_id for r in results_of(c.state, plan) if r.body.status == "completed"}
        if done != {node.id for node in plan.body.nodes}:
            yield Violation("decision", "Every planned node must have completed")
    if decision == "proceed_to_fix" and (mode != "analyze_and_fix" or unlocked):
        yield Violation("decision", "proceed_to_fix is legal only in analyze_and_fix before unlock")
    if decision == "pass" and mode == "analyze_and_fix" and not unlocked:
        yield Violation("decision", "Before the fix, the review must go through proceed_to_fix")
    needs_mutation = mode == "fix_only" or (mode == "analyze_and_fix" and unlocked)
    if decision == "pass" and needs_mutation and not _any_mutation(c):
        yield Violation("decision", "A passing fix needs a completed mutating action")


def _any_mutation(c: Check[Any]) -> bool:
    return any(
        action.mutating and action.status == "completed"
        for result in c.state.all("WorkResult")
        for action in result.body.actions
    )


def qr_stage_coverage(c: Check[QualityReview]) -> Iterator[Violation]:
    """Acceptance and verification results cover the active stage exactly once each."""
    criteria = [r.criterion_id for r in c.body.acceptance_results]
    if len(set(criteria)) != len(criteria) or set(criteria) != set(stage_criteria(c.state)):
        yield Violation("acceptanceResults", "Must cover the stage's criteria exactly once")
    requirements = [v.requirement_id for v in c.body.verification_results]
    if len(set(requirements)) != len(requirements) or set(requirements) != set(
        stage_verifications(c.state)
    ):
        yield Violation("verificationResults", "Must cover the stage's requirements exactly once")
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    declared = {v.id: v for v in contract.body.verification_requirements}
    for index, result in enumerate(c.body.verification_results):
        requirement = declared.get(result.requirement_id)
        if requirement is None:
            continue
        if requirement.capability != result.capability:
            yield Violation(f"verificationResults.{index}.capability", "Not the contracted one")
        if (
            requirement.required
            and c.body.decision in ("pass", "proceed_to_fix")
            and result.status != "pass"
        ):
            yield Violation(f"verificationResults.{index}.status", "Required verification failed")


def qr_correction_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A correction order targets every completion criterion within contract ∩ authorization."""
    gate = c.body.diagnosis_gate
    order = None if gate is None else gate.correction_work_order
    contract = c.state.latest("TaskContract")
    if order is None or contract is None:
        return
    completion = {a.id for a in contract.body.acceptance_criteria if a.stage == "completion"}
    targets = order.target_criterion_ids
    path = "diagnosisGate.correctionWorkOrder"
    if len(set(targets)) != len(targets) or set(targets) != completion:
        yield Violation(f"{path}.targetCriterionIds", "Must be exactly the completion criteria")
    ceiling = intersect(contract.body.permissions, run_authorization(c.state))
    if not subset(order.permissions, ceiling):
        yield Violation(f"{path}.permissions", "Exceeds the contract and the authorization")


def qr_remediation_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A remediation order stays inside the stage's criteria and the contract's permissions."""
    order = c.body.remediation_work_order
    contract = c.state.latest("TaskContract")
    if order is None or contract is None:
        return
    failed = order.failed_criterion_ids
    if len(set(failed)) != len(failed) or not set(failed) <= set(stage_criteria(c.state)):
        yield Violation("remediationWorkOrder.failedCriterionIds", "Outside the stage criteria")
    if not subset(order.permissions, contract.body.permissions):
        yield Violation("remediationWorkOrder.permissions", "Exceeds the contract permissions")
    if c.state.run.mode in EXECUTING_MODES and not order.allowed_capabilities:
        yield Violation("remediationWorkOrder.allowedCapabilities", "Needs a capability")


def ra_lineage(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """The audit names the latest review and every plan and result of the run."""
    if c.body.quality_review_ref != _latest_uri(c, "QualityReview"):
        yield Violation("qualityReviewRef", "qualityReviewRef must be the latest QualityReview")
    if set(c.body.work_plan_refs) != {p.uri for p in c.state.all("WorkPlan")}:
        yield Violation("workPlanRefs", "workPlanRefs must name every WorkPlan of the run")
    if set(c.body.work_result_refs) != {r.uri for r in c.state.all("WorkResult")}:
        yield Violation("workResultRefs", "workResultRefs must name every WorkResult of the run")
    for index, check in enumerate(c.body.user_fidelity):
        if check.subject_ref != c.state.request.uri:
            yield Violation(f"userFidelity.{index}.subjectRef", "Must be the original request")


def ra_decision(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Mode failures and review blocks are never released; release needs a passing review."""
    decision = c.body.decision
    review = c.state.latest("QualityReview")
    review_decision = None if review is None else review.body.decision
    if c.body.mode_compliance == "fail" and decision not in ("partial", "block"):
        yield Violation("decision", "A mode-compliance failure must be partial or block")
    if review_decision == "block" and decision != "block":
        yield Violation("decision", "A blocked QualityReview forces the audit to block")
    if decision == "release" and (review_decision != "pass" or not c.body.claim_evidence_matrix):
        yield Violation("decision", "release needs a passing review and a non-empty matrix")


def ra_criteria(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Matrix criteria exist; a release covers every criterion with a supported direct claim."""
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    known = {a.id for a in contract.body.acceptance_criteria}
    for index, entry in enumerate(c.body.claim_evidence_matrix):
        if not set(entry.criterion_ids) <= known:
            yield Violation(f"claimEvidenceMatrix.{index}.criterionIds", "Unknown criterion")
    if c.body.decision != "release":
        return
    bases = {"direct", "user_reported"} if c.state.run.mode == "report_only" else {"direct"}
    supported = {
        criterion
        for entry in c.body.claim_evidence_matrix
        if entry.status == "supported" and entry.basis in bases
        for criterion in entry.criterion_ids
    }
    if not known <= supported:
        yield Violation("claimEvidenceMatrix", "Every criterion needs a supported direct claim")


def ur_trace_ref(c: Check[UserReport]) -> Iterator[Violation]:
    """traceRef is ``trace://<runId>``."""
    if c.body.trace_ref != f"trace://{c.state.run.run_id}":
        yield Violation("traceRef", "traceRef must be trace://<runId>")


def ur_status(c: Check[UserReport]) -> Iterator[Violation]:
    """The reported status fits the outcome hint and the audit; cancelled is never reported."""
    status, hint = c.body.terminal_status, c.state.run.outcome_hint
    if status == "cancelled":
        yield Violation("terminalStatus", "A report cannot claim cancelled; cancel the run")
    if status == "completed" and hint in ("blocked", "partial"):
        yield Violation("terminalStatus", f"The run's outcome is {hint}; it cannot be completed")
    audit = c.state.latest("ReleaseAudit")
    if audit is None:
        if hint != "blocked" or status != "blocked":
            yield Violation("terminalStatus", "Without an audit only a blocked report is legal")
        return
    fits = {
        "release": {"completed"},
        "partial": {"partial", "failed_verification"},
        "block": {"blocked"},
        "remediate": set(),
    }[audit.body.decision]
    if status not in fits:
        yield Violation("terminalStatus", "The status must fit the audit's decision")
    if audit.body.user_report_ref != c.uri:
        yield Violation("id", "The audit's userReportRef must name this report")
    if c.body.permissions_honored != (audit.body.mode_compliance == "pass"):
        yield Violation("permissionsHonored", "Must equal the audit's mode compliance")


def ur_findings(c: Check[UserReport]) -> Iterator[Violation]:
    """Non-completed reports cite the judgement behind them; early blocks claim nothing."""
    cited = set(c.body.finding_refs)
    if c.state.latest("ReleaseAudit") is None:
        anchor = c.state.latest("PromptReview") or c.state.latest("ClarificationRequest")
        if anchor is not None and anchor.uri not in cited:
            yield Violation("findingRefs", "An early block cites the review or clarification")
        if c.body.completion_claims or not c.body.permissions_honored:
            yield Violation("completionClaims", "An early block claims nothing and honours all")
        return
    if c.body.terminal_status != "completed":
        judged = {_latest_uri(c, "QualityReview"), _latest_uri(c, "ReleaseAudit")}
        if not cited & judged:
            yield Violation("findingRefs", "Cite the latest QualityReview or ReleaseAudit")


def ur_change_refs(c: Check[UserReport]) -> Iterator[Violation]:
    """changeRefs equal the distinct diffRefs of every WorkResult."""
    diffs = {f.diff_ref for r in c.state.all("WorkResult") for f in r.body.files_changed}
    if set(c.body.change_refs) != diffs:
        yield Violation("changeRefs", "changeRefs must equal the diffRefs of every WorkResult")
