"""Agent 1's grounded framing of the request, and its optional presentation (docs/protocol.md §3.1).

A ``ProblemFrame`` separates what is known (facts with provenance) from what is inferred and
what is unknown, and drafts the acceptance criteria. A ``ScenarioSpec`` retells a frame for
people; it adds nothing and the frame stays authoritative.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Discriminator, StringConstraints, Tag, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import UNDESCRIBED, ArtifactBody, WireModel
from telic.protocol._types import (
    AcceptanceCriterion,
    ArtifactUri,
    BoundedText,
    Confidence,
    Identifier,
    Items,
    Label,
    Mode,
    NonEmptyItems,
    ReferenceUri,
    Scope,
    Summary,
    unique,
)

FactProvenance = Literal["user", "repository", "runtime", "browser", "tool"]

UnknownClassification = Literal[
    "discoverable",
    "bounded_reversible",
    "user_owned_materially_divergent",
    "permission_expanding",
    "irrelevant",
]
DIVERGENT_CLASSIFICATIONS: Final[frozenset[UnknownClassification]] = frozenset(
    {"user_owned_materially_divergent", "permission_expanding"}
)
"""Unknowns that only the user can settle, so they force a clarification."""


def _clarification_tag(value: object) -> str | None:
    # Tag by identity so that only real booleans match: 1 == True would pass a Literal[True].
    required = (
        value.get("required") if isinstance(value, dict) else getattr(value, "required", None)
    )
    if required is True:
        return "needed"
    if required is False:
        return "not_needed"
    return None


class GroundedFact(WireModel):
    """Something known, with where it came from."""

    model_config = UNDESCRIBED

    id: Identifier
    claim: BoundedText
    provenance: FactProvenance
    source_ref: ReferenceUri


class GroundedInference(WireModel):
    """Something concluded from sources."""

    id: Identifier
    claim: BoundedText
    source_refs: NonEmptyItems[ReferenceUri]
    confidence: Confidence


class Unknown(WireModel):
    """An open question and how it may be settled."""

    model_config = UNDESCRIBED

    id: Identifier
    question: BoundedText
    classification: UnknownClassification
    impact: Summary
    evidence_inspected: Items[ReferenceUri]


class ClarificationNotNeeded(WireModel):
    """No clarification is needed."""

    model_config = UNDESCRIBED

    required: Literal[False]
    reason: Summary | None


class ClarificationNeeded(WireModel):
    """A clarification is needed and has been requested."""

    required: Literal[True]
    reason: Summary
    request_ref: ArtifactUri


FrameClarification = Annotated[
    Annotated[ClarificationNotNeeded, Tag("not_needed")]
    | Annotated[ClarificationNeeded, Tag("needed")],
    Discriminator(
        _clarification_tag,
        custom_error_type="clarification_required_type",
        custom_error_message="clarification.required must be true or false",
    ),
]
"""Whether the frame needs the user, told apart by ``required``."""


class ProblemFrame(ArtifactBody):
    """Agent 1's grounded interpretation of the request."""

    id: Identifier
    run_id: Identifier
    original_request_ref: ArtifactUri
    intent_mode: Mode
    goal: BoundedText
    known_facts: Items[GroundedFact]
    inferences: Items[GroundedInference]
    unknowns: Items[Unknown]
    scope: Scope
    constraints: Items[BoundedText]
    non_goals: Items[BoundedText]
    applicable_rule_refs: Items[ReferenceUri]
    draft_acceptance_criteria: Items[AcceptanceCriterion]
    clarification: FrameClarification
    rationale_summary: Summary

    @model_validator(mode="after")
    def _consistent(self) -> ProblemFrame:
        ids = [
            *(fact.id for fact in self.known_facts),
            *(inference.id for inference in self.inferences),
            *(unknown.id for unknown in self.unknowns),
            *(criterion.id for criterion in self.draft_acceptance_criteria),
        ]
        if not unique(ids):
            raise PydanticCustomError(
                "frame_duplicate_id",
                "Ids must be unique across facts, inferences, unknowns and criteria",
            )
        divergent = any(u.classification in DIVERGENT_CLASSIFICATIONS for u in self.unknowns)
        if divergent and not self.clarification.required:
            raise PydanticCustomError(
                "frame_clarification_required",
                "A user-owned or permission-expanding unknown requires clarification: before "
                "asking, submit a ClarificationRequest instead of the frame; once the user "
                "answered, set required true with requestRef naming that request, or record the "
                "answer as a user fact and drop the unknown",
            )
        return self


class SourceMapEntry(WireModel):
    """Which sources back one field of a scenario."""

    field: Label
    """The scenario field."""
    source_refs: NonEmptyItems[ReferenceUri]
    """Its sources (at least one)."""


class ScenarioSpec(ArtifactBody):
    """A human-readable retelling of a ProblemFrame; the frame stays authoritative."""

    id: Identifier
    run_id: Identifier
    problem_frame_ref: ArtifactUri
    """The frame it presents."""
    title: Label
    """Short title."""
    narrative: BoundedText
    """The situation, told plainly."""
    actor: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    """Who experiences it."""
    observable_symptoms: Items[BoundedText]
    """What can be observed."""
    desired_outcome: BoundedText
    """What a good result looks like."""
    source_map: Items[SourceMapEntry]
    """Sources behind each field."""
    prompt_readiness_rubric_ref: ArtifactUri
    """The rubric, ``artifact://system/rubrics/contract-readiness-v1``."""
    rationale_summary: Summary
    """Why this presentation is faithful."""
