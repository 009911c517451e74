"""The QualityReview of executed work, with its gate and work orders (docs/protocol.md §3.1).

Agent 3 judges the WorkResults against the contract and decides: pass, partial, block, one shared
remediation (with a scoped work order), or, in analyze_and_fix, proceed_to_fix through a typed
diagnosis gate that carries the correction order. The schema ties each decision to the fields it
needs; whether the verdicts match the results and the contract is the controller's (§3.4).
"""

from __future__ import annotations

from typing import Literal, Self

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
    NonEmptyItems,
    OnceBudget,
    PermissionSet,
    ReferenceUri,
    ReviewKind,
    Score,
    Summary,
    ToolCalls,
)

VerificationStatus = Literal["pass", "fail", "unverified", "unavailable"]
"""How a required verification turned out."""
DiagnosisStatus = Literal["supported", "unsupported", "unverified"]
"""Whether direct evidence supports the diagnosed root cause."""
QualityDecision = Literal["pass", "proceed_to_fix", "remediate", "block", "partial"]
"""What the review decides."""


def check_work_refs(plan_refs: list[str], result_refs: list[str], subject: str) -> None:
    """Refuse a review or an audit (``subject``) that names neither a WorkPlan nor a WorkResult."""
    if not (plan_refs or result_refs):
        raise PydanticCustomError(
            "no_plan_or_result_ref", f"{subject} needs a workPlanRef or a workResultRef"
        )


def check_remediation_left(remaining: int) -> None:
    """Refuse a ``remediate`` decision once the run's one shared remediation is spent."""
    if remaining != 1:
        raise PydanticCustomError(
            "remediation_budget_exhausted", "remediate needs remainingRemediations of 1"
        )


class ReviewCheck(WireModel):
    """One rule, regression or fidelity check."""

    id: Identifier
    subject_ref: ReferenceUri | None = None
    """A rule, the request, or null."""
    description: BoundedText
    status: AcceptanceStatus
    evidence_refs: Items[ReferenceUri]
    rationale_summary: Summary


class VerificationResult(WireModel):
    """The outcome of one contracted verification requirement."""

    requirement_id: Identifier
    capability: Capability
    status: VerificationStatus
    evidence_refs: Items[ReferenceUri]
    rationale_summary: Summary


class CorrectionWorkOrder(WireModel):
    """The bounded fix a supported diagnosis authorizes."""

    id: Identifier
    target_criterion_ids: NonEmptyItems[Identifier]
    objective: BoundedText
    allowed_capabilities: NonEmptyItems[Capability]
    permissions: PermissionSet
    source_refs: NonEmptyItems[ReferenceUri]
    """Includes every direct evidence ref of the gate."""
    maximum_tool_calls: ToolCalls
    rationale_summary: Summary


class DiagnosisGate(WireModel):
    """The boundary between read-only diagnosis and mutation."""

    id: Identifier
    status: DiagnosisStatus
    root_cause: BoundedText
    direct_evidence_refs: Items[ArtifactUri]
    correction_work_order: CorrectionWorkOrder | None
    """Present exactly when the diagnosis is supported."""
    within_approved_scope: bool
    permissions_sufficient: bool
    rationale_summary: Summary

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
    """The one scoped remediation a review may ask for."""

    id: Identifier
    failed_criterion_ids: NonEmptyItems[Identifier]
    objective: BoundedText
    allowed_capabilities: Items[Capability]
    permissions: PermissionSet
    source_refs: NonEmptyItems[ReferenceUri]
    maximum_tool_calls: ToolCalls
    rationale_summary: Summary


class QualityReview(ArtifactBody):
    """Agent 3's review of the executed work against the contract."""

    id: Identifier
    run_id: Identifier
    task_contract_ref: ArtifactUri
    work_plan_refs: Items[ArtifactUri] = Field(default=[])
    work_result_refs: Items[ArtifactUri]
    rubric_id: Literal["execution-quality-v1"]
    acceptance_results: NonEmptyItems[AcceptanceCoverage]
    rule_compliance: Items[ReviewCheck]
    regression_checks: Items[ReviewCheck]
    verification_results: Items[VerificationResult]
    findings: Items[Finding]
    hard_gates: NonEmptyItems[HardGate]
    score: Score
    """80 or more to progress."""
    remaining_remediations: OnceBudget
    """Shared remediations left before it."""
    decision: QualityDecision
    diagnosis_gate: DiagnosisGate | None = None
    """Required, supported and sufficient exactly when proceeding to fix."""
    remediation_work_order: RemediationWorkOrder | None
    """Present exactly when the decision is remediate."""
    rationale_summary: Summary
    review_kind: ReviewKind | None = Field(default=None, exclude_if=lambda value: value is None)
    """Beyond Telic 1.0: ``spot`` (the ordinary review, the default in a run that asked for a
    topology) or ``evidence_reverify`` (a forensic run's second review, docs/protocol.md §3.7)."""

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        check_work_refs(self.work_plan_refs, self.work_result_refs, "A review")
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
            check_remediation_left(self.remaining_remediations)
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
            # A supported gate has direct evidence and a correction order: DiagnosisGate's rules.
            if not (
                gate.status == "supported"
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
