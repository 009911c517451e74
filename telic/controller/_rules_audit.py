"""Invariants of the release audit: the whole run against the user's own request.

The auditor names the latest review and every plan and result of the run, judges fidelity
against the immutable original request only, and can never release what the quality review did
not pass, downgrade a blocked review, or release a criterion without a supported direct claim.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import breaches, every_uri
from telic.controller._rules_frame import latest_ref, original_request
from telic.controller._rules_quality import contract_latest, remaining_remediations
from telic.protocol import ReleaseAudit

__all__ = ["RULES"]

_RA = ("ReleaseAudit",)
_S = "§3.4 ReleaseAudit"

rule = Rules(_RA, _S)


rule(
    "RA-REMAINING-REMEDIATIONS",
    "A remainingRemediations other than the run's shared counter.",
    section="§3.3 remediations",
)(remaining_remediations)

rule("RA-ORIGINAL-REQUEST", "Auditing against anything but the run's immutable original request.")(
    original_request
)

rule("RA-CONTRACT-LATEST", "Auditing against anything but the latest TaskContract.")(
    contract_latest
)


@rule("RA-LINEAGE", "Skipping the latest QualityReview, or any plan or result of the run.")
def ra_lineage(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """The audit names the latest review and every plan and result of the run."""
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


@rule("RA-USER-FIDELITY", "Fidelity checks whose subject is anything but the original request.")
def ra_user_fidelity(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """userFidelity subjects are exactly the original request."""
    for index, check in enumerate(c.body.user_fidelity):
        if check.subject_ref != c.state.request.uri:
            yield Violation(
                f"userFidelity.{index}.subjectRef",
                "Must be the original request",
                c.state.request.uri,
            )


@rule(
    "RA-DECISION", "Releasing despite a mode-compliance failure, or downgrading a blocked review."
)
def ra_decision(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A mode-compliance failure is never released, and a review block is never downgraded."""
    review = c.state.latest("QualityReview")
    if c.body.mode_compliance == "fail" and c.body.decision not in ("partial", "block"):
        yield Violation("decision", "A mode-compliance failure must be partial or block")
    if review is not None and review.body.decision == "block" and c.body.decision != "block":
        yield Violation("decision", "A blocked QualityReview forces the audit to block")


@rule(
    "RA-PERMISSIONS-BREACH",
    "Passing mode compliance while a WorkResult records an action taken outside the "
    "permissions (status unauthorized).",
)
def ra_permissions_breach(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """An action recorded as unauthorized means mode compliance failed."""
    found = breaches(c.state)
    if found and c.body.mode_compliance != "fail":
        result, action = found[0]
        yield Violation(
            "modeCompliance",
            f"WorkResult {result.id} records action {action} as unauthorized, so the "
            "permissions were not honoured: set modeCompliance to fail (then partial or block)",
        )


@rule(
    "RA-RELEASE", "Releasing without a passing latest QualityReview or with an empty claim matrix."
)
def ra_release(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """release needs a passing latest QualityReview and a non-empty claim matrix."""
    review = c.state.latest("QualityReview")
    if c.body.decision != "release":
        return
    if review is None or review.body.decision != "pass":
        yield Violation("decision", "release needs the latest QualityReview to pass")
    if not c.body.claim_evidence_matrix:
        yield Violation("claimEvidenceMatrix", "release needs at least one claim")


@rule("RA-CRITERIA", "Matrix claims about criteria the contract lacks.")
def ra_criteria(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """Matrix criterionIds exist in the contract."""
    contract = c.state.latest("TaskContract")
    if contract is None:
        return
    known = {a.id for a in contract.body.acceptance_criteria}
    for index, entry in enumerate(c.body.claim_evidence_matrix):
        if not set(entry.criterion_ids) <= known:
            yield Violation(f"claimEvidenceMatrix.{index}.criterionIds", "Unknown criterion")


@rule("RA-RELEASE-COVERAGE", "Releasing a criterion that no supported direct claim covers.")
def ra_release_coverage(c: Check[ReleaseAudit]) -> Iterator[Violation]:
    """A release covers every criterion with a supported direct claim (report_only: or user)."""
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


RULES: Final = rule.registered
