"""Invariants of the work orders a review or audit issues: the scope of the next plan.

A correction order (proceed_to_fix) targets exactly the completion criteria; a remediation order
(QualityReview remediate) or defect (ReleaseAudit remediate) names criteria of its stage. Every
order stays inside the contract and the run's authority — before the analyze_and_fix unlock,
inside the analyze_only projection — names permission-backed capabilities, leaves the plan it
scopes a way to run every required verification of its stage, and cites the work it answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

from telic.controller._authority import run_authorization
from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import current_results, fix_minimum, is_unlocked, stage_criteria
from telic.controller._phases import EXECUTING_MODES
from telic.permissions import capability_backed, intersect, is_subset, plan_ceiling
from telic.protocol import (
    Capability,
    CorrectionWorkOrder,
    PermissionSet,
    QualityReview,
    ReleaseAudit,
    RemediationDefect,
    RemediationWorkOrder,
)

__all__ = ["RULES"]

_QR, _RA = ("QualityReview",), ("ReleaseAudit",)

rule = Rules(_QR, "§3.4 QualityReview (remediate)")

_CHANGES: Final[frozenset[Capability]] = frozenset(
    {"repository.write", "repository.delete", "shell.execute"}
)
"""Capabilities that can make the change a passing fix needs (QR-PASS-NEEDS-MUTATION)."""

_Order = CorrectionWorkOrder | RemediationWorkOrder | RemediationDefect


def _ceiling(c: Check[Any]) -> PermissionSet | None:
    contract = c.state.latest("TaskContract")
    if contract is None:
        return None
    return intersect(contract.body.permissions, run_authorization(c.state))


def _order_reach(
    c: Check[Any], path: str, order: _Order, *, fixing: bool, criteria: Sequence[str]
) -> Iterator[Violation]:
    """The order allows backed capabilities (some, in an executing mode), and the plan it scopes
    can still run every required verification of its stage.

    That plan is judged by the preflight (``WP-VERIFICATION-PREFLIGHT``) inside the order: each
    required verification of the stage needs a node requiring its capability (so the order
    must allow and back it) and covering a criterion of that stage (so the order must name
    one). ``fixing``: the replan is judged at the completion stage of analyze_and_fix.
    """
    capabilities, permissions = order.allowed_capabilities, order.permissions
    if c.mode in EXECUTING_MODES and not capabilities:  # a correction order never is empty
        yield Violation(f"{path}.allowedCapabilities", "An executed remediation needs a capability")
    for index, capability in enumerate(capabilities):
        if not capability_backed(capability, permissions):
            yield Violation(
                f"{path}.allowedCapabilities.{index}",
                f"{capability} is not backed by the permissions",
            )
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    stage = None if c.mode != "analyze_and_fix" else "completion" if fixing else "diagnosis"
    stages = {a.id: a.stage for a in contract.body.acceptance_criteria}
    named = {stages.get(criterion) for criterion in criteria}
    for requirement in contract.body.verification_requirements:
        if not requirement.required or stage not in (None, requirement.stage):
            continue
        capability = requirement.capability
        if capability not in capabilities or not capability_backed(capability, permissions):
            yield Violation(
                f"{path}.allowedCapabilities",
                f"The next plan must run required verification {requirement.id}: allow "
                f"{capability}, backed by the order's permissions",
            )
        if requirement.stage not in named:
            yield Violation(
                path,
                f"The next plan must run required verification {requirement.id}: name a "
                f"{requirement.stage} criterion",
            )


@rule(
    "QR-CORRECTION-ORDER",
    "A correction order that misses or repeats a completion criterion, exceeds contract ∩ "
    "authorization, names an unbacked capability, or leaves the fix plan unable to change "
    "the repository, run a required completion verification or afford both.",
    section="§3.4 QualityReview (proceed_to_fix)",
)
def qr_correction_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A correction order targets every completion criterion within contract ∩ authorization."""
    gate = c.body.diagnosis_gate
    order = None if gate is None else gate.correction_work_order
    contract, ceiling = c.state.latest("TaskContract"), _ceiling(c)
    if order is None or contract is None or ceiling is None:
        return
    completion = {a.id for a in contract.body.acceptance_criteria if a.stage == "completion"}
    targets = order.target_criterion_ids
    path = "diagnosisGate.correctionWorkOrder"
    if len(set(targets)) != len(targets) or set(targets) != completion:
        yield Violation(f"{path}.targetCriterionIds", "Must be exactly the completion criteria")
    if not is_subset(order.permissions, ceiling):
        yield Violation(f"{path}.permissions", "Exceeds the contract and the authorization")
    yield from _order_reach(c, path, order, fixing=True, criteria=targets)
    if not _CHANGES & set(order.allowed_capabilities):
        yield Violation(
            f"{path}.allowedCapabilities",
            "A fix passes only after a change: allow repository.write, repository.delete or "
            "shell.execute",
        )
    needed = fix_minimum(contract.body)
    if order.maximum_tool_calls < needed:
        yield Violation(
            f"{path}.maximumToolCalls",
            f"The fix needs at least {needed} tool calls (one change, then one verification "
            "per required completion capability)",
        )


@rule(
    "QR-REMEDIATION-ORDER",
    "A remediation order outside the stage's criteria, the contract, the analyze-only "
    "projection before unlock, without backed capabilities, or leaving the replan unable "
    "to run a required verification of its stage.",
)
def qr_remediation_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A remediation order names stage criteria and backed capabilities inside its ceiling."""
    order, contract = c.body.remediation_work_order, c.state.latest("TaskContract")
    if order is None or contract is None:
        return
    path = "remediationWorkOrder"
    failed = order.failed_criterion_ids
    if len(set(failed)) != len(failed) or not set(failed) <= set(stage_criteria(c.state)):
        yield Violation(f"{path}.failedCriterionIds", "Outside the stage criteria")
    if not is_subset(order.permissions, contract.body.permissions):
        yield Violation(f"{path}.permissions", "Exceeds the contract permissions")
    before_unlock = c.mode == "analyze_and_fix" and not is_unlocked(c.state)
    ceiling = (
        plan_ceiling(c.mode, fix_unlocked=False) if before_unlock else run_authorization(c.state)
    )
    if not is_subset(order.permissions, ceiling):
        yield Violation(f"{path}.permissions", "Exceeds the analyze-only projection or authority")
    yield from _order_reach(c, path, order, fixing=not before_unlock, criteria=failed)


def _evidence_uris(c: Check[Any]) -> set[str]:
    return {e.uri for e in c.state.all("Evidence")}


@rule(
    "QR-REMEDIATION-SOURCES",
    "A remediation order that cites neither the latest plan, its results nor any Evidence.",
)
def qr_remediation_sources(c: Check[QualityReview]) -> Iterator[Violation]:
    """A remediation order cites the latest plan, one of its results, or some Evidence."""
    order, plan = c.body.remediation_work_order, c.state.latest("WorkPlan")
    if order is None:
        return
    cited = set() if plan is None else {plan.uri, *current_results(c.state)}
    if not set(order.source_refs) & (cited | _evidence_uris(c)):
        yield Violation(
            "remediationWorkOrder.sourceRefs", "Cite the latest plan, its results or Evidence"
        )


@rule(
    "RA-DEFECT-SCOPE",
    "A defect naming unknown criteria, exceeding contract ∩ authorization, without backed "
    "capabilities, or leaving the replan unable to run a required verification of its "
    "stage.",
    types=_RA,
    section="§3.4 ReleaseAudit (remediate)",
)
def ra_defect_scope(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A defect names known criteria and backed capabilities inside contract ∩ authorization."""
    defect, contract, ceiling = (
        c.body.remediation_defect,
        c.state.latest("TaskContract"),
        _ceiling(c),
    )
    if defect is None or contract is None or ceiling is None:
        return
    path = "remediationDefect"
    known = {a.id for a in contract.body.acceptance_criteria}
    failed = defect.failed_criterion_ids
    if len(set(failed)) != len(failed) or not set(failed) <= known:
        yield Violation(f"{path}.failedCriterionIds", "Must name contract criteria, each once")
    if not is_subset(defect.permissions, ceiling):
        yield Violation(f"{path}.permissions", "Exceeds the contract and the authorization")
    yield from _order_reach(c, path, defect, fixing=is_unlocked(c.state), criteria=failed)


@rule(
    "RA-DEFECT-SOURCES",
    "A defect that cites neither the latest QualityReview, a WorkResult nor any Evidence.",
    types=_RA,
    section="§3.4 ReleaseAudit (remediate)",
)
def ra_defect_sources(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A defect cites the latest QualityReview, a WorkResult, or some Evidence."""
    defect, review = c.body.remediation_defect, c.state.latest("QualityReview")
    if defect is None:
        return
    cited = {r.uri for r in c.state.all("WorkResult")} | _evidence_uris(c)
    if review is not None:
        cited.add(review.uri)
    if not set(defect.source_refs) & cited:
        yield Violation(
            "remediationDefect.sourceRefs", "Cite the latest QualityReview, results or Evidence"
        )


RULES: Final = rule.registered
