"""The ReleaseAudit: Agent 5's independent check before the user is told (docs/protocol.md §3.1).

The auditor matches every claim to evidence, checks fidelity to the original request and mode
compliance, and decides release, partial, block, or one shared remediation (returned to the
quality controller as a typed defect). A partial or blocked audit must name what is wrong.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._quality import ReviewCheck, check_remediation_left, check_work_refs
from telic.protocol._types import (
    ArtifactUri,
    BoundedText,
    Capability,
    Finding,
    Identifier,
    Items,
    NonEmptyItems,
    OnceBudget,
    PermissionSet,
    ReferenceUri,
    Summary,
    Timestamp,
    ToolCalls,
    unique,
)

ClaimBasis = Literal["direct", "user_reported"]
"""What a claim rests on: direct evidence, or the user's own word."""
ClaimSupport = Literal["supported", "unsupported", "contradicted", "unverified"]
"""How well the evidence bears a claim out."""
ModeCompliance = Literal["pass", "fail"]
"""Whether the run stayed inside its mode."""
AuditDecision = Literal["release", "remediate", "partial", "block"]
"""What the audit decides."""


class ClaimEvidenceEntry(WireModel):
    """One claim to be reported."""

    claim_id: Identifier
    claim: BoundedText
    """Worded as the report will word it."""
    criterion_ids: NonEmptyItems[Identifier]
    basis: ClaimBasis
    status: ClaimSupport
    evidence_refs: Items[ReferenceUri]
    rationale_summary: Summary


class RemediationDefect(WireModel):
    """Returned to the quality controller for one scoped remediation."""

    id: Identifier
    failed_criterion_ids: NonEmptyItems[Identifier]
    description: BoundedText
    allowed_capabilities: Items[Capability]
    permissions: PermissionSet
    source_refs: NonEmptyItems[ReferenceUri]
    maximum_tool_calls: ToolCalls
    return_to_role: Literal["quality_controller"]
    rationale_summary: Summary


class ReleaseAudit(ArtifactBody):
    """Agent 5's audit of claims, evidence, fidelity and mode before reporting."""

    id: Identifier
    run_id: Identifier
    original_request_ref: ArtifactUri
    task_contract_ref: ArtifactUri
    work_plan_refs: Items[ArtifactUri] = Field(default=[])
    work_result_refs: Items[ArtifactUri]
    quality_review_ref: ArtifactUri
    user_fidelity: NonEmptyItems[ReviewCheck]
    mode_compliance: ModeCompliance
    claim_evidence_matrix: Items[ClaimEvidenceEntry]
    """Every claim to be reported."""
    unresolved_risks: Items[BoundedText]
    findings: Items[Finding]
    remaining_remediations: OnceBudget
    """Shared remediations left before it."""
    decision: AuditDecision
    remediation_defect: RemediationDefect | None
    """Present exactly when the decision is remediate."""
    user_report_ref: ArtifactUri | None
    """Null exactly when the decision is remediate."""
    rationale_summary: Summary

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        if not unique([entry.claim_id for entry in self.claim_evidence_matrix]):
            raise PydanticCustomError("duplicate_claim_id", "Claim ids must be unique")
        check_work_refs(self.work_plan_refs, self.work_result_refs, "An audit")
        failures = _release_failures(self)
        decision = self.decision
        if decision == "release" and failures:
            raise PydanticCustomError(
                "release_with_failure",
                "release needs {failed}; decide partial (or block), or move an unproven "
                "statement out of the matrix into unresolved risks",
                {"failed": "; ".join(failures[:6])},
            )
        if decision == "remediate":
            check_remediation_left(self.remaining_remediations)
            if self.remediation_defect is None:
                raise PydanticCustomError(
                    "remediate_without_defect", "remediate needs a remediationDefect"
                )
            if self.user_report_ref is not None:
                raise PydanticCustomError(
                    "remediate_with_report_ref", "remediate may not name a userReportRef"
                )
        else:
            if self.remediation_defect is not None:
                raise PydanticCustomError(
                    "defect_without_remediate", "Only remediate may carry a remediationDefect"
                )
            if self.user_report_ref is None:
                raise PydanticCustomError(
                    "report_ref_missing", "Every decision but remediate needs a userReportRef"
                )
        if decision in ("partial", "block") and not (
            failures or self.findings or self.unresolved_risks
        ):
            raise PydanticCustomError(
                "no_concrete_failure",
                "partial and block must keep a failure: mode, fidelity, an unsupported claim,"
                " a finding or a risk",
            )
        return self


def _release_failures(audit: ReleaseAudit) -> list[str]:
    """What stands between ``audit`` and a release, each with its path: a failed mode, fidelity
    check or claim, or a blocking finding."""
    failures: list[str] = []
    if audit.mode_compliance == "fail":
        failures.append("modeCompliance pass (it is fail)")
    failures += [
        f"userFidelity.{i}.status pass (it is {check.status})"
        for i, check in enumerate(audit.user_fidelity)
        if check.status != "pass"
    ]
    failures += [
        f"claimEvidenceMatrix.{i}.status supported (it is {entry.status})"
        for i, entry in enumerate(audit.claim_evidence_matrix)
        if entry.status != "supported"
    ]
    failures += [
        f"no blocking finding (findings.{i} is blocking)"
        for i, finding in enumerate(audit.findings)
        if finding.severity == "blocking"
    ]
    return failures


DigestStatus = Literal["verified", "failed"]
"""Whether every reference a passing review cited re-hashed to its stored digest."""


class ReceiptAudit(ArtifactBody):
    """The controller's receipt of a passing review (beyond Telic 1.0, docs/protocol.md §3.7).

    Made once per run that asked for a micro or standard topology, when its first passing
    QualityReview is accepted: every artifact the review cites is read back and re-hashed.
    Controller-owned: a host can read it, never submit it.
    """

    id: Identifier
    run_id: Identifier
    controlling_review_ref: ArtifactUri
    """The QualityReview this receipt certifies."""
    claim_evidence_matrix: Items[ClaimEvidenceEntry]
    """One claim per acceptance result of the review."""
    digest_status: DigestStatus
    """``verified`` when every cited reference re-hashed and every claim is supported."""
    verified_at: Timestamp

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        if not unique([entry.claim_id for entry in self.claim_evidence_matrix]):
            raise PydanticCustomError(
                "duplicate_claim_id", "Receipt-audit claim identifiers must be unique"
            )
        if self.digest_status == "verified" and any(
            entry.status != "supported" for entry in self.claim_evidence_matrix
        ):
            raise PydanticCustomError(
                "unsupported_verified_claim", "Verified receipts require supported claim evidence"
            )
        return self
