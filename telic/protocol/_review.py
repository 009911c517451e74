"""The PromptReview of a contract, and the hard gate shared by reviews (docs/protocol.md §3.1).

Agent 1 scores the contract on the frozen ``contract-readiness-v1`` rubric. The overall score is
not free-form: it must equal the weighted mean of the six dimension scores rounded to two decimals
exactly as the original's ``Math.round(x * 100) / 100`` does, so a host and this controller agree
bit for bit on whether a score passes.
"""

from __future__ import annotations

import math
from typing import Annotated, Final, Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    ArtifactUri,
    BoundedText,
    Finding,
    Identifier,
    Items,
    NonEmptyItems,
    ReferenceUri,
    Score,
    Summary,
    TaskContractField,
)

PASS_SCORE: Final = 80
"""The lowest score that lets a review progress (PromptReview and QualityReview alike)."""

CoverageStatus = Literal["covered", "partial", "missing"]
"""How fully a source is carried into the contract."""

PromptReviewDecision = Literal["pass", "revise", "block"]
"""What the review decides about the contract."""


class HardGate(WireModel):
    """A yes/no condition a review must check."""

    id: Identifier
    passed: bool
    description: BoundedText
    evidence_refs: NonEmptyItems[ReferenceUri]
    rationale_summary: Summary


class ContractCoverage(WireModel):
    """How one source is carried into named contract fields."""

    source_ref: ReferenceUri
    """The request, the frame or the contract."""
    contract_fields: NonEmptyItems[TaskContractField]
    status: CoverageStatus


class DimensionScores(WireModel):
    """The contract-readiness-v1 scores."""

    intent_fidelity: Score
    """Weight 30%."""
    repository_grounding: Score
    """Weight 20%."""
    constraints_and_permissions: Score
    """Weight 15%."""
    testable_acceptance: Score
    """Weight 20%."""
    execution_feasibility: Score
    """Weight 10%."""
    context_efficiency: Score
    """Weight 5%."""


def js_round2(value: float) -> float:
    """Round to two decimals as ECMAScript's ``Math.round(value * 100) / 100`` does.

    ``Math.round`` rounds halves toward +∞. It is not ``floor(x + 0.5)``, which errs when adding
    0.5 itself rounds (for 0.49999999999999994, say); ``x - floor(x)`` is always exact.
    """
    scaled = value * 100
    whole = math.floor(scaled)
    if scaled - whole >= 0.5:
        whole += 1
    return whole / 100


def weighted_score(scores: DimensionScores) -> float:
    """Return the overall score a PromptReview must carry for ``scores``."""
    # Summed left to right in the rubric's order, as the original does; float addition is not
    # associative, so the order is part of the definition.
    total = (
        0.30 * scores.intent_fidelity
        + 0.20 * scores.repository_grounding
        + 0.15 * scores.constraints_and_permissions
        + 0.20 * scores.testable_acceptance
        + 0.10 * scores.execution_feasibility
        + 0.05 * scores.context_efficiency
    )
    return js_round2(total)


class PromptReview(ArtifactBody):
    """Agent 1's rubric review of a TaskContract."""

    id: Identifier
    run_id: Identifier
    target_ref: ArtifactUri
    rubric_id: Literal["contract-readiness-v1"]
    revision_number: Annotated[int, Field(ge=0, le=1)]
    coverage: Items[ContractCoverage]
    dimension_scores: DimensionScores
    overall_score: Score
    """Weighted mean of the scores, to two decimals."""
    hard_gates: NonEmptyItems[HardGate]
    findings: Items[Finding]
    """Problems found; blocking ones may ask for corrections."""
    decision: PromptReviewDecision
    """revise at most once."""
    rationale_summary: Summary

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        if self.overall_score != weighted_score(self.dimension_scores):
            raise PydanticCustomError(
                "overall_score_mismatch",
                "overallScore must equal the contract-readiness-v1 weighted score,"
                " rounded to two decimals",
            )
        failed_gate = any(not gate.passed for gate in self.hard_gates)
        blocking = [finding for finding in self.findings if finding.severity == "blocking"]
        if self.decision == "pass":
            if failed_gate or blocking:
                raise PydanticCustomError(
                    "pass_with_failure", "A pass may have no failed gate and no blocking finding"
                )
            if self.overall_score < PASS_SCORE:
                raise PydanticCustomError("score_below_pass", "A pass needs a score of 80 or more")
            if not self.coverage or any(entry.status != "covered" for entry in self.coverage):
                raise PydanticCustomError(
                    "pass_without_full_coverage", "A pass needs coverage that is all 'covered'"
                )
        elif self.decision == "block":
            if not (failed_gate or blocking):
                raise PydanticCustomError(
                    "block_without_failure", "A block needs a failed gate or a blocking finding"
                )
        else:
            if self.revision_number != 0:
                raise PydanticCustomError(
                    "revision_budget_exhausted", "Only the first contract may be sent to revision"
                )
            if not any(finding.required_correction is not None for finding in blocking):
                raise PydanticCustomError(
                    "revise_without_correction",
                    "A revise needs a blocking finding with a requiredCorrection",
                )
            if not any(finding.correction_fields for finding in self.findings):
                raise PydanticCustomError(
                    "revise_without_correction_field", "A revise needs at least one correctionField"
                )
        return self
