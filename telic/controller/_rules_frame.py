"""Invariants of framing: the ProblemFrame and its optional ScenarioSpec presentation.

The frame is the authoritative reading of the request: it keeps the run's mode, names the run's
own request, cites a source of the right provenance for every fact, drafts criteria whose stages
its mode can complete, and never asks the user a question itself (that is what a
ClarificationRequest is for; once the user answered, the frame may say a clarification was
required by citing that request).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

from telic.controller._check import Check, Rules, Violation
from telic.protocol import ProblemFrame, ScenarioSpec, Stage, TaskContract

FACT_EVIDENCE: Final[dict[str, frozenset[str]]] = {
    "runtime": frozenset({"runtime", "log"}),
    "browser": frozenset({"browser"}),
    "tool": frozenset({"tool_output", "test", "diff"}),
}
"""The Evidence kinds a fact of each non-user, non-repository provenance may cite."""

rule = Rules(("ProblemFrame",), "§3.4 ProblemFrame")
scenario = Rules(("ScenarioSpec",), "§3.1 ScenarioSpec")


def latest_uri(c: Check[Any], artifact_type: str) -> str | None:
    """Return the URI of the run's latest ``artifact_type``, or None."""
    latest = c.state.latest(artifact_type)
    return None if latest is None else latest.uri


def latest_ref(c: Check[Any], path: str, ref: str, artifact_type: str) -> Iterator[Violation]:
    """Yield a violation unless ``ref``, at ``path``, names the run's latest ``artifact_type``."""
    latest = latest_uri(c, artifact_type)
    if ref != latest:
        yield Violation(path, f"{path} must be the latest {artifact_type}", latest)


@rule(
    "PF-INTENT-MODE",
    "Framing the request in a mode other than the run's (silently upgrading the mode).",
)
def intent_mode(c: Check[ProblemFrame | TaskContract]) -> Iterator[Violation]:
    """ProblemFrame and TaskContract intentMode equal the run's mode."""
    if c.body.intent_mode != c.mode:
        yield Violation("intentMode", "intentMode must equal the run's mode", c.mode)


@rule(
    "PF-ORIGINAL-REQUEST",
    "A frame that replaces or points away from the run's immutable original request.",
)
def original_request(c: Check[Any]) -> Iterator[Violation]:
    """originalRequestRef is the run's original request."""
    if c.body.original_request_ref != c.state.request.uri:
        yield Violation(
            "originalRequestRef",
            "originalRequestRef must be the run's request",
            c.state.request.uri,
        )


def _answered(c: Check[Any], request_uri: str) -> bool:
    """Whether ``request_uri`` names a ClarificationRequest of this run the user has answered."""
    request = c.state.by_uri(request_uri)
    return (
        request is not None
        and request.type == "ClarificationRequest"
        and any(request_uri in m.source_refs for m in c.state.all("UserMessage"))
    )


@rule("PF-CLARIFICATION-NOT-REQUIRED")
def pf_clarification(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A frame that requires clarification without citing a ClarificationRequest the user has
    answered."""
    clarification = c.body.clarification
    if not clarification.required or _answered(c, clarification.request_ref):
        return
    if c.state.latest("ClarificationRequest") is None:
        message = (
            "Submit a ClarificationRequest instead of this frame; after the user answers, "
            "frame again with required true and requestRef naming that request"
        )
    else:
        message = (
            "requestRef must name the ClarificationRequest the user answered (a run asks once); "
            "or set required false, record the answer as a user fact citing the answer message "
            "and drop the answered unknown"
        )
    yield Violation("clarification.requestRef", message)


def criteria_stages(c: Check[Any], path: str, stages: Sequence[Stage]) -> Iterator[Violation]:
    """Yield why criteria at ``path`` with ``stages`` (in order) could never complete the run.

    The stages fit when there is at least one criterion; analyze_and_fix needs a diagnosis and
    a completion criterion; every other mode has no diagnosis stage, so it needs a ``completion``
    criterion (a diagnosis criterion beside one is accepted, as Telic 1.0 accepts it: such a run
    completes).
    """
    if c.mode == "analyze_and_fix":
        missing = [s for s in ("diagnosis", "completion") if s not in stages]
        if missing:
            yield Violation(
                path,
                f"analyze_and_fix needs a diagnosis and a completion criterion; add one with "
                f"stage {missing[0]!r}",
            )
    elif not stages:
        yield Violation(path, "Draft at least one criterion, with stage 'completion'")
    elif "completion" not in stages:
        yield Violation(
            f"{path}.{stages.index('diagnosis')}.stage",
            f"{c.mode} has no diagnosis stage (only analyze_and_fix has one), so its run "
            "completes on 'completion' criteria: set stage 'completion' on the criteria",
        )


@rule("PF-STAGE-CRITERIA")
def pf_stage_criteria(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """Draft criteria no run of the mode can complete: none at all, no completion criterion outside
    analyze_and_fix, or analyze_and_fix without both stages.

    The contract copies them, so they must fit here.
    """
    stages = [a.stage for a in c.body.draft_acceptance_criteria]
    return criteria_stages(c, "draftAcceptanceCriteria", stages)


@rule("PF-FACT-PROVENANCE")
def pf_fact_provenance(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A fact whose source does not match its provenance (user message, selected repo:// source, or
    Evidence of a runtime/browser/tool kind)."""
    for index, fact in enumerate(c.body.known_facts):
        path = f"knownFacts.{index}.sourceRef"
        target = c.state.by_uri(fact.source_ref)
        if fact.provenance == "user":
            ok = target is not None and target.type == "UserMessage"
        elif fact.provenance == "repository":
            ok = fact.source_ref.startswith("repo://")
        else:
            kinds = FACT_EVIDENCE[fact.provenance]
            ok = target is not None and target.type == "Evidence" and target.body.kind in kinds
        if not ok:
            yield Violation(path, f"A {fact.provenance} fact must cite matching provenance")


@scenario("SS-PROBLEM-FRAME-LATEST")
def ss_frame_latest(c: Check[ScenarioSpec]) -> Iterator[Violation]:
    """A scenario presenting anything but the latest, authoritative ProblemFrame."""
    if c.body.problem_frame_ref != latest_uri(c, "ProblemFrame"):
        yield Violation("problemFrameRef", "problemFrameRef must be the latest ProblemFrame")


@scenario("SS-ONE-PER-FRAME", section="§3.3 ScenarioSpec")
def ss_one_per_frame(c: Check[ScenarioSpec]) -> Iterator[Violation]:
    """A second ScenarioSpec for the same ProblemFrame."""
    if any(
        s.body.problem_frame_ref == c.body.problem_frame_ref for s in c.state.all("ScenarioSpec")
    ):
        yield Violation("problemFrameRef", "This ProblemFrame already has a ScenarioSpec")


RULES: Final = (*rule.registered, *scenario.registered)
