"""The one bounded question a run may ask its user (docs/protocol.md §3.1, §3.2).

A ``ClarificationRequest`` pauses a pre-audit phase on a user-owned, materially divergent unknown
or on a permission boundary. It offers two to eight typed choices; the answer is exactly one
choice id. A choice either stays within the run's authority (resume or cancel) or ends the run
so that a new one can be started with explicit authority; it never widens the current run.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    BoundedText,
    Identifier,
    Label,
    NonEmptyItems,
    ReferenceUri,
    Summary,
    unique,
)

MIN_CHOICES: Final = 2
MAX_CHOICES: Final = 8

ClarificationReason = Literal["user_owned_materially_divergent", "permission_expanding"]
AuthorityEffect = Literal["within_current_authority", "requires_new_run"]
RunEffect = Literal["resume", "cancel", "new_run"]


class ClarificationChoice(WireModel):
    """One answer the user may give."""

    id: Identifier
    """What the user answers to pick it."""
    label: Label
    consequence: BoundedText
    """What picking it does; distinct from every other choice."""
    authority_effect: AuthorityEffect
    run_effect: RunEffect

    @model_validator(mode="after")
    def _new_run_needs_new_authority(self) -> ClarificationChoice:
        if (self.authority_effect == "requires_new_run") != (self.run_effect == "new_run"):
            raise PydanticCustomError(
                "clarification_new_run_mismatch",
                "Exactly the new_run choices may require a new run",
            )
        return self


class ClarificationRequest(ArtifactBody):
    """The run's single, bounded question to its user."""

    id: Identifier
    run_id: Identifier
    question: BoundedText
    reason: ClarificationReason
    divergence: BoundedText
    """How readings of the request diverge, or which boundary is in the way."""
    evidence_inspected: NonEmptyItems[ReferenceUri]
    blocked_boundary: Label
    """The decision or permission that blocks progress."""
    response_constraints: Summary
    """How the user must answer."""
    response_choices: Annotated[
        list[ClarificationChoice], Field(min_length=MIN_CHOICES, max_length=MAX_CHOICES)
    ]
    permission_expansion_required: bool
    """True exactly when the reason is permission_expanding."""
    rationale_summary: Summary

    @model_validator(mode="after")
    def _bounded_choices(self) -> ClarificationRequest:
        choices = self.response_choices
        if self.permission_expansion_required != (self.reason == "permission_expanding"):
            raise PydanticCustomError(
                "clarification_flag_mismatch",
                "permissionExpansionRequired must be true exactly when reason is "
                "permission_expanding",
            )
        if not unique([choice.id for choice in choices]):
            raise PydanticCustomError(
                "clarification_duplicate_choice_id", "Choice ids must be unique"
            )
        if not unique([choice.consequence for choice in choices]):
            raise PydanticCustomError(
                "clarification_duplicate_consequence", "Choice consequences must be distinct"
            )
        effects = {choice.authority_effect for choice in choices}
        if self.reason == "user_owned_materially_divergent":
            if effects != {"within_current_authority"}:
                raise PydanticCustomError(
                    "clarification_user_owned_needs_current_authority",
                    "Every choice of a user-owned clarification must stay within current authority",
                )
        elif "requires_new_run" not in effects or not any(
            choice.authority_effect == "within_current_authority" and choice.run_effect == "resume"
            for choice in choices
        ):
            raise PydanticCustomError(
                "clarification_permission_choices_missing",
                "A permission-expanding clarification needs a bounded resume choice and a "
                "new-run choice",
            )
        return self
