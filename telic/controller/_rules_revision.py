"""Invariants of the one contract revision: exactly the corrections asked for, nothing else.

After a ``revise`` PromptReview the compiler submits version 2. It cites the contract and the
review it answers, never widens the permissions, changes exactly the fields that blocking
findings with a required correction name, and leaves every preserved field untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import corrected_fields
from telic.permissions import is_subset
from telic.protocol import PromptReview, TaskContract

__all__ = ["RULES"]


_TC = ("TaskContract",)
_S = "§3.4 TaskContract (revise)"

rule = Rules(_TC, _S)


def _previous_and_review(c: Check[TaskContract]) -> tuple[Any, Any] | None:
    """The contract a revision replaces and the review it answers; None outside revise."""
    previous, review = c.state.latest("TaskContract"), c.state.latest("PromptReview")
    if c.phase != "agent_2_revise" or previous is None or review is None:
        return None
    return previous, review


@rule(
    "TC-REVISE-V2", "A revision that is not version 2 after a revise review with revisionNumber 0."
)
def tc_revise(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision is version 2, after a revise review with revisionNumber 0."""
    if c.phase != "agent_2_revise":
        return
    pair = _previous_and_review(c)
    if c.body.version != 2 or pair is None:
        yield Violation("version", "A revised contract is version 2 after a review")
        return
    body: PromptReview = pair[1].body
    if body.decision != "revise" or body.revision_number != 0:
        yield Violation("version", "Only a revise review with revisionNumber 0 allows a revision")


@rule("TC-REVISE-CITES", "A revision that does not cite the previous contract and the review.")
def tc_revise_cites(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision's sourceRefs cite both the previous contract and the review."""
    pair = _previous_and_review(c)
    if pair is not None and not {pair[0].uri, pair[1].uri} <= set(c.source_refs):
        yield Violation("sourceRefs", "A revision must cite the previous contract and the review")


@rule("TC-REVISE-PERMISSIONS", "A revision that widens the previous contract's permissions.")
def tc_revise_permissions(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision's permissions lie inside the previous contract's."""
    pair = _previous_and_review(c)
    if pair is not None and not is_subset(c.body.permissions, pair[0].body.permissions):
        yield Violation("permissions", "A revision may not widen the contract's permissions")


@rule(
    "TC-REVISE-FIELDS",
    "Changing a field no blocking finding corrects, or leaving a corrected field unchanged.",
)
def tc_revise_fields(c: Check[TaskContract]) -> Iterator[Violation]:
    """The changed fields are exactly the corrections the blocking findings ask for."""
    pair = _previous_and_review(c)
    if pair is None:
        return
    previous, review = pair
    old, new = previous.wire, c.wire
    changed = {k for k in new if k not in ("id", "version") and new[k] != old.get(k)}
    corrected = corrected_fields(review.body)
    for field in sorted(changed ^ corrected):
        what = "was changed without a correction" if field in changed else "was not corrected"
        yield Violation(field, f"{field} {what}; change exactly the corrected fields")


@rule("TC-REVISE-PRESERVE", "Changing a preserved field, or both preserving and correcting one.")
def tc_revise_preserve(c: Check[TaskContract]) -> Iterator[Violation]:
    """No field is both corrected and preserved, and every preserved field is unchanged."""
    pair = _previous_and_review(c)
    if pair is None:
        return
    previous, review = pair
    old, new = previous.wire, c.wire
    corrected = {f for finding in review.body.findings for f in finding.correction_fields}
    for field in sorted({f for finding in review.body.findings for f in finding.preserve_fields}):
        if field in corrected:
            yield Violation(field, "A field cannot be both corrected and preserved")
        elif new.get(field) != old.get(field):
            yield Violation(field, "A preserved field was changed")


RULES: Final = rule.registered
