"""Invariants of the release audit and of the work orders a review or audit issues.

The auditor names the latest review and every plan and result of the run, judges fidelity
against the immutable original request only, and can never release what the quality review did
not pass, downgrade a blocked review, or release a criterion without a supported direct claim.

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
from telic.controller._derive import (
    breaches,
    current_results,
    every_uri,
    fix_minimum,
    is_unlocked,
    stage_criteria,
)
from telic.controller._phases import EXECUTING_MODES
from telic.controller._rules_frame import latest_ref, original_request
from telic.controller._rules_quality import contract_latest, remaining_remediations
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

rule = Rules(("QualityReview",), "§3.4 QualityReview (remediate)")
audit = Rules(("ReleaseAudit",), "§3.4 ReleaseAudit")
defect = Rules(("ReleaseAudit",), "§3.4 ReleaseAudit (remediate)")

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


@rule("QR-CORRECTION-ORDER", section="§3.4 QualityReview (proceed_to_fix)")
def qr_correction_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A correction order that misses or repeats a completion criterion, exceeds contract ∩
    authorization, names an unbacked capability, or leaves the fix plan unable to change the
    repository, run a required completion verification or afford both."""
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


@rule("QR-REMEDIATION-ORDER")
def qr_remediation_order(c: Check[QualityReview]) -> Iterator[Violation]:
    """A remediation order outside the stage's criteria, the contract, the analyze-only projection
    before unlock, without backed capabilities, or leaving the replan unable to run a required
    verification of its stage."""
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


@rule("QR-REMEDIATION-SOURCES")
def qr_remediation_sources(c: Check[QualityReview]) -> Iterator[Violation]:
    """A remediation order that cites neither the latest plan, its results nor any Evidence."""
    order, plan = c.body.remediation_work_order, c.state.latest("WorkPlan")
    if order is None:
        return
    cited = set() if plan is None else {plan.uri, *current_results(c.state)}
    if not set(order.source_refs) & {*cited, *every_uri(c.state, "Evidence")}:
        yield Violation(
            "remediationWorkOrder.sourceRefs", "Cite the latest plan, its results or Evidence"
        )


audit(
    "RA-REMAINING-REMEDIATIONS",
    "A remainingRemediations other than the run's shared counter.",
    section="§3.3 remediations",
)(remaining_remediations)

audit("RA-ORIGINAL-REQUEST", "Auditing against anything but the run's immutable original request.")(
    original_request
)

audit("RA-CONTRACT-LATEST", "Auditing against anything but the latest TaskContract.")(
    contract_latest
)


@audit("RA-LINEAGE")
def ra_lineage(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Skipping the latest QualityReview, or any plan or result of the run."""
    yield from latest_ref(c, "qualityReviewRef", c.body.quality_review_ref, "QualityReview")
    plans, results = every_uri(c.state, "WorkPlan"), every_uri(c.state, "WorkResult")
    if set(c.body.work_plan_refs) != set(plans):
        yield Violation(
            "workPlanRefs", "workPlanRefs must name every WorkPlan of the run", list(plans)
        )
    if set(c.body.work_result_refs) != set(results):
        yield Violation(
            "workResultRefs", "workResultRefs must name every WorkResult of the run", list(results)
        )


@audit("RA-USER-FIDELITY")
def ra_user_fidelity(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Fidelity checks whose subject is anything but the original request."""
    for index, check in enumerate(c.body.user_fidelity):
        if check.subject_ref != c.state.request.uri:
            yield Violation(
                f"userFidelity.{index}.subjectRef",
                "Must be the original request",
                c.state.request.uri,
            )


@audit("RA-DECISION")
def ra_decision(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Releasing despite a mode-compliance failure, or downgrading a blocked review."""
    review = c.state.latest("QualityReview")
    if c.body.mode_compliance == "fail" and c.body.decision not in ("partial", "block"):
        yield Violation("decision", "A mode-compliance failure must be partial or block")
    if review is not None and review.body.decision == "block" and c.body.decision != "block":
        yield Violation("decision", "A blocked QualityReview forces the audit to block")


@audit("RA-PERMISSIONS-BREACH")
def ra_permissions_breach(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Passing mode compliance while a WorkResult records an action taken outside the permissions
    (status unauthorized)."""
    found = breaches(c.state)
    if found and c.body.mode_compliance != "fail":
        result, action = found[0]
        yield Violation(
            "modeCompliance",
            f"WorkResult {result.id} records action {action} as unauthorized, so the "
            "permissions were not honoured: set modeCompliance to fail (then partial or block)",
        )


@audit("RA-RELEASE")
def ra_release(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Releasing without a passing latest QualityReview or with an empty claim matrix."""
    review = c.state.latest("QualityReview")
    if c.body.decision != "release":
        return
    if review is None or review.body.decision != "pass":
        yield Violation("decision", "release needs the latest QualityReview to pass")
    if not c.body.claim_evidence_matrix:
        yield Violation("claimEvidenceMatrix", "release needs at least one claim")


@audit("RA-CRITERIA")
def ra_criteria(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Matrix claims about criteria the contract lacks."""
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    known = {a.id for a in contract.body.acceptance_criteria}
    for index, entry in enumerate(c.body.claim_evidence_matrix):
        if not set(entry.criterion_ids) <= known:
            yield Violation(f"claimEvidenceMatrix.{index}.criterionIds", "Unknown criterion")


@audit("RA-RELEASE-COVERAGE")
def ra_release_coverage(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Releasing a criterion that no supported direct claim covers.

    In report_only a supported user-reported claim covers a criterion too.
    """
    contract = c.state.latest("TaskContract")
    if contract is None or c.body.decision != "release":
        return
    bases = {"direct", "user_reported"} if c.mode == "report_only" else {"direct"}
    supported = {
        criterion
        for entry in c.body.claim_evidence_matrix
        if entry.status == "supported" and entry.basis in bases
        for criterion in entry.criterion_ids
    }
    for criterion in contract.body.acceptance_criteria:
        if criterion.id not in supported:
            yield Violation(
                "claimEvidenceMatrix",
                f"Criterion {criterion.id} has no supported direct claim; expected lists the "
                "criteria a release must cover",
                [a.id for a in contract.body.acceptance_criteria],
            )


@defect("RA-DEFECT-SCOPE")
def ra_defect_scope(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A defect naming unknown criteria, exceeding contract ∩ authorization, without backed
    capabilities, or leaving the replan unable to run a required verification of its stage."""
    defect, contract = c.body.remediation_defect, c.state.latest("TaskContract")
    ceiling = _ceiling(c)
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


@defect("RA-DEFECT-SOURCES")
def ra_defect_sources(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A defect that cites neither the latest QualityReview, a WorkResult nor any Evidence."""
    defect, review = c.body.remediation_defect, c.state.latest("QualityReview")
    if defect is None:
        return
    cited = {*every_uri(c.state, "WorkResult"), *every_uri(c.state, "Evidence")}
    if review is not None:
        cited.add(review.uri)
    if not set(defect.source_refs) & cited:
        yield Violation(
            "remediationDefect.sourceRefs", "Cite the latest QualityReview, results or Evidence"
        )


RULES: Final = (*rule.registered, *audit.registered, *defect.registered)
