"""The UserReport: what the user is finally told (docs/protocol.md §3.1 "UserReport").

A report only repeats audited claims. A completed report must back every claim with evidence and
confirm that permissions were honoured; any other outcome (except cancellation) must say what is
missing through a finding, a risk or a next action instead of dressing it up as success.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    BoundedText,
    EvidenceClaim,
    Identifier,
    Items,
    ReferenceUri,
    Summary,
    TraceUri,
)

__all__ = [
    "NextUserAction",
    "TerminalStatus",
    "UserReport",
]

TerminalStatus = Literal["completed", "partial", "blocked", "cancelled", "failed_verification"]
"""How the run ended, as reported to the user."""


class NextUserAction(WireModel):
    """Something the user may do next."""

    id: Identifier
    description: BoundedText
    """What to do."""
    requires_authorization: bool
    """Whether it needs authority the run did not have."""


class UserReport(ArtifactBody):
    """Agent 5's final report to the user."""

    id: Identifier
    """Artifact id of this report."""
    run_id: Identifier
    """The run reported on."""
    terminal_status: TerminalStatus
    """How the run ended."""
    summary: BoundedText
    """What happened, for the user."""
    completion_claims: Items[EvidenceClaim]
    """Audited claims of what was achieved."""
    finding_refs: Items[ReferenceUri]
    """Reviews or audits whose findings explain the outcome."""
    change_refs: Items[ReferenceUri]
    """The diff of every change made."""
    verification_refs: Items[ReferenceUri]
    """Evidence of the required verifications."""
    unresolved_risks: Items[BoundedText]
    """Risks left open."""
    permissions_honored: bool
    """Whether the run stayed inside its permissions."""
    next_actions: Items[NextUserAction]
    """What the user may do next."""
    trace_ref: TraceUri
    """The run's trace, ``trace://<runId>``."""
    rationale_summary: Summary
    """Why the report says what it says."""

    @model_validator(mode="after")
    def _check_rules(self) -> Self:
        status = self.terminal_status
        if status == "completed":
            if not self.completion_claims:
                raise PydanticCustomError(
                    "completed_without_claim", "A completed report needs a completion claim"
                )
            if not self.permissions_honored:
                raise PydanticCustomError(
                    "completed_without_honored_permissions",
                    "A completed report needs permissionsHonored to be true",
                )
            if any(
                claim.status == "unverified" or not claim.evidence_refs
                for claim in self.completion_claims
            ):
                raise PydanticCustomError(
                    "completed_with_unbacked_claim",
                    "A completed report needs every claim verified and backed by evidence",
                )
        elif status != "cancelled" and not (
            self.finding_refs or self.unresolved_risks or self.next_actions
        ):
            raise PydanticCustomError(
                "outcome_without_explanation",
                "A report that is not completed needs a finding ref, a risk or a next action",
            )
        return self
