"""Invariants of compilation: the TaskContract (v1 and its one revision) and the PromptReview.

A v1 contract copies the frame's scope, constraints, non-goals and criteria exactly; a v2 contract
changes exactly the fields the blocking review findings ask to correct and never widens its
permissions; every contract stays inside the run's authority. The prompt review judges the latest
contract against the request and the frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._authority import run_authorization
from telic.controller._check import Check, Rules, Violation, wire_value
from telic.controller._derive import (
    contract_context_refs,
    contract_rule_refs,
    corrected_fields,
    prompt_coverage,
)
from telic.controller._rules_frame import (
    criteria_stages,
    intent_mode,
    latest_ref,
    original_request,
)
from telic.permissions import (
    capability_backed,
    exceeding,
    intersect,
    is_subset,
    plan_ceiling,
    shell_command_problem,
)
from telic.protocol import VERIFICATION_CAPABILITIES, ProblemFrame, PromptReview, TaskContract

_TC = ("TaskContract",)

rule = Rules(_TC, "§3.4 TaskContract")
revise = Rules(_TC, "§3.4 TaskContract (revise)")
prompt = Rules(("PromptReview",), "§3.4 PromptReview")


rule("TC-INTENT-MODE", "A contract in a mode other than the run's (a silent mode upgrade).")(
    intent_mode
)

rule("TC-ORIGINAL-REQUEST", "A contract that does not name the run's own original request.")(
    original_request
)


@rule("TC-PROBLEM-FRAME-LATEST")
def tc_frame_latest(c: Check[TaskContract]) -> Iterator[Violation]:
    """Compiling from anything but the latest ProblemFrame."""
    return latest_ref(c, "problemFrameRef", c.body.problem_frame_ref, "ProblemFrame")


def _frame(c: Check[Any]) -> ProblemFrame | None:
    latest = c.state.latest("ProblemFrame")
    return None if latest is None else latest.body


@rule("TC-CONTEXT-REFS")
def tc_context_refs(c: Check[TaskContract]) -> Iterator[Violation]:
    """Dropping a non-user fact source or an inference source of the frame from contextRefs."""
    missing = [ref for ref in contract_context_refs(c.state) if ref not in c.body.context_refs]
    if missing:
        yield Violation(
            "contextRefs",
            "contextRefs must include the frame's non-user fact sources and inference sources; "
            "expected lists the missing ones",
            missing,
        )


@rule("TC-RULE-REFS")
def tc_rule_refs(c: Check[TaskContract]) -> Iterator[Violation]:
    """ruleRefs that differ from the frame's applicableRuleRefs or repeat one."""
    frame = _frame(c)
    refs = c.body.rule_refs
    if frame is not None and (
        len(set(refs)) != len(refs) or set(refs) != set(frame.applicable_rule_refs)
    ):
        yield Violation(
            "ruleRefs",
            "ruleRefs must equal the frame's applicableRuleRefs, once each",
            list(contract_rule_refs(c.state)),
        )


@rule("TC-COMPILE-V1")
def tc_compile_v1(c: Check[TaskContract]) -> Iterator[Violation]:
    """Compiling a contract other than the first one, version 1."""
    if c.phase != "agent_2_compile":
        return
    if c.state.latest("TaskContract") is not None or c.body.version != 1:
        yield Violation("version", "The compiled contract must be the first one, version 1")


@rule("TC-FRAME-COPY")
def tc_frame_copy(c: Check[TaskContract]) -> Iterator[Violation]:
    """A v1 contract whose scope, constraints, nonGoals or criteria differ from the frame's."""
    frame = _frame(c)
    if c.phase != "agent_2_compile" or frame is None:
        return
    pairs = (
        ("scope", c.body.scope, frame.scope),
        ("constraints", c.body.constraints, frame.constraints),
        ("nonGoals", c.body.non_goals, frame.non_goals),
        ("acceptanceCriteria", c.body.acceptance_criteria, frame.draft_acceptance_criteria),
    )
    for path, mine, theirs in pairs:
        if mine != theirs:
            yield Violation(
                path,
                f"A version 1 contract copies the frame's {path} exactly",
                wire_value(theirs),
            )


@rule("TC-VERIFICATION-BACKED")
def tc_verification_backed(c: Check[TaskContract]) -> Iterator[Violation]:
    """A required verification whose capability the contract permissions do not back."""
    for index, requirement in enumerate(c.body.verification_requirements):
        if requirement.required and not capability_backed(
            requirement.capability, c.body.permissions
        ):
            yield Violation(
                f"verificationRequirements.{index}.capability", "Capability is not backed"
            )


@rule("TC-SHELL-ALLOWLIST")
def tc_shell_allowlist(c: Check[TaskContract]) -> Iterator[Violation]:
    """Compound, globbed or wildcard commands in the shell allowlist."""
    for index, command in enumerate(c.body.permissions.shell.execute_allowlist):
        if shell_command_problem(command) is not None:
            yield Violation(f"permissions.shell.executeAllowlist.{index}", "Not an exact command")


@rule("TC-PERMISSIONS-AUTHORIZED")
def tc_permissions_authorized(c: Check[TaskContract]) -> Iterator[Violation]:
    """Contract permissions beyond mode ceiling ∩ granted ∖ denied."""
    beyond = exceeding(c.body.permissions, run_authorization(c.state))
    if beyond:
        yield Violation(
            "permissions",
            f"Contract permissions exceed the run authorization in {', '.join(beyond)}: narrow "
            "them to what the mode allows and the user granted at telic_start_run",
        )


@rule("TC-STAGE-CRITERIA")
def tc_stage_criteria(c: Check[TaskContract]) -> Iterator[Violation]:
    """Criteria no run of the mode can complete: no completion criterion outside analyze_and_fix
    (analyze_and_fix without both stages is a schema error).

    A revision is held to it too, so it cannot break the stages.
    """
    stages = [a.stage for a in c.body.acceptance_criteria]
    return criteria_stages(c, "acceptanceCriteria", stages)


@rule("TC-VERIFICATION-REACHABLE")
def tc_verification_reachable(c: Check[TaskContract]) -> Iterator[Violation]:
    """A required verification whose capability no node of its stage can ever be given under the
    mode, the stage's plan ceiling and the run authorization.

    A node of a stage is planned inside the run authorization and the plan ceiling of that
    stage (for analyze_and_fix's diagnosis, the analyze_only projection), so a capability
    outside both could never be required by any node and the plan preflight could never pass.
    """
    authorization = run_authorization(c.state)
    for index, requirement in enumerate(c.body.verification_requirements):
        if not requirement.required:
            continue
        stage = requirement.stage
        ceiling = intersect(authorization, plan_ceiling(c.mode, fix_unlocked=stage == "completion"))
        if capability_backed(requirement.capability, ceiling):
            continue
        usable = [v for v in VERIFICATION_CAPABILITIES if capability_backed(v, ceiling)]
        choice = (
            f"use one of: {', '.join(usable)}"
            if usable
            else "no capability can be; make the requirement not required"
        )
        yield Violation(
            f"verificationRequirements.{index}.capability",
            f"No {stage} node of this {c.mode} run can ever be given {requirement.capability} "
            f"(mode, stage and the user's grant); {choice}",
        )


@rule("TC-ASSUMPTIONS")
def tc_assumptions(c: Check[TaskContract]) -> Iterator[Violation]:
    """Two assumptions sharing one id.

    Unique ids keep each assumption addressable within the run.
    """
    seen: set[str] = set()
    for index, assumption in enumerate(c.body.assumptions):
        if assumption.id in seen:
            yield Violation(f"assumptions.{index}.id", "Assumption ids must be unique")
        seen.add(assumption.id)


def _previous_and_review(c: Check[TaskContract]) -> tuple[Any, Any] | None:
    """The contract a revision replaces and the review it answers; None outside revise."""
    previous, review = c.state.latest("TaskContract"), c.state.latest("PromptReview")
    if c.phase != "agent_2_revise" or previous is None or review is None:
        return None
    return previous, review


@revise("TC-REVISE-V2")
def tc_revise(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision that is not version 2 after a revise review with revisionNumber 0."""
    if c.phase != "agent_2_revise":
        return
    pair = _previous_and_review(c)
    if c.body.version != 2 or pair is None:
        yield Violation("version", "A revised contract is version 2 after a review")
        return
    body: PromptReview = pair[1].body
    if body.decision != "revise" or body.revision_number != 0:
        yield Violation("version", "Only a revise review with revisionNumber 0 allows a revision")


@revise("TC-REVISE-CITES")
def tc_revise_cites(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision that does not cite the previous contract and the review."""
    pair = _previous_and_review(c)
    if pair is not None and not {pair[0].uri, pair[1].uri} <= set(c.source_refs):
        yield Violation("sourceRefs", "A revision must cite the previous contract and the review")


@revise("TC-REVISE-PERMISSIONS")
def tc_revise_permissions(c: Check[TaskContract]) -> Iterator[Violation]:
    """A revision that widens the previous contract's permissions."""
    pair = _previous_and_review(c)
    if pair is not None and not is_subset(c.body.permissions, pair[0].body.permissions):
        yield Violation("permissions", "A revision may not widen the contract's permissions")


@revise("TC-REVISE-FIELDS")
def tc_revise_fields(c: Check[TaskContract]) -> Iterator[Violation]:
    """Changing a field no blocking finding corrects, or leaving a corrected field unchanged."""
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


@revise("TC-REVISE-PRESERVE")
def tc_revise_preserve(c: Check[TaskContract]) -> Iterator[Violation]:
    """Changing a preserved field, or both preserving and correcting one."""
    pair = _previous_and_review(c)
    if pair is None:
        return
    previous, review = pair
    corrected = {f for finding in review.body.findings for f in finding.correction_fields}
    for field in sorted({f for finding in review.body.findings for f in finding.preserve_fields}):
        if field in corrected:
            yield Violation(field, "A field cannot be both corrected and preserved")
        elif c.wire.get(field) != previous.wire.get(field):
            yield Violation(field, "A preserved field was changed")


@prompt("PR-TARGET-LATEST")
def pr_target_latest(c: Check[PromptReview]) -> Iterator[Violation]:
    """Reviewing anything but the latest TaskContract."""
    return latest_ref(c, "targetRef", c.body.target_ref, "TaskContract")


@prompt("PR-REVISION-NUMBER")
def pr_revision_number(c: Check[PromptReview]) -> Iterator[Violation]:
    """A revisionNumber other than the reviewed contract's version − 1."""
    latest = c.state.latest("TaskContract")
    if latest is not None and c.body.revision_number != latest.body.version - 1:
        yield Violation(
            "revisionNumber",
            "revisionNumber must equal the contract version − 1",
            latest.body.version - 1,
        )


@prompt("PR-COVERAGE")
def pr_coverage(c: Check[PromptReview]) -> Iterator[Violation]:
    """Coverage other than request → {objective, intentMode}, frame → its five fields and contract →
    its seven fields, exactly three entries."""
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


RULES: Final = (*rule.registered, *revise.registered, *prompt.registered)
