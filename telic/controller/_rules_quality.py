"""Invariants of the quality review's verdict: lineage, progression and stage coverage.

A QualityReview judges exactly the latest plan's results against the criteria and verification
requirements of the active stage (diagnosis only, in analyze_and_fix before the fix is
unlocked). Its decision must be reachable: pass and proceed_to_fix need every planned node
completed and every required verification passing; analyze_and_fix goes through proceed_to_fix
before it may pass; and a passing fix needs a completed mutation somewhere in the run.

A reviewer cannot pass a criterion on evidence the executor never reported for it: each passing
acceptance result repeats exactly the evidence set of a passing coverage entry of the current
plan's results (a criterion the current plan does not assign may instead retain, identically,
an earlier passing review's evidence). Each passing verification is backed by a completed
read-only action of its capability — after the result's last mutation, for completion — or,
for diagnosis after the unlock, by identical retention of the proceed_to_fix review's result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import (
    assigned_criteria,
    backing_actions,
    criterion_evidence,
    current_results,
    gate_passes,
    is_unlocked,
    plan_completed,
    stage_criteria,
    stage_verifications,
    verification_evidence,
)
from telic.controller._phases import EXECUTING_MODES
from telic.controller._rules_frame import latest_ref
from telic.controller._work import mutation_allowed
from telic.protocol import QualityReview, ReleaseAudit, WorkPlan

rule = Rules(("QualityReview",), "§3.4 QualityReview")


@rule(
    "QR-REMAINING-REMEDIATIONS",
    "A remainingRemediations other than the run's shared counter.",
    section="§3.3 remediations",
)
def remaining_remediations(c: Check[QualityReview | ReleaseAudit]) -> Iterator[Violation]:
    """remainingRemediations equals the controller's shared counter."""
    if c.body.remaining_remediations != c.state.run.remediations_remaining:
        yield Violation(
            "remainingRemediations",
            "Must equal the run's remaining remediations",
            c.state.run.remediations_remaining,
        )


@rule("QR-CONTRACT-LATEST", "Reviewing against anything but the latest TaskContract.")
def contract_latest(c: Check[QualityReview | ReleaseAudit | WorkPlan]) -> Iterator[Violation]:
    """taskContractRef is the latest contract."""
    return latest_ref(c, "taskContractRef", c.body.task_contract_ref, "TaskContract")


@rule("QR-CURRENT-WORK")
def qr_current_work(c: Check[QualityReview]) -> Iterator[Violation]:
    """Omitting the latest plan, or naming other results than exactly that plan's."""
    plan = c.state.latest("WorkPlan")
    if plan is None:
        return
    if plan.uri not in c.body.work_plan_refs:
        yield Violation("workPlanRefs", "workPlanRefs must include the latest WorkPlan", plan.uri)
    results = current_results(c.state)
    if set(c.body.work_result_refs) != set(results):
        yield Violation(
            "workResultRefs", "workResultRefs must equal the latest plan's results", list(results)
        )


@rule("QR-PROGRESSION")
def qr_progression(c: Check[QualityReview]) -> Iterator[Violation]:
    """pass or proceed_to_fix while some planned node has not completed.

    Only in executing modes: elsewhere no node runs.
    """
    if c.body.decision not in ("pass", "proceed_to_fix") or c.mode not in EXECUTING_MODES:
        return
    if not plan_completed(c.state):
        yield Violation("decision", "Every planned node must have completed")


@rule("QR-PROCEED-BEFORE-UNLOCK")
def qr_proceed_before_unlock(c: Check[QualityReview]) -> Iterator[Violation]:
    """proceed_to_fix outside analyze_and_fix, or after the fix was unlocked."""
    if c.body.decision == "proceed_to_fix" and (
        c.mode != "analyze_and_fix" or is_unlocked(c.state)
    ):
        yield Violation("decision", "proceed_to_fix is legal only in analyze_and_fix before unlock")


@rule("QR-GATE-BEFORE-PASS")
def qr_gate_before_pass(c: Check[QualityReview]) -> Iterator[Violation]:
    """Passing an analyze_and_fix run without going through the diagnosis gate."""
    if c.body.decision == "pass" and c.mode == "analyze_and_fix" and not is_unlocked(c.state):
        yield Violation("decision", "Before the fix, the review must go through proceed_to_fix")


@rule("QR-PASS-NEEDS-MUTATION")
def qr_pass_needs_mutation(c: Check[QualityReview]) -> Iterator[Violation]:
    """Passing a fix that never completed a mutating action.

    A fix is fix_only, or analyze_and_fix after the unlock.
    """
    if c.body.decision != "pass" or not mutation_allowed(c.state):
        return
    results = c.state.all("WorkResult")
    if not any(a.mutating and a.status == "completed" for r in results for a in r.body.actions):
        yield Violation("decision", "A passing fix needs a completed mutating action in the run")


@rule("QR-STAGE-COVERAGE")
def qr_stage_coverage(c: Check[QualityReview]) -> Iterator[Violation]:
    """Acceptance results that miss, repeat or exceed the active stage's criteria."""
    criteria = [r.criterion_id for r in c.body.acceptance_results]
    wanted = stage_criteria(c.state)
    if len(set(criteria)) != len(criteria) or set(criteria) != set(wanted):
        yield Violation(
            "acceptanceResults",
            "Must hold one result per criterion id in expected (the active stage's criteria; "
            "after the fix is unlocked, every criterion of both stages), each exactly once",
            list(wanted),
        )


def _requirements(c: Check[QualityReview]) -> dict[str, Any]:
    contract = c.state.latest("TaskContract")
    return {} if contract is None else {v.id: v for v in contract.body.verification_requirements}


@rule("QR-VERIFICATION-COVERAGE")
def qr_verification_coverage(c: Check[QualityReview]) -> Iterator[Violation]:
    """Verification results that miss or repeat a requirement, or change its capability."""
    ids = [v.requirement_id for v in c.body.verification_results]
    wanted = stage_verifications(c.state)
    if len(set(ids)) != len(ids) or set(ids) != set(wanted):
        yield Violation(
            "verificationResults",
            "Must hold one result per requirement id in expected (the active stage's "
            "requirements; after the fix is unlocked, those of both stages), each exactly once",
            list(wanted),
        )
    declared = _requirements(c)
    for index, result in enumerate(c.body.verification_results):
        requirement = declared.get(result.requirement_id)
        if requirement is not None and requirement.capability != result.capability:
            yield Violation(
                f"verificationResults.{index}.capability",
                "Not the contracted one",
                requirement.capability,
            )


@rule("QR-REQUIRED-VERIFICATION-PASS")
def qr_required_verification_pass(c: Check[QualityReview]) -> Iterator[Violation]:
    """pass or proceed_to_fix with a required verification that did not pass."""
    if c.body.decision not in ("pass", "proceed_to_fix"):
        return
    declared = _requirements(c)
    for index, result in enumerate(c.body.verification_results):
        requirement = declared.get(result.requirement_id)
        if requirement is not None and requirement.required and result.status != "pass":
            yield Violation(
                f"verificationResults.{index}.status",
                "Required verification did not pass: decide partial (or remediate) and say so",
            )


@rule("QR-PASS-EXACT-COVERAGE-EVIDENCE")
def qr_pass_exact_coverage_evidence(c: Check[QualityReview]) -> Iterator[Violation]:
    """Passing a criterion on an evidence set no current passing coverage entry reported (or, when
    unassigned, no earlier passing review used)."""
    if c.mode not in EXECUTING_MODES or c.state.latest("WorkPlan") is None:
        return
    assigned = assigned_criteria(c.state)
    for index, result in enumerate(c.body.acceptance_results):
        if result.status != "pass":
            continue
        allowed = [frozenset(refs) for refs in criterion_evidence(c.state, result.criterion_id)]
        if frozenset(result.evidence_refs) not in allowed:
            message = (
                "A passing result repeats exactly a passing coverage entry's evidence"
                if result.criterion_id in assigned
                else "An unassigned criterion may only retain an earlier passing review's evidence"
            )
            yield Violation(
                f"acceptanceResults.{index}.evidenceRefs",
                message,
                sorted(allowed[0]) if allowed else None,
            )


@rule("QR-VERIFICATION-BACKED")
def qr_verification_backed(c: Check[QualityReview]) -> Iterator[Violation]:
    """Passing a verification without a completed read-only action of its capability that shares its
    evidence (after the last mutation, for completion)."""
    contract = c.state.latest("TaskContract")
    if c.mode not in EXECUTING_MODES or contract is None:
        return
    stages = {v.id: v.stage for v in contract.body.verification_requirements}
    for index, result in enumerate(c.body.verification_results):
        stage = stages.get(result.requirement_id)
        if result.status != "pass" or stage is None:
            continue
        evidence = set(result.evidence_refs)
        if any(evidence & set(refs) for refs in backing_actions(c.state, result.capability, stage)):
            continue
        if (
            stage == "diagnosis"
            and is_unlocked(c.state)
            and any(
                r.requirement_id == result.requirement_id and set(r.evidence_refs) == evidence
                for r in gate_passes(c.state)
            )
        ):
            continue
        backing = verification_evidence(c.state, result.requirement_id, result.capability, stage)
        yield Violation(
            f"verificationResults.{index}.evidenceRefs",
            "No completed read-only action of this capability (after the last mutation, for "
            "completion) shares this evidence",
            None if backing is None else list(backing),
        )


@rule("QR-RULE-COMPLIANCE")
def qr_rule_compliance(c: Check[QualityReview]) -> Iterator[Violation]:
    """Rule-compliance checks whose subjects differ from the contract's ruleRefs."""
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    subjects = {check.subject_ref for check in c.body.rule_compliance}
    if subjects != set(contract.body.rule_refs):
        yield Violation(
            "ruleCompliance",
            "Judge each contract rule, and only those, once (expected: the subjectRefs)",
            list(contract.body.rule_refs),
        )


RULES: Final = rule.registered
