"""The UserReport: what the user is finally told (docs/protocol.md §3.1 "UserReport").

A report only repeats audited claims. A completed report must back every claim with evidence and
confirm that permissions were honoured; any other outcome (except cancellation) must say what is
missing through a finding, a risk or a next action instead of dressing it up as success.
"""

from __future__ import annotations

from typing import Self

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import UNDESCRIBED, ArtifactBody, WireModel
from telic.protocol._types import (
    BoundedText,
    EvidenceClaim,
    Identifier,
    Items,
    ReferenceUri,
    Summary,
    TerminalStatus,
    TraceUri,
)


class NextUserAction(WireModel):
    """Something the user may do next."""

    model_config = UNDESCRIBED

    id: Identifier
    description: BoundedText
    requires_authorization: bool
    """Needs authority the run did not have."""


class UserReport(ArtifactBody):
    """Agent 5's final report to the user."""

    id: Identifier
    run_id: Identifier
    terminal_status: TerminalStatus
    summary: BoundedText
    completion_claims: Items[EvidenceClaim]
    finding_refs: Items[ReferenceUri]
    """Reviews or audits whose findings explain the outcome."""
    change_refs: Items[ReferenceUri]
    verification_refs: Items[ReferenceUri]
    unresolved_risks: Items[BoundedText]
    permissions_honored: bool
    next_actions: Items[NextUserAction]
    trace_ref: TraceUri
    rationale_summary: Summary

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
