"""Invariants of runs that asked for a topology (beyond Telic 1.0; docs/protocol.md §3.7).

A micro frame is small enough to need no contract review (one criterion, at most three facts,
no clarification); a micro run never proceeds to fix; a forensic run's second review says it
re-verifies and decides pass, partial or block; a micro report rests on the receipt of the
latest review, or cites that review. The ids the controller will store itself are reserved.
None of these rules judge a run that asked for no topology.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import ANY, Check, Rules, Violation
from telic.controller._derive import report_anchor
from telic.controller._topology import receipt_gap, reserved_ids
from telic.protocol import ProblemFrame, QualityReview, UserReport

_S = "§3.7 Topologies"

reserved = Rules((ANY,), _S)
rule = Rules(("ProblemFrame",), _S)
review = Rules(("QualityReview",), _S)
report = Rules(("UserReport",), _S)


def _micro(c: Check[object]) -> bool:
    return c.state.run.topology == "micro"


@reserved("TP-RESERVED-ID")
def tp_reserved_id(c: Check[object]) -> Iterator[Violation]:
    """Taking contract-01, plan-01 or receipt-01 while the controller will still store it."""
    if c.artifact_id in reserved_ids(c.state):
        yield Violation(
            "id",
            f"{c.artifact_id} is reserved for the controller in this run; choose another id",
        )


@rule("TP-MICRO-FRAME-CRITERIA")
def tp_micro_frame_criteria(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A micro frame with other than exactly one draft acceptance criterion."""
    if _micro(c) and len(c.body.draft_acceptance_criteria) != 1:
        yield Violation(
            "draftAcceptanceCriteria",
            "Micro topology requires exactly one draft acceptance criterion",
        )


@rule("TP-MICRO-FRAME-FACTS")
def tp_micro_frame_facts(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A micro frame with more than three known facts."""
    if _micro(c) and len(c.body.known_facts) > 3:
        yield Violation("knownFacts", "Micro topology allows at most three known facts")


@rule("TP-MICRO-FRAME-CLARIFICATION")
def tp_micro_frame_clarification(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A micro frame that requires clarification."""
    if _micro(c) and c.body.clarification.required:
        yield Violation(
            "clarification.required",
            "Micro topology cannot require clarification in ProblemFrame",
            False,
        )


@review("TP-MICRO-NO-FIX")
def tp_micro_no_fix(c: Check[QualityReview]) -> Iterator[Violation]:
    """A micro spot review deciding proceed_to_fix."""
    if _micro(c) and c.body.decision == "proceed_to_fix":
        yield Violation(
            "decision",
            "Micro topology does not support proceed_to_fix",
            ["pass", "partial", "block", "remediate"],
        )


@review("TP-REVERIFY-KIND")
def tp_reverify_kind(c: Check[QualityReview]) -> Iterator[Violation]:
    """A reverify-phase review whose reviewKind is not evidence_reverify."""
    if c.phase == "agent_3_evidence_reverify" and c.body.review_kind != "evidence_reverify":
        yield Violation(
            "reviewKind",
            "Forensic evidence reverify requires reviewKind evidence_reverify",
            "evidence_reverify",
        )


@review("TP-REVERIFY-DECISION")
def tp_reverify_decision(c: Check[QualityReview]) -> Iterator[Violation]:
    """A reverify-phase review deciding remediate or proceed_to_fix."""
    decision = c.body.decision
    if c.phase == "agent_3_evidence_reverify" and decision not in ("pass", "partial", "block"):
        yield Violation(
            "decision",
            f"Unsupported forensic evidence reverify decision: {decision}",
            ["pass", "partial", "block"],
        )


@report("TP-MICRO-REPORT-RECEIPT")
def tp_micro_report_receipt(c: Check[UserReport]) -> Iterator[Violation]:
    """A completed micro report without a verified receipt of the latest review."""
    if not _micro(c) or c.body.terminal_status != "completed":
        return
    gap = receipt_gap(c.state)
    if gap is not None:
        yield Violation("terminalStatus", gap)


@report("TP-MICRO-REPORT-CITE")
def tp_micro_report_cite(c: Check[UserReport]) -> Iterator[Violation]:
    """A micro report that is not completed and does not cite the latest review."""
    if not _micro(c) or c.body.terminal_status == "completed":
        return
    # A micro run a second clarification ended before its review cites that clarification
    # (as a 1.0 early block does): the original refuses every report there, a dead end.
    anchor = report_anchor(c.state)
    if anchor is None:
        yield Violation("findingRefs", "Run is missing required QualityReview artifact")
    elif anchor.uri not in c.body.finding_refs:
        yield Violation(
            "findingRefs",
            "Micro UserReport must cite the controlling QualityReview",
            [*c.body.finding_refs, anchor.uri],
        )


RESERVED: Final = reserved.registered
"""The rule every submission meets first, before the reference rules."""
RULES: Final = (*rule.registered, *review.registered, *report.registered)
