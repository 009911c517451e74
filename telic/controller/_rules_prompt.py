"""Invariants of the prompt review: it judges the latest contract against request and frame."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.controller._derive import prompt_coverage
from telic.controller._rules_frame import latest_ref
from telic.protocol import PromptReview

__all__ = ["RULES"]

_PR = ("PromptReview",)
_S = "§3.4 PromptReview"

rule = Rules(_PR, _S)


@rule("PR-TARGET-LATEST", "Reviewing anything but the latest TaskContract.")
def pr_target_latest(c: Check[PromptReview]) -> Iterator[Violation]:
    """targetRef is the latest contract."""
    return latest_ref(c, "targetRef", c.body.target_ref, "TaskContract")


@rule("PR-REVISION-NUMBER", "A revisionNumber other than the reviewed contract's version − 1.")
def pr_revision_number(c: Check[PromptReview]) -> Iterator[Violation]:
    """revisionNumber is the latest contract's version − 1."""
    latest = c.state.latest("TaskContract")
    if latest is not None and c.body.revision_number != latest.body.version - 1:
        yield Violation(
            "revisionNumber",
            "revisionNumber must equal the contract version − 1",
            latest.body.version - 1,
        )


@rule(
    "PR-COVERAGE",
    "Coverage other than request → {objective, intentMode}, frame → its five fields and "
    "contract → its seven fields, exactly three entries.",
)
def pr_coverage(c: Check[PromptReview]) -> Iterator[Violation]:
    """Coverage has exactly three entries: request, frame and contract, with fixed field sets."""
    wanted = prompt_coverage(c.state)
    expected = {ref: frozenset(fields) for ref, fields in wanted}
    actual = {entry.source_ref: frozenset(entry.contract_fields) for entry in c.body.coverage}
    if len(c.body.coverage) != 3 or actual != expected:
        yield Violation(
            "coverage",
            "Coverage must be exactly three entries: the request, the frame and the contract, "
            "each with the contractFields shown in expected",
            [{"sourceRef": ref, "contractFields": list(fields)} for ref, fields in wanted],
        )


RULES: Final = rule.registered
