"""Invariants of framing: the ProblemFrame and its optional ScenarioSpec presentation.

The frame is the authoritative reading of the request: it keeps the run's mode, names the run's
own request, cites a source of the right provenance for every fact, and never asks the user a
question itself (that is what a ClarificationRequest is for).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._check import Check, Rule, Violation
from telic.protocol import ProblemFrame, ScenarioSpec, TaskContract

__all__ = ["RULES", "intent_mode", "latest_uri", "original_request"]

_FACT_EVIDENCE: Final[dict[str, frozenset[str]]] = {
    "runtime": frozenset({"runtime", "log"}),
    "browser": frozenset({"browser"}),
    "tool": frozenset({"tool_output", "test", "diff"}),
}
_PF, _SS = "§3.4 ProblemFrame", "§3.1 ScenarioSpec"


def latest_uri(c: Check[Any], artifact_type: str) -> str | None:
    """Return the URI of the run's latest ``artifact_type``, or None."""
    latest = c.state.latest(artifact_type)
    return None if latest is None else latest.uri


def intent_mode(c: Check[ProblemFrame | TaskContract]) -> Iterator[Violation]:
    """ProblemFrame and TaskContract intentMode equal the run's mode."""
    if c.body.intent_mode != c.mode:
        yield Violation("intentMode", "intentMode must equal the run's mode", c.mode)


def original_request(c: Check[Any]) -> Iterator[Violation]:
    """originalRequestRef is the run's original request."""
    if c.body.original_request_ref != c.state.request.uri:
        yield Violation(
            "originalRequestRef",
            "originalRequestRef must be the run's request",
            c.state.request.uri,
        )


def pf_clarification(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A frame may not require clarification: submit a ClarificationRequest first."""
    if c.body.clarification.required:
        yield Violation(
            "clarification.required",
            "A ProblemFrame must set clarification.required to false; to ask the user, submit a "
            "ClarificationRequest instead (after an answer, reframe with required false)",
            False,
        )


def pf_fact_provenance(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """Each fact cites a source of its provenance (user → UserMessage, repository → repo://)."""
    for index, fact in enumerate(c.body.known_facts):
        path = f"knownFacts.{index}.sourceRef"
        target = c.resolve(fact.source_ref)
        if fact.provenance == "user":
            ok = target is not None and target.type == "UserMessage"
        elif fact.provenance == "repository":
            ok = fact.source_ref.startswith("repo://")
        else:
            kinds = _FACT_EVIDENCE[fact.provenance]
            ok = target is not None and target.type == "Evidence" and target.body.kind in kinds
        if not ok:
            yield Violation(path, f"A {fact.provenance} fact must cite matching provenance")


def ss_frame_latest(c: Check[ScenarioSpec]) -> Iterator[Violation]:
    """A ScenarioSpec presents the latest ProblemFrame."""
    if c.body.problem_frame_ref != latest_uri(c, "ProblemFrame"):
        yield Violation("problemFrameRef", "problemFrameRef must be the latest ProblemFrame")


def ss_one_per_frame(c: Check[ScenarioSpec]) -> Iterator[Violation]:
    """At most one ScenarioSpec per ProblemFrame."""
    if any(
        s.body.problem_frame_ref == c.body.problem_frame_ref for s in c.state.all("ScenarioSpec")
    ):
        yield Violation("problemFrameRef", "This ProblemFrame already has a ScenarioSpec")


RULES: Final = (
    Rule(
        "PF-INTENT-MODE",
        ("ProblemFrame",),
        intent_mode,
        _PF,
        "Framing the request in a mode other than the run's (silently upgrading the mode).",
    ),
    Rule(
        "PF-ORIGINAL-REQUEST",
        ("ProblemFrame",),
        original_request,
        _PF,
        "A frame that replaces or points away from the run's immutable original request.",
    ),
    Rule(
        "PF-CLARIFICATION-NOT-REQUIRED",
        ("ProblemFrame",),
        pf_clarification,
        _PF,
        "A frame that requires clarification instead of submitting a ClarificationRequest.",
    ),
    Rule(
        "PF-FACT-PROVENANCE",
        ("ProblemFrame",),
        pf_fact_provenance,
        _PF,
        "A fact whose source does not match its provenance (user message, selected repo:// "
        "source, or Evidence of a runtime/browser/tool kind).",
    ),
    Rule(
        "SS-PROBLEM-FRAME-LATEST",
        ("ScenarioSpec",),
        ss_frame_latest,
        _SS,
        "A scenario presenting anything but the latest, authoritative ProblemFrame.",
    ),
    Rule(
        "SS-ONE-PER-FRAME",
        ("ScenarioSpec",),
        ss_one_per_frame,
        "§3.3 ScenarioSpec",
        "A second ScenarioSpec for the same ProblemFrame.",
    ),
)
