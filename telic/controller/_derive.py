"""Pure queries over a run state that the machine, NextAction and the rules share.

Serial execution, the analyze_and_fix "unlock", the controlling work order of a scoped replan and
the cumulative tool-call reservation are all *derived* from the stored artifacts, never kept as
separate counters, so that replaying the same artifacts always gives the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from telic.controller._state import RunState, StoredArtifact
from telic.protocol import (
    Capability,
    PermissionSet,
    PromptReview,
    TaskContract,
    VerificationResult,
    WorkNode,
    WorkPlan,
    WorkResult,
)


def plan_reservation(plan: WorkPlan) -> int:
    """Return the tool calls a plan reserves: the sum of its nodes' budgets."""
    return sum(node.budgets.maximum_tool_calls for node in plan.nodes)


def reserved_tool_calls(state: RunState) -> int:
    """Return the tool calls reserved by every WorkPlan of the run so far (kept while only
    Evidence is appended)."""
    return state.carried(_reserved_tool_calls)


def _reserved_tool_calls(state: RunState) -> int:
    return sum(plan_reservation(plan.body) for plan in state.all("WorkPlan"))


def results_of(state: RunState, plan: StoredArtifact) -> tuple[StoredArtifact, ...]:
    """Return the WorkResults reported against ``plan``, in ledger order."""
    return tuple(r for r in state.all("WorkResult") if r.body.work_plan_ref == plan.uri)


def selected_refs(state: RunState) -> frozenset[str]:
    """Return the ``repo://`` references the latest ContextManifest selected or pinned (what a
    body and a child's handoff may cite, REF-REPO-SELECTED)."""
    manifest = state.latest("ContextManifest")
    if manifest is None:
        return frozenset()
    refs = {c.ref for c in manifest.body.candidates if c.decision == "selected"}
    return frozenset(refs | set(manifest.body.pinned_refs))


def fix_minimum(contract: TaskContract) -> int:
    """Return the fewest tool calls a passing analyze_and_fix fix plan can reserve.

    A passing fix needs a completed mutating action (``QR-PASS-NEEDS-MUTATION``) and, after it,
    one completed read-only action for each capability of a required completion verification
    (``WR-VERIFY-AFTER-MUTATION``); a node reports no more actions than its budget.
    """
    return 1 + len(completion_capabilities(contract))


def completion_capabilities(contract: TaskContract) -> frozenset[Capability]:
    """Return the capabilities of the contract's required completion verifications."""
    return frozenset(
        v.capability
        for v in contract.verification_requirements
        if v.required and v.stage == "completion"
    )


def breaches(state: RunState) -> tuple[tuple[StoredArtifact, str], ...]:
    """Return ``(result, action id)`` for every action a WorkResult records as ``unauthorized``.

    Each is the host's admission that it acted outside its permissions: once one is on record,
    the run's permissions were not honoured, whatever else it proved.
    """
    return tuple(
        (result, action.id)
        for result in state.all("WorkResult")
        for action in result.body.actions
        if action.status == "unauthorized"
    )


def pending_node(state: RunState) -> WorkNode | None:
    """Return the first dependency-ready node of the latest plan that has no result yet.

    Serial execution: nodes run in plan order; a node is ready when every node it depends on has
    a ``completed`` result. A node with an unsuccessful result is never retried, and its
    dependants never become ready. Computed once per state and kept while only Evidence is
    appended, which cannot change it.
    """
    return state.carried(_pending_node)


def _pending_node(state: RunState) -> WorkNode | None:
    plan = state.latest("WorkPlan")
    if plan is None:
        return None
    statuses = {r.body.node_id: r.body.status for r in results_of(state, plan)}
    body: WorkPlan = plan.body
    for node in body.nodes:
        if node.id in statuses:
            continue
        if all(statuses.get(dep) == "completed" for dep in node.depends_on):
            return node
    return None


def plan_completed(state: RunState) -> bool:
    """Whether every node of the latest plan has a completed result (True without a plan)."""
    plan = state.latest("WorkPlan")
    if plan is None:
        return True
    done = {r.body.node_id for r in results_of(state, plan) if r.body.status == "completed"}
    return done == {node.id for node in plan.body.nodes}


def node_of(state: RunState, result: WorkResult) -> WorkNode | None:
    """Return the node of the plan ``result`` reports on, or None."""
    plan = state.by_uri(result.work_plan_ref)
    if plan is None or plan.type != "WorkPlan":
        return None
    return next((n for n in plan.body.nodes if n.id == result.node_id), None)


def is_unlocked(state: RunState) -> bool:
    """Whether analyze_and_fix has unlocked its fix.

    Unlocked means a ``proceed_to_fix`` QualityReview with a correction order exists and some
    WorkPlan cites that review in every node's inputRefs.
    """
    gates = [
        review.uri
        for review in state.all("QualityReview")
        if review.body.decision == "proceed_to_fix"
        and review.body.diagnosis_gate is not None
        and review.body.diagnosis_gate.correction_work_order is not None
    ]
    plans = state.all("WorkPlan")
    return any(all(gate in n.input_refs for n in p.body.nodes) for p in plans for gate in gates)


@dataclass(frozen=True, slots=True)
class WorkOrder:
    """The scope a replan must stay inside: a remediation, audit defect or correction order."""

    source: StoredArtifact
    """The QualityReview or ReleaseAudit that issued the order."""
    criterion_ids: tuple[str, ...]
    allowed_capabilities: tuple[Capability, ...]
    permissions: PermissionSet
    maximum_tool_calls: int


def controlling_order(state: RunState) -> WorkOrder | None:
    """Return the order the next WorkPlan is scoped by, or None for an unscoped plan.

    The most recent QualityReview or ReleaseAudit controls: a ``remediate`` review or audit
    scopes by its work order or defect, a ``proceed_to_fix`` review by its correction order.
    """
    found = [a for a in (state.latest("QualityReview"), state.latest("ReleaseAudit")) if a]
    if not found:
        return None
    latest = max(found, key=state.position)
    body = latest.body
    if body.decision == "remediate":
        review = latest.type == "QualityReview"
        order = body.remediation_work_order if review else body.remediation_defect
        criteria = order.failed_criterion_ids
    elif body.decision == "proceed_to_fix":  # a QualityReview's only
        order = body.diagnosis_gate.correction_work_order
        criteria = order.target_criterion_ids
    else:
        return None
    return WorkOrder(
        source=latest,
        criterion_ids=tuple(criteria),
        allowed_capabilities=tuple(order.allowed_capabilities),
        permissions=order.permissions,
        maximum_tool_calls=order.maximum_tool_calls,
    )


def _in_stage(state: RunState, entries: str) -> tuple[str, ...]:
    """The ids of the latest contract's ``entries`` (criteria or verifications) in the active
    stage: in analyze_and_fix before the unlock only diagnosis ones count, otherwise all."""
    contract = state.latest("TaskContract")
    if contract is None:
        return ()
    diagnosis_only = state.run.requested_mode == "analyze_and_fix" and not is_unlocked(state)
    items = getattr(contract.body, entries)
    return tuple(e.id for e in items if not diagnosis_only or e.stage == "diagnosis")


def stage_criteria(state: RunState) -> tuple[str, ...]:
    """Return the criterion ids of the active stage (see ``_in_stage``)."""
    return _in_stage(state, "acceptance_criteria")


def stage_verifications(state: RunState) -> tuple[str, ...]:
    """Return the verification requirement ids of the active stage (see ``_in_stage``)."""
    return _in_stage(state, "verification_requirements")


# ------------------------------------------------------------------ values the rules demand
#
# Each function below is the one declaration of a value some rule requires a submission to
# carry exactly. The rule compares against it (and shows it as the issue's ``expected``); the
# draft beside the NextAction fills it in. Order is kept stable so a draft is deterministic.

PROMPT_COVERAGE: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("request", ("objective", "intentMode")),
    ("frame", ("scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs")),
    (
        "contract",
        (
            "permissions",
            "contextRefs",
            "requiredOutputs",
            "verificationRequirements",
            "stopConditions",
            "assumptions",
            "unresolvedQuestions",
        ),
    ),
)
"""PromptReview coverage: which contract fields each of request, frame and contract covers."""


def prompt_coverage(state: RunState) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Return the exact PromptReview coverage: (sourceRef, contractFields) for the request, the
    latest contract's frame and the latest contract, in that order (PR-COVERAGE)."""
    contract = state.latest("TaskContract")
    if contract is None:
        return ()
    sources = {
        "request": state.request.uri,
        "frame": contract.body.problem_frame_ref,
        "contract": contract.uri,
    }
    return tuple((sources[name], fields) for name, fields in PROMPT_COVERAGE)


def corrected_fields(review: PromptReview) -> frozenset[str]:
    """Return the contract fields a revision changes: those of the review's blocking findings
    that carry a requiredCorrection (TC-REVISE-FIELDS)."""
    return frozenset(
        name
        for finding in review.findings
        if finding.severity == "blocking" and finding.required_correction
        for name in finding.correction_fields
    )


def contract_context_refs(state: RunState) -> tuple[str, ...]:
    """Return the refs a contract's contextRefs must include: the latest frame's non-user fact
    sources and every inference source, first occurrence first (TC-CONTEXT-REFS)."""
    frame = state.latest("ProblemFrame")
    return () if frame is None else frame_context_refs(frame)


def frame_context_refs(frame: StoredArtifact) -> tuple[str, ...]:
    """Return a ProblemFrame's non-user fact sources and every inference source, once each."""
    refs = [f.source_ref for f in frame.body.known_facts if f.provenance != "user"]
    refs += [ref for inference in frame.body.inferences for ref in inference.source_refs]
    return tuple(dict.fromkeys(refs))


def contract_rule_refs(state: RunState) -> tuple[str, ...]:
    """Return the contract's ruleRefs: the latest frame's applicableRuleRefs, once each
    (TC-RULE-REFS)."""
    frame = state.latest("ProblemFrame")
    return () if frame is None else tuple(dict.fromkeys(frame.body.applicable_rule_refs))


def current_results(state: RunState) -> tuple[str, ...]:
    """Return the URIs of the latest plan's results, the QualityReview's workResultRefs
    (QR-CURRENT-WORK)."""
    plan = state.latest("WorkPlan")
    return () if plan is None else tuple(r.uri for r in results_of(state, plan))


def every_uri(state: RunState, artifact_type: str) -> tuple[str, ...]:
    """Return the URI of every ``artifact_type`` of the run, in ledger order (the audit's
    workPlanRefs and workResultRefs, RA-LINEAGE)."""
    return tuple(a.uri for a in state.all(artifact_type))


def report_anchor(state: RunState) -> StoredArtifact | None:
    """Return what an unaudited report that does not complete cites in findingRefs: the latest
    QualityReview of a micro run or PromptReview of another, else the ClarificationRequest
    that ended the run (UR-EARLY-BLOCK, TP-MICRO-REPORT-CITE)."""
    judged = "QualityReview" if state.run.topology == "micro" else "PromptReview"
    return state.latest(judged) or state.latest("ClarificationRequest")


def report_change_refs(state: RunState) -> tuple[str, ...]:
    """Return the distinct diffRefs of every WorkResult, the report's changeRefs
    (UR-CHANGE-REFS)."""
    diffs = [f.diff_ref for r in state.all("WorkResult") for f in r.body.files_changed]
    return tuple(dict.fromkeys(diffs))


def required_verification_results(state: RunState) -> tuple[Any, ...]:
    """Return the latest QualityReview's results for the contract's required verifications."""
    review, contract = state.latest("QualityReview"), state.latest("TaskContract")
    if review is None or contract is None:
        return ()
    required = {v.id for v in contract.body.verification_requirements if v.required}
    return tuple(r for r in review.body.verification_results if r.requirement_id in required)


def report_verification_refs(state: RunState) -> tuple[str, ...]:
    """Return the evidence of the required verification results, a completed report's
    verificationRefs (UR-VERIFICATION-REFS)."""
    refs = [ref for r in required_verification_results(state) for ref in r.evidence_refs]
    return tuple(dict.fromkeys(refs))


def trace_ref(state: RunState) -> str:
    """Return the report's traceRef, ``trace://<runId>`` (UR-TRACE-REF)."""
    return f"trace://{state.run.run_id}"


def supported_claims(state: RunState) -> dict[str, Any]:
    """Return the latest audit's supported claim-matrix entries by claim id (the claims a
    report may make, UR-CLAIM-MATCHES-AUDIT-MATRIX)."""
    audit = state.latest("ReleaseAudit")
    if audit is None:
        return {}
    return {e.claim_id: e for e in audit.body.claim_evidence_matrix if e.status == "supported"}


def permissions_honored(state: RunState) -> bool | None:
    """Return the report's permissionsHonored: whether the latest audit's mode compliance
    passed and no action is on record as unauthorized, or None without an audit (UR-AUDIT-LINK)."""
    audit = state.latest("ReleaseAudit")
    if audit is None:
        return None
    return audit.body.mode_compliance == "pass" and not breaches(state)


def last_mutation(result: WorkResult) -> int:
    """Return the index of the result's last mutating action not skipped, or -1 for none."""
    marks = [i for i, a in enumerate(result.actions) if a.mutating and a.status != "skipped"]
    return max(marks, default=-1)


def backing_actions(state: RunState, capability: str, stage: str) -> tuple[tuple[str, ...], ...]:
    """Return the evidence of each action of the latest plan's results that can back a passing
    ``stage`` verification of ``capability``: completed, read-only, of that capability, in a node
    that requires it and covers a criterion of the stage, after the result's last mutation for
    completion (QR-VERIFICATION-BACKED). A verification's evidence must share a ref with one."""
    contract, plan = state.latest("TaskContract"), state.latest("WorkPlan")
    if contract is None or plan is None:
        return ()
    stages = {a.id: a.stage for a in contract.body.acceptance_criteria}
    found: list[tuple[str, ...]] = []
    for record in results_of(state, plan):
        body = record.body
        node = node_of(state, body)
        if node is None or capability not in node.required_capabilities:
            continue
        if not any(stages.get(criterion) == stage for criterion in node.acceptance_criteria):
            continue
        start = last_mutation(body) + 1 if stage == "completion" else 0
        found += [
            tuple(action.evidence_refs)
            for action in body.actions[start:]
            if action.capability == capability
            and action.status == "completed"
            and not action.mutating
        ]
    return tuple(found)


def assigned_criteria(state: RunState) -> frozenset[str]:
    """Return the criterion ids the latest plan's nodes are assigned."""
    plan = state.latest("WorkPlan")
    if plan is None:
        return frozenset()
    return frozenset(
        criterion for node in plan.body.nodes for criterion in node.acceptance_criteria
    )


def criterion_evidence(state: RunState, criterion: str) -> tuple[tuple[str, ...], ...]:
    """Return the evidence sets a passing acceptance result for ``criterion`` may repeat, in
    ledger order: each passing coverage entry's of the latest plan's results when that plan
    assigns the criterion, else each earlier review's passing result's
    (QR-PASS-EXACT-COVERAGE-EVIDENCE)."""
    plan = state.latest("WorkPlan")
    if plan is None:
        return ()
    if criterion in assigned_criteria(state):
        return tuple(
            tuple(entry.evidence_refs)
            for result in results_of(state, plan)
            for entry in result.body.acceptance_coverage
            if entry.criterion_id == criterion and entry.status == "pass"
        )
    return tuple(
        tuple(r.evidence_refs)
        for review in state.all("QualityReview")
        for r in review.body.acceptance_results
        if r.criterion_id == criterion and r.status == "pass"
    )


def gate_passes(state: RunState) -> tuple[VerificationResult, ...]:
    """Return every verification result a ``proceed_to_fix`` review passed, in ledger order:
    the diagnosis verifications a later review may retain."""
    return tuple(
        r
        for review in state.all("QualityReview")
        if review.body.decision == "proceed_to_fix"
        for r in review.body.verification_results
        if r.status == "pass"
    )


def verification_evidence(
    state: RunState, requirement_id: str, capability: str, stage: str
) -> tuple[str, ...] | None:
    """Return evidence a passing verification may cite: the first backing action's, else (a
    diagnosis verification after the unlock) the evidence the gate review passed it with."""
    actions = [refs for refs in backing_actions(state, capability, stage) if refs]
    if actions:
        return actions[0]
    if stage == "diagnosis" and is_unlocked(state):
        kept = [r.evidence_refs for r in gate_passes(state) if r.requirement_id == requirement_id]
        return tuple(kept[-1]) if kept else None
    return None
