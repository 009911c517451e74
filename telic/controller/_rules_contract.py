"""Invariants of the framing phases: ProblemFrame, ScenarioSpec, TaskContract, PromptReview."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._authority import run_authorization, subset
from telic.controller._check import Check, Violation
from telic.permissions._sets import capability_backed
from telic.permissions._targets import shell_command_problem
from telic.protocol._contract import TaskContract
from telic.protocol._frame import ProblemFrame, ScenarioSpec
from telic.protocol._review import PromptReview

__all__: list[str] = []

_FACT_EVIDENCE: Final[dict[str, frozenset[str]]] = {
    "runtime": frozenset({"runtime", "log"}),
    "browser": frozenset({"browser"}),
    "tool": frozenset({"tool_output", "test", "diff"}),
}


def _latest_uri(c: Check[Any], artifact_type: str) -> str | None:
    latest = c.state.latest(artifact_type)
    return None if latest is None else latest.uri


def intent_mode(c: Check[ProblemFrame | TaskContract]) -> Iterator[Violation]:
    """ProblemFrame and TaskContract intentMode equal the run's mode."""
    if c.body.intent_mode != c.mode:
        yield Violation("intentMode", "intentMode must equal the run's mode")


def original_request(c: Check[Any]) -> Iterator[Violation]:
    """originalRequestRef is the run's original request."""
    if c.body.original_request_ref != c.state.request.uri:
        yield Violation("originalRequestRef", "originalRequestRef must be the run's request")


def pf_clarification(c: Check[ProblemFrame]) -> Iterator[Violation]:
    """A frame may not require clarification: submit a ClarificationRequest first."""
    if c.body.clarification.required:
        yield Violation("clarification.required", "Submit a ClarificationRequest instead")


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
    if c.body.problem_frame_ref != _latest_uri(c, "ProblemFrame"):
        yield Violation("problemFrameRef", "problemFrameRef must be the latest ProblemFrame")


def ss_one_per_frame(c: Check[ScenarioSpec]) -> Iterator[Violation]:
    """At most one ScenarioSpec per ProblemFrame."""
    if any(
        s.body.problem_frame_ref == c.body.problem_frame_ref for s in c.state.all("ScenarioSpec")
    ):
        yield Violation("problemFrameRef", "This ProblemFrame already has a ScenarioSpec")


def tc_frame_latest(c: Check[TaskContract]) -> Iterator[Violation]:
    """problemFrameRef is the latest ProblemFrame."""
    if c.body.problem_frame_ref != _latest_uri(c, "ProblemFrame"):
        yield Violation("problemFrameRef", "problemFrameRef must be the latest ProblemFrame")


def _frame(c: Check[Any]) -> ProblemFrame | None:
    latest = c.state.latest("ProblemFrame")
    return None if latest is None else latest.body


def tc_context_refs(c: Check[TaskContract]) -> Iterator[Violation]:
    """contextRefs include every non-user fact source and every inference source of the frame."""
    frame = _frame(c)
    if frame is None:
        return
    needed = {f.source_ref for f in frame.known_facts if f.provenance != "user"}
    needed |= {ref for inference in frame.inferences for ref in inference.source_refs}
    if not needed <= set(c.body.context_refs):
        yield Violation(
            "contextRefs", "contextRefs must include the frame's fact and inference sources"
        )


def tc_rule_refs(c: Check[TaskContract]) -> Iterator[Violation]:
    """ruleRefs equal the frame's applicableRuleRefs, each exactly once."""
    frame = _frame(c)
    refs = c.body.rule_refs
    if frame is not None and (
        len(set(refs)) != len(refs) or set(refs) != set(frame.applicable_rule_refs)
    ):
        yield Violation("ruleRefs", "ruleRefs must equal the frame's applicableRuleRefs, once each")


def tc_compile_v1(c: Check[TaskContract]) -> Iterator[Violation]:
    """In compile, no contract exists yet and this one is version 1, identical to the frame."""
    if c.phase != "agent_2_compile":
        return
    if c.state.latest("TaskContract") is not None or c.body.version != 1:
        yield Violation("version", "The compiled contract must be the first one, version 1")
    frame = _frame(c)
    if frame is None:
        return
    pairs = (
        ("scope", c.body.scope, frame.scope),
        ("constraints", c.body.constraints, frame.constraints),
        ("nonGoals", c.body.non_goals, frame.non_goals),
        ("acceptanceCriteria", c.body.acceptance_criteria, frame.draft_acceptance_criteria),
    )
    for path, mine, theirs in pairs:
        if mine != theirs:
            yield Violation(path, f"A version 1 contract copies the frame's {path} exactly")


def _previous_and_review(c: Check[TaskContract]) -> tuple[Any, Any] | None:
    previous, review = c.state.latest("TaskContract"), c.state.latest("PromptReview")
    if previous is None or review is None:
        return None
    return previous, review


def tc_revise(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision is v2 after a revise review, cites both, and never widens permissions."""
    if c.phase != "agent_2_revise":
        return
    pair = _previous_and_review(c)
    if c.body.version != 2 or pair is None:
        yield Violation("version", "A revised contract is version 2 after a review")
        return
    previous, review = pair
    body: PromptReview = review.body
    if body.decision != "revise" or body.revision_number != 0:
        yield Violation("version", "Only a revise review with revisionNumber 0 allows a revision")
    if not {previous.uri, review.uri} <= set(c.source_refs):
        yield Violation("sourceRefs", "A revision must cite the previous contract and the review")
    if not subset(c.body.permissions, previous.body.permissions):
        yield Violation("permissions", "A revision may not widen the contract's permissions")


def tc_revise_fields(c: Check[TaskContract]) -> Iterator[Violation]:
    """The changed fields are exactly the corrections the blocking findings ask for."""
    pair = _previous_and_review(c) if c.phase == "agent_2_revise" else None
    if pair is None:
        return
    previous, review = pair
    old, new = previous.wire, c.wire
    changed = {k for k in new if k not in ("id", "version") and new[k] != old.get(k)}
    findings = [
        f for f in review.body.findings if f.severity == "blocking" and f.required_correction
    ]
    corrected = {field for f in findings for field in f.correction_fields}
    preserved = {field for f in review.body.findings for field in f.preserve_fields}
    if changed != corrected:
        yield Violation("", "Changed fields must equal the fields the blocking findings correct")
    if corrected & preserved:
        yield Violation("", "A field cannot be both corrected and preserved")
    if preserved & changed:
        yield Violation("", "A preserved field was changed")


def tc_verification_backed(c: Check[TaskContract]) -> Iterator[Violation]:
    """Each required verification's capability is backed by the contract permissions."""
    for index, requirement in enumerate(c.body.verification_requirements):
        if requirement.required and not capability_backed(
            requirement.capability, c.body.permissions
        ):
            yield Violation(
                f"verificationRequirements.{index}.capability", "Capability is not backed"
            )


def tc_shell_allowlist(c: Check[TaskContract]) -> Iterator[Violation]:
    """The shell allowlist holds exact, non-compound commands."""
    for index, command in enumerate(c.body.permissions.shell.execute_allowlist):
        if shell_command_problem(command) is not None:
            yield Violation(f"permissions.shell.executeAllowlist.{index}", "Not an exact command")


def tc_permissions_authorized(c: Check[TaskContract]) -> Iterator[Violation]:
    """Contract permissions lie inside the effective run authorization."""
    if not subset(c.body.permissions, run_authorization(c.state)):
        yield Violation("permissions", "Contract permissions exceed the run authorization")


def pr_target_latest(c: Check[PromptReview]) -> Iterator[Violation]:
    """targetRef is the latest contract and revisionNumber is its version − 1."""
    latest = c.state.latest("TaskContract")
    if latest is None or c.body.target_ref != latest.uri:
        yield Violation("targetRef", "targetRef must be the latest TaskContract")
    elif c.body.revision_number != latest.body.version - 1:
        yield Violation("revisionNumber", "revisionNumber must equal the contract version − 1")


_COVERAGE: Final = (
    ("request", frozenset({"objective", "intentMode"})),
    ("frame", frozenset({"scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs"})),
    (
        "contract",
        frozenset(
            {
                "permissions",
                "contextRefs",
                "requiredOutputs",
                "verificationRequirements",
                "stopConditions",
                "assumptions",
                "unresolvedQuestions",
            }
        ),
    ),
)


def pr_coverage(c: Check[PromptReview]) -> Iterator[Violation]:
    """Coverage has exactly three entries: request, frame and contract, with fixed field sets."""
    contract = c.state.latest("TaskContract")
    sources = {
        "request": c.state.request.uri,
        "frame": None if contract is None else contract.body.problem_frame_ref,
        "contract": None if contract is None else contract.uri,
    }
    expected = {sources[name]: fields for name, fields in _COVERAGE}
    actual = {entry.source_ref: frozenset(entry.contract_fields) for entry in c.body.coverage}
    if len(c.body.coverage) != 3 or actual != expected:
        yield Violation("coverage", "Coverage must map request, frame and contract to their fields")
