"""Invariants of the user report: nothing but what the audit approved, said honestly.

With a ReleaseAudit, the report's status fits the audit's decision, its completion claims copy
the audit's supported matrix verbatim (same id, same text, identical evidence, compatible
basis), its verification references are exactly the evidence of the passing required
verifications, and a non-completed report cites the judgement behind it. Without an audit (an
early block) the report is blocked, claims nothing and cites the review or clarification.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import (
    breaches,
    report_anchor,
    report_change_refs,
    report_verification_refs,
    required_verification_results,
    supported_claims,
    trace_ref,
)
from telic.controller._rules_frame import latest_uri
from telic.protocol import UserReport

rule = Rules(("UserReport",), "§3.4 UserReport")

_FITS: Final[dict[str, frozenset[str]]] = {
    "release": frozenset({"completed"}),
    "partial": frozenset({"partial", "failed_verification"}),
    "block": frozenset({"blocked"}),
    "remediate": frozenset(),
}


def _fits(decision: str, report: UserReport) -> frozenset[str]:
    """The statuses a report may take after an audit ``decision``.

    A report that admits the permissions were not honoured cannot be ``completed`` (schema), so
    after a release it may say ``partial`` instead of being forced to claim otherwise.
    """
    if decision == "release" and not report.permissions_honored:
        return frozenset({"partial"})
    return _FITS[decision]


@rule("UR-TRACE-REF")
def ur_trace_ref(c: Check[UserReport]) -> Iterator[Violation]:
    """A traceRef other than trace://<runId>."""
    if c.body.trace_ref != trace_ref(c.state):
        yield Violation("traceRef", "traceRef must be trace://<runId>", trace_ref(c.state))


@rule("UR-STATUS", section="§3.2; §3.4 UserReport")
def ur_status(c: Check[UserReport]) -> Iterator[Violation]:
    """A status that contradicts the outcome or the audit (including claiming cancelled)."""
    status, hint = c.body.terminal_status, c.state.run.outcome_hint
    audit = c.state.latest("ReleaseAudit")
    if status == "cancelled":
        yield Violation("terminalStatus", "A report cannot claim cancelled; cancel the run")
    elif status == "completed" and hint in ("blocked", "partial"):
        yield Violation("terminalStatus", f"The run's outcome is {hint}; it cannot be completed")
    elif audit is None and c.state.run.topology == "micro":
        return  # a micro run has no audit: TP-MICRO-REPORT-* judge its report (§3.7)
    elif audit is None and (hint != "blocked" or status != "blocked"):
        yield Violation("terminalStatus", "Without an audit only a blocked report is legal")
    elif audit is not None and status not in _fits(audit.body.decision, c.body):
        yield Violation("terminalStatus", "The status must fit the audit's decision")


@rule("UR-AUDIT-LINK")
def ur_audit_link(c: Check[UserReport]) -> Iterator[Violation]:
    """A report the audit did not announce, or permissionsHonored true despite a failed mode
    compliance or an action on record as unauthorized.

    ``false`` is always accepted: a report may admit a breach the audit missed.
    """
    audit = c.state.latest("ReleaseAudit")
    if audit is None:
        return
    if audit.body.user_report_ref != c.uri:
        yield Violation(
            "id",
            "The report's id must be the one the audit's userReportRef names",
            audit.body.user_report_ref.rsplit("/", 1)[-1],
        )
    if not c.body.permissions_honored:
        return
    if audit.body.mode_compliance != "pass":
        yield Violation(
            "permissionsHonored",
            "The audit's mode compliance failed: permissionsHonored is false",
            False,
        )
    elif breaches(c.state):
        yield Violation(
            "permissionsHonored",
            "An action is on record as unauthorized: permissionsHonored is false",
            False,
        )


@rule("UR-EARLY-BLOCK")
def ur_early_block(c: Check[UserReport]) -> Iterator[Violation]:
    """An unaudited report that claims something, does not cite the blocking review, or says the
    permissions were honoured despite an action on record as unauthorized.

    A second clarification can block a run mid-execution, after such an action; ``false`` is
    always accepted.
    """
    if c.state.latest("ReleaseAudit") is not None or c.state.run.topology == "micro":
        return
    anchor = report_anchor(c.state)
    if anchor is not None and anchor.uri not in c.body.finding_refs:
        yield Violation("findingRefs", "An early block cites the review or clarification")
    if c.body.completion_claims:
        yield Violation("completionClaims", "An early block claims nothing")
    if c.body.permissions_honored and breaches(c.state):
        yield Violation(
            "permissionsHonored",
            "An action is on record as unauthorized: permissionsHonored is false",
        )


@rule("UR-FINDINGS")
def ur_findings(c: Check[UserReport]) -> Iterator[Violation]:
    """A non-completed report that does not cite its controlling review or audit.

    Only an audited report: ``UR-EARLY-BLOCK`` judges the unaudited one.
    """
    if c.state.latest("ReleaseAudit") is None or c.body.terminal_status == "completed":
        return
    judged = {latest_uri(c, "QualityReview"), latest_uri(c, "ReleaseAudit")}
    if not set(c.body.finding_refs) & judged:
        yield Violation("findingRefs", "Cite the latest QualityReview or ReleaseAudit")


@rule("UR-CHANGE-REFS")
def ur_change_refs(c: Check[UserReport]) -> Iterator[Violation]:
    """changeRefs that drop or add to the diffRefs of the run's WorkResults."""
    diffs = report_change_refs(c.state)
    if set(c.body.change_refs) != set(diffs):
        yield Violation(
            "changeRefs", "changeRefs must equal the diffRefs of every WorkResult", list(diffs)
        )


@rule("UR-VERIFICATION-REFS")
def ur_verification_refs(c: Check[UserReport]) -> Iterator[Violation]:
    """Completing despite a failed required verification, or citing other verification proof."""
    if c.state.latest("ReleaseAudit") is None or c.body.terminal_status != "completed":
        return
    results = required_verification_results(c.state)
    if any(r.status != "pass" for r in results):
        yield Violation("terminalStatus", "A required verification did not pass")
    wanted = report_verification_refs(c.state)
    if set(c.body.verification_refs) != set(wanted):
        yield Violation(
            "verificationRefs",
            "Must equal the evidence of the required verification results",
            list(wanted),
        )


@rule("UR-FAILED-VERIFICATION")
def ur_failed_verification(c: Check[UserReport]) -> Iterator[Violation]:
    """Reporting failed_verification when every required verification passed."""
    if c.body.terminal_status != "failed_verification":
        return
    if all(r.status == "pass" for r in required_verification_results(c.state)):
        yield Violation("terminalStatus", "Every required verification passed")


@rule("UR-CLAIM-MATCHES-AUDIT-MATRIX")
def ur_claim_matches_audit_matrix(c: Check[UserReport]) -> Iterator[Violation]:
    """A completion claim that is not a verbatim copy of a supported audit claim."""
    if c.state.run.topology == "micro":
        return  # no audit matrix: the micro report rests on the receipt (TP-MICRO-REPORT-*)
    matrix = supported_claims(c.state)
    for index, claim in enumerate(c.body.completion_claims):
        entry = matrix.get(claim.id)
        if (
            entry is None
            or entry.claim != claim.text
            or set(entry.evidence_refs) != set(claim.evidence_refs)
            or (entry.basis == "user_reported") != (claim.status == "user_reported")
        ):
            yield Violation(
                f"completionClaims.{index}",
                "A claim must copy a supported audit claim: same id, text, evidence and basis "
                "(expected lists the supported claim ids)",
                list(matrix),
            )


@rule("UR-RELEASE-CLAIMS")
def ur_release_claims(c: Check[UserReport]) -> Iterator[Violation]:
    """After a release, dropping a supported claim or adding another."""
    audit = c.state.latest("ReleaseAudit")
    if audit is None or audit.body.decision != "release":
        return
    supported = supported_claims(c.state)
    if {claim.id for claim in c.body.completion_claims} != set(supported):
        yield Violation(
            "completionClaims",
            "Report every supported audit claim, and only those",
            list(supported),
        )


RULES: Final = rule.registered
