"""The QualityReview of executed work, with its gate and work orders (docs/protocol.md §3.1).

Agent 3 judges the WorkResults against the contract and decides: pass, partial, block, one shared
remediation (with a scoped work order), or, in analyze_and_fix, proceed_to_fix through a typed
diagnosis gate that carries the correction order. The schema ties each decision to the fields it
needs; whether the verdicts match the results and the contract is the controller's (§3.4).
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._result import AcceptanceCoverage, AcceptanceStatus
from telic.protocol._review import PASS_SCORE, HardGate
from telic.protocol._types import (
    ArtifactUri,
    BoundedText,
    Capability,
    Finding,
    Identifier,
    Items,
    PermissionSet,
    ReferenceUri,
    Score,
    Summary,
)

__all__ = [
    "CorrectionWorkOrder",
    "DiagnosisGate",
    "DiagnosisStatus",
    "QualityDecision",
    "QualityReview",
    "RemediationWorkOrder",
    "ReviewCheck",
    "VerificationResult",
    "VerificationStatus",
]

VerificationStatus = Literal["pass", "fail", "unverified", "unavailable"]
"""How a required verification turned out."""
DiagnosisStatus = Literal["supported", "unsupported", "unverified"]
"""Whether direct evidence supports the diagnosed root cause."""
QualityDecision = Literal["pass", "proceed_to_fix", "remediate", "block", "partial"]
"""What the review decides."""

_ToolCalls = Annotated[int, Field(ge=1, le=1_000)]


class ReviewCheck(WireModel):
    """One rule, regression or fidelity check, with its evidence."""

    id: Identifier
    subject_ref: ReferenceUri | None = None
    """What was checked (a rule, the request), or null."""
    description: BoundedText
    """What the check is."""
    status: AcceptanceStatus
    """The verdict."""
    evidence_refs: Items[ReferenceUri]
    """Evidence for the verdict."""
    rationale_summary: Summary
    """Why the verdict."""


class VerificationResult(WireModel):
    """The outcome of one contracted verification requirement."""

    requirement_id: Identifier
    """The contract's verification requirement."""
    capability: Capability
    """The capability used; must be the contracted one."""
    status: VerificationStatus
    """How it turned out."""
    evidence_refs: Items[ReferenceUri]
    """Evidence of the verification."""
    rationale_summary: Summary
    """Why the verdict."""


class CorrectionWorkOrder(WireModel):
    """The bounded fix a supported diagnosis authorizes planning for."""

    id: Identifier
    target_criterion_ids: Annotated[Items[Identifier], Field(min_length=1)]
    """The completion criteria the fix must satisfy."""
    objective: BoundedText
    """What the fix must achieve."""
    allowed_capabilities: Annotated[Items[Capability], Field(min_length=1)]
    """Capabilities the fix may use."""
    permissions: PermissionSet
    """The most the fix may do."""
    source_refs: Annotated[Items[ReferenceUri], Field(min_length=1)]
    """What the order rests on; includes every direct evidence ref of the gate."""
    maximum_tool_calls: _ToolCalls
    """Tool calls the fix plan may reserve."""
    rationale_summary: Summary
    """Why this is the smallest sufficient fix."""


class DiagnosisGate(WireModel):
    """The evidence boundary between read-only diagnosis and mutation in analyze_and_fix."""

    id: Identifier
    status: DiagnosisStatus
    """Whether direct evidence supports the root cause."""
    root_cause: BoundedText
    """The diagnosed cause."""
    direct_evidence_refs: Items[ArtifactUri]
    """Evidence artifacts that show the cause."""
    correction_work_order: CorrectionWorkOrder | None
    """The bounded fix; present exactly when the diagnosis is supported."""
    within_approved_scope: bool
    """Whether the fix stays inside the contract's scope."""
    permissions_sufficient: bool
    """Whether already approved permissions suffice for the fix."""
    rationale_summary: Summary
    """Why the gate holds or not."""

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        order = self.correction_work_order
        if self.status == "supported":
            if not self.direct_evidence_refs:
                raise PydanticCustomError(
                    "supported_gate_without_evidence",
                    "A supported diagnosis needs a directEvidenceRef",
                )
            if order is None:
                raise PydanticCustomError(
                    "supported_gate_without_order",
                    "A supported diagnosis needs a correctionWorkOrder",
                )
        elif order is not None:
            raise PydanticCustomError(
                "unsupported_gate_with_order",
                "Only a supported diagnosis may carry a correctionWorkOrder",
            )
        if order is not None and not set(self.direct_evidence_refs).issubset(order.source_refs):
            raise PydanticCustomError(
                "order_drops_gate_evidence",
                "The correction order's sourceRefs must include every directEvidenceRef",
            )
        return self


class RemediationWorkOrder(WireModel):
    """The one scoped remediation a review may ask planning for."""

    id: Identifier
    failed_criterion_ids: Annotated[Items[Identifier], Field(min_length=1)]
    """The criteria that failed and must be fixed."""
    objective: BoundedText
    """What the remediation must achieve."""
    allowed_capabilities: Items[Capability]
    """Capabilities the remediation may use."""
    permissions: PermissionSet
    """The most the remediation may do."""
    source_refs: Annotated[Items[ReferenceUri], Field(min_length=1)]
    """What the order rests on."""
    maximum_tool_calls: _ToolCalls
    """Tool calls the remediation plan may reserve."""
    rationale_summary: Summary
    """Why this is the smallest sufficient remediation."""


class QualityReview(ArtifactBody):
    """Agent 3's review of the executed work against the contract."""

    id: Identifier
    """Artifact id of this review."""
    run_id: Identifier
    """The run this review belongs to."""
    task_contract_ref: ArtifactUri
    """The contract the work is held to."""
    work_plan_refs: Items[ArtifactUri] = Field(default=[])
    """The plans reviewed."""
    work_result_refs: Items[ArtifactUri]
    """The results reviewed."""
    rubric_id: Literal["execution-quality-v1"]
    """The frozen rubric used."""
    acceptance_results: Annotated[Items[AcceptanceCoverage], Field(min_length=1)]
    """The verdict on each criterion of the current stage."""
    rule_compliance: Items[ReviewCheck]
    """One check per contract rule."""
    regression_checks: Items[ReviewCheck]
    """Checks that nothing else broke."""
    verification_results: Items[VerificationResult]
    """The outcome of each verification requirement of the stage."""
    findings: Items[Finding]
    """Problems found."""
    hard_gates: Annotated[Items[HardGate], Field(min_length=1)]
    """Gates checked."""
    score: Score
    """Overall quality; 80 or more to progress."""
    remaining_remediations: Annotated[int, Field(ge=0, le=1)]
    """Shared remediations left before this review."""
    decision: QualityDecision
    """What the review decides."""
    diagnosis_gate: DiagnosisGate | None = None
    """The diagnosis gate; required, supported and sufficient exactly when proceeding to fix."""
    remediation_work_order: RemediationWorkOrder | None
    """The scoped order; present exactly when the decision is remediate."""
    rationale_summary: Summary
    """Why the review decided so."""

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        if not (self.work_plan_refs or self.work_result_refs):
            raise PydanticCustomError(
                "no_plan_or_result_ref", "A review needs a workPlanRef or a workResultRef"
            )
        failed_gate = any(not gate.passed for gate in self.hard_gates)
        blocking = any(finding.severity == "blocking" for finding in self.findings)
        checks = [*self.rule_compliance, *self.regression_checks]
        unpassed_check = any(check.status != "pass" for check in checks)
        decision = self.decision
        if decision in ("pass", "proceed_to_fix") and self.score < PASS_SCORE:
            raise PydanticCustomError("score_below_pass", "pass and proceed_to_fix need 80 or more")
        if decision == "pass":
            if failed_gate or blocking:
                raise PydanticCustomError(
                    "pass_with_failure", "A pass may have no failed gate and no blocking finding"
                )
            if any(result.status != "pass" for result in self.acceptance_results):
                raise PydanticCustomError(
                    "pass_with_unpassed_criterion", "A pass needs every acceptance result to pass"
                )
            if unpassed_check:
                raise PydanticCustomError(
                    "pass_with_unpassed_check",
                    "A pass needs every rule and regression check to pass",
                )
        if decision == "remediate":
            if self.remaining_remediations != 1:
                raise PydanticCustomError(
                    "remediation_budget_exhausted", "remediate needs remainingRemediations of 1"
                )
            if self.remediation_work_order is None:
                raise PydanticCustomError(
                    "remediate_without_order", "remediate needs a remediationWorkOrder"
                )
        elif self.remediation_work_order is not None:
            raise PydanticCustomError(
                "order_without_remediate", "Only remediate may carry a remediationWorkOrder"
            )
        if decision == "proceed_to_fix":
            if failed_gate or blocking or unpassed_check:
                raise PydanticCustomError(
                    "proceed_with_failure",
                    "proceed_to_fix may have no failed gate, failed check or blocking finding",
                )
            gate = self.diagnosis_gate
            if gate is None:
                raise PydanticCustomError(
                    "proceed_without_gate", "proceed_to_fix needs a diagnosisGate"
                )
            if not (
                gate.status == "supported"
                and gate.direct_evidence_refs
                and gate.correction_work_order is not None
                and gate.within_approved_scope
                and gate.permissions_sufficient
            ):
                raise PydanticCustomError(
                    "diagnosis_gate_not_sufficient",
                    "proceed_to_fix needs a supported gate with direct evidence, a correction"
                    " order, approved scope and sufficient permissions",
                )
        elif self.diagnosis_gate is not None:
            raise PydanticCustomError(
                "gate_without_proceed", "Only proceed_to_fix may carry a diagnosisGate"
            )
        return self
