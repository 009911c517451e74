"""Invariants of what a passing review rests on: the executor's own evidence, exactly.

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
    gate_passes,
    is_unlocked,
    verification_evidence,
)
from telic.controller._phases import EXECUTING_MODES
from telic.protocol import QualityReview, VerificationResult

__all__ = ["RULES"]

_QR = ("QualityReview",)
_S = "§3.4 QualityReview"

rule = Rules(_QR, _S)


@rule(
    "QR-PASS-EXACT-COVERAGE-EVIDENCE",
    "Passing a criterion on an evidence set no current passing coverage entry reported "
    "(or, when unassigned, no earlier passing review used).",
)
def qr_pass_exact_coverage_evidence(c: Check[QualityReview]) -> Iterator[Violation]:
    """Each passing acceptance result repeats the exact evidence set of matching coverage."""
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


def _backed_by_action(c: Check[Any], verification: VerificationResult, stage: str) -> bool:
    evidence = set(verification.evidence_refs)
    return any(
        evidence & set(refs) for refs in backing_actions(c.state, verification.capability, stage)
    )


def _retained(c: Check[Any], verification: VerificationResult) -> bool:
    return any(
        r.requirement_id == verification.requirement_id
        and set(r.evidence_refs) == set(verification.evidence_refs)
        for r in gate_passes(c.state)
    )


@rule(
    "QR-VERIFICATION-BACKED",
    "Passing a verification without a completed read-only action of its capability that "
    "shares its evidence (after the last mutation, for completion).",
)
def qr_verification_backed(c: Check[QualityReview]) -> Iterator[Violation]:
    """Each passing verification is backed by a matching read-only action (or retained)."""
    contract = c.state.latest("TaskContract")
    if c.mode not in EXECUTING_MODES or contract is None:
        return
    stages = {v.id: v.stage for v in contract.body.verification_requirements}
    for index, result in enumerate(c.body.verification_results):
        stage = stages.get(result.requirement_id)
        if result.status != "pass" or stage is None:
            continue
        if _backed_by_action(c, result, stage):
            continue
        if stage == "diagnosis" and is_unlocked(c.state) and _retained(c, result):
            continue
        backing = verification_evidence(c.state, result.requirement_id, result.capability, stage)
        yield Violation(
            f"verificationResults.{index}.evidenceRefs",
            "No completed read-only action of this capability (after the last mutation, for "
            "completion) shares this evidence",
            None if backing is None else list(backing),
        )


@rule(
    "QR-RULE-COMPLIANCE",
    "Rule-compliance checks whose subjects differ from the contract's ruleRefs.",
)
def qr_rule_compliance(c: Check[QualityReview]) -> Iterator[Violation]:
    """ruleCompliance subjectRefs are set-equal to the contract's ruleRefs."""
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
