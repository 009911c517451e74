"""Every registered rule in the host's words, on the field it constrains.

A host model learns a rule only where it looks: the type text of the field it is filling. So
each rule of the registry (``_rules.RULES``) that constrains the value of a host-authored field
is stated here once, keyed by its id, with the schema location(s) it constrains; the server
merges these sentences into the emitted schemas' descriptions (``telic.server._schemas``), and
the role instructions list them (``role_rules``). Every other rule is listed in ``GENERAL`` (true
of every reference, stated once in the ``telic_workflow`` prompt) or ``UNSTATED`` (not about a
value the host chooses), each with its reason. ``tests/telic/controller/test_statements.py``
fails when a registered rule is in none of them, or in more than one.

A location is ``Type:path``: ``path`` is a property of the artifact's root object, ``Def.name``
a property of the ``$defs`` type ``Def`` in that artifact's schema, or empty for the root. A
``$defs`` type that another artifact's schema also holds (``PermissionSet``, ``Finding``, …) is
never a location: a session learns each type name once, so its text must not differ by artifact.
Statements are terse: every byte reaches the host's context once per session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

from telic.controller._direct import CAPABILITY_KINDS, COMMAND_KINDS, DIFF_KINDS, OUTPUT_KINDS
from telic.controller._rules_frame import _FACT_EVIDENCE as FACT_EVIDENCE
from telic.controller._rules_prompt import _COVERAGE as COVERAGE
from telic.permissions import TYPED_INSPECT_TARGETS

__all__ = [
    "GENERAL",
    "ROLE_PREFIX",
    "STATEMENTS",
    "UNSTATED",
    "Statement",
    "field_statements",
    "role_instructions",
    "role_of",
    "role_rules",
]


class Statement(NamedTuple):
    """One rule's sentence on one schema location (``Type:path``)."""

    at: str
    text: str


def _kinds(kinds: Iterable[str]) -> str:
    return "|".join(sorted(kinds))


def _by_capability() -> str:
    """``CAPABILITY_KINDS`` as one line: capabilities sharing their kinds are grouped."""
    groups: dict[frozenset[str], list[str]] = {}
    for capability, kinds in CAPABILITY_KINDS.items():
        groups.setdefault(kinds, []).append(capability)
    parts = (f"{','.join(caps)}: {_kinds(kinds)}" for kinds, caps in groups.items())
    return "Evidence kind by capability: " + "; ".join(parts) + "."


def _coverage() -> str:
    entries = "; ".join(f"{name}: {','.join(sorted(fields))}" for name, fields in COVERAGE)
    return (
        "Exactly 3 entries, sourceRef → contractFields (any order): "
        f"{entries}. request = originalRequestRef; frame, contract = the reviewed ones."
    )


def _provenance() -> str:
    kinds = "; ".join(f"{name}: Evidence {_kinds(k)}" for name, k in FACT_EVIDENCE.items())
    return f"By provenance — user: the UserMessage; repository: a selected repo://; {kinds}."


_LATEST_CONTRACT = "The latest TaskContract."
_REQUEST = "The run's original request."
_RUN_MODE = "The run's mode."
_PROOF = "Proof refs cite Evidence artifacts, never repo://, trace:// or other types."
_COPY = "Version 1: exactly the frame's {}."
_BY_CAPABILITY = _by_capability()

STATEMENTS: Final[Mapping[str, tuple[Statement, ...]]] = {
    "REF-DIRECT-EVIDENCE": tuple(
        Statement(f"{kind}:", _PROOF)
        for kind in ("WorkResult", "QualityReview", "ReleaseAudit", "UserReport")
    ),
    "REF-EVIDENCE-KIND": (
        Statement("WorkResult:WorkAction.evidenceRefs", _BY_CAPABILITY),
        Statement("WorkResult:FileChange.diffRef", f"Evidence {_kinds(DIFF_KINDS)}."),
        Statement("WorkResult:TestResult.commandRef", f"Evidence {_kinds(COMMAND_KINDS)}."),
        Statement("WorkResult:TestResult.outputRef", f"Evidence {_kinds(OUTPUT_KINDS)}."),
        Statement("QualityReview:VerificationResult.evidenceRefs", _BY_CAPABILITY),
    ),
    "PF-INTENT-MODE": (Statement("ProblemFrame:intentMode", _RUN_MODE),),
    "PF-ORIGINAL-REQUEST": (Statement("ProblemFrame:originalRequestRef", _REQUEST),),
    "PF-CLARIFICATION-NOT-REQUIRED": (
        Statement(
            "ProblemFrame:clarification",
            "required: false. To ask, submit a ClarificationRequest; once answered, "
            "classify that unknown by the answer.",
        ),
    ),
    "PF-FACT-PROVENANCE": (Statement("ProblemFrame:GroundedFact.sourceRef", _provenance()),),
    "SS-PROBLEM-FRAME-LATEST": (Statement("ScenarioSpec:problemFrameRef", "The latest frame."),),
    "SS-ONE-PER-FRAME": (Statement("ScenarioSpec:", "At most one per ProblemFrame."),),
    "TC-INTENT-MODE": (Statement("TaskContract:intentMode", _RUN_MODE),),
    "TC-ORIGINAL-REQUEST": (Statement("TaskContract:originalRequestRef", _REQUEST),),
    "TC-PROBLEM-FRAME-LATEST": (Statement("TaskContract:problemFrameRef", "The latest frame."),),
    "TC-CONTEXT-REFS": (
        Statement(
            "TaskContract:contextRefs",
            "Includes every sourceRef of the frame's inferences and non-user facts.",
        ),
    ),
    "TC-RULE-REFS": (
        Statement("TaskContract:ruleRefs", "The frame's applicableRuleRefs, each once."),
    ),
    "TC-COMPILE-V1": (Statement("TaskContract:version", "1 when compiled."),),
    "TC-FRAME-COPY": (
        Statement("TaskContract:scope", _COPY.format("scope")),
        Statement("TaskContract:constraints", _COPY.format("constraints")),
        Statement("TaskContract:nonGoals", _COPY.format("nonGoals")),
        Statement("TaskContract:acceptanceCriteria", _COPY.format("draftAcceptanceCriteria")),
    ),
    "TC-VERIFICATION-BACKED": (
        Statement(
            "TaskContract:verificationRequirements",
            "Each capability is granted by permissions.",
        ),
    ),
    "TC-SHELL-ALLOWLIST": (
        Statement(
            "TaskContract:permissions",
            "shell.executeAllowlist: exact commands, no ; & | < > ` $( or globs.",
        ),
    ),
    "TC-PERMISSIONS-AUTHORIZED": (
        Statement("TaskContract:permissions", "Within nextAction.effectivePermissions."),
    ),
    "TC-ASSUMPTIONS": (Statement("TaskContract:assumptions", "Unique ids."),),
    "TC-REVISE-V2": (Statement("TaskContract:version", "2 for the revision a revise asks."),),
    "TC-REVISE-CITES": (
        Statement("TaskContract:", "A revision's source_refs cite the old contract and review."),
    ),
    "TC-REVISE-PERMISSIONS": (
        Statement("TaskContract:permissions", "A revision never widens them."),
    ),
    "TC-REVISE-FIELDS": (
        Statement(
            "TaskContract:",
            "A revision changes exactly the blocking findings' correctionFields",
        ),
    ),
    "TC-REVISE-PRESERVE": (Statement("TaskContract:", "and no preserveFields."),),
    "PR-TARGET-LATEST": (Statement("PromptReview:targetRef", _LATEST_CONTRACT),),
    "PR-REVISION-NUMBER": (
        Statement(
            "PromptReview:revisionNumber", "The contract's version − 1: 0, or 1 for a revision."
        ),
    ),
    "PR-COVERAGE": (Statement("PromptReview:coverage", _coverage()),),
    "WP-CONTRACT-LATEST": (Statement("WorkPlan:taskContractRef", _LATEST_CONTRACT),),
    "WP-PLAN-VALID": (Statement("WorkPlan:planValidation", "Only valid is accepted."),),
    "WP-PLAN-TOOL-CALLS": (
        Statement("WorkPlan:GlobalBudgets.maximumToolCalls", "≥ the nodes' sum"),
    ),
    "WP-CUMULATIVE-TOOL-CALLS": (
        Statement("WorkPlan:GlobalBudgets.maximumToolCalls", "and ≤ 4000 over all plans."),
    ),
    "WP-ENVELOPE-BUDGETS": (
        Statement("WorkPlan:globalBudgets", "Workers and depth within the run's budgets."),
    ),
    "WP-NODE-PERMISSIONS-CONTRACT": (
        Statement("WorkPlan:WorkNode.permissions", "⊆ the contract's"),
    ),
    "WP-NODE-PERMISSIONS-CEILING": (
        Statement(
            "WorkPlan:WorkNode.permissions",
            "and the mode's; before the diagnosis gate no write, delete or shell.execute.",
        ),
    ),
    "WP-NODE-CHILDREN": (
        Statement(
            "WorkPlan:NodeBudgets.maximumChildren",
            "≤ the node's subagents.maximumChildren; 0 if depth allows none.",
        ),
    ),
    "WP-NODE-CAPABILITIES": (
        Statement(
            "WorkPlan:WorkNode.requiredCapabilities",
            "Unique, in allowedTools, backed by permissions, ≤ maximumToolCalls; ≥1 to execute.",
        ),
    ),
    "WP-NODE-CRITERIA": (
        Statement(
            "WorkPlan:WorkNode.acceptanceCriteria",
            "Contract criteria; analyze_and_fix's first plan: diagnosis ones only.",
        ),
    ),
    "WP-NODE-SPAWN-CHILDREN": (
        Statement("WorkPlan:NodeBudgets.maximumChildren", "≥1 if subagent.spawn is required."),
    ),
    "WP-COVERAGE": (
        Statement("WorkPlan:nodes", "Cover every criterion of the stage (or work order)."),
    ),
    "WP-SCOPED-ORDER": (
        Statement(
            "WorkPlan:",
            "A replan after remediate or proceed_to_fix cites the review and stays in its order.",
        ),
    ),
    "WP-VERIFICATION-PREFLIGHT": (
        Statement(
            "WorkPlan:nodes",
            "Each required verification of the stage needs a node requiring its capability "
            "with a criterion of that stage.",
        ),
    ),
    "WP-VERIFIER-AFTER-MUTATION": (
        Statement(
            "WorkPlan:WorkNode.dependsOn",
            "A completion verifier depends on every mutating node.",
        ),
    ),
    "WR-PLAN-LATEST": (Statement("WorkResult:workPlanRef", "The latest WorkPlan."),),
    "WR-NODE-FIRST-READY": (
        Statement("WorkResult:nodeId", "The first ready node without a result, in plan order."),
    ),
    "WR-ACTION-BUDGET": (
        Statement("WorkResult:actions", "≤ the node's maximumToolCalls, as are toolEventRefs."),
    ),
    "WR-NO-MUTATION": (
        Statement(
            "WorkResult:filesChanged",
            "None, nor mutating actions, in read-only modes or before the fix is unlocked.",
        ),
    ),
    "WR-COVERAGE": (
        Statement("WorkResult:acceptanceCoverage", "The node's criteria, each at most once"),
    ),
    "WR-COMPLETED-COVERAGE": (
        Statement("WorkResult:acceptanceCoverage", "and all of them when completed."),
    ),
    "WR-COMPLETED-CAPABILITIES": (
        Statement(
            "WorkResult:actions",
            "Completed: a completed action per required capability,",
        ),
    ),
    "WR-VERIFY-AFTER-MUTATION": (
        Statement("WorkResult:actions", "any verification after the last mutation."),
    ),
    "WR-ACTION-ALLOWED-TOOL": (
        Statement("WorkResult:WorkAction.capability", "One of the node's allowedTools."),
    ),
    "WR-SHELL-INSPECT-TARGET": (
        Statement(
            "WorkResult:WorkAction.target",
            f"shell.inspect: {'|'.join(TYPED_INSPECT_TARGETS)} only.",
        ),
    ),
    "WR-ACTION-AUTHORIZED": (
        Statement(
            "WorkResult:WorkAction.status",
            "completed/failed only inside the node's permissions;",
        ),
    ),
    "WR-FALSE-DENIAL": (Statement("WorkResult:WorkAction.status", "denied only outside."),),
    "WR-MUTATING-FLAG": (
        Statement(
            "WorkResult:WorkAction.mutating",
            "The capability's class; shell.execute either.",
        ),
    ),
    "WR-SPAWN-COUNT": (
        Statement("WorkResult:actions", "Completed subagent.spawn ≤ the node's children."),
    ),
    "WR-FILE-CHANGES": (
        Statement("WorkResult:filesChanged", "One per completed write/delete action, same path,"),
    ),
    "WR-WRITE-FILE-CHANGE": (Statement("WorkResult:filesChanged", "each action with one,"),),
    "WR-FILE-CHANGE-AUTHORIZED": (Statement("WorkResult:filesChanged", "on an authorized path."),),
    "EV-CONTENT-CANONICAL": (
        Statement("Evidence:content", "Canonical base64 (or UTF-8 text), ≤ 2 MiB decoded."),
    ),
    "EV-QUOTA": (Statement("Evidence:", "At most 128 per WorkPlan."),),
    "QR-REMAINING-REMEDIATIONS": (
        Statement(
            "QualityReview:remainingRemediations",
            "= nextAction.remainingBudgets.postExecutionRemediations.",
        ),
    ),
    "QR-CONTRACT-LATEST": (Statement("QualityReview:taskContractRef", _LATEST_CONTRACT),),
    "QR-CURRENT-WORK": (
        Statement("QualityReview:workPlanRefs", "Includes the latest WorkPlan."),
        Statement("QualityReview:workResultRefs", "Exactly the latest plan's WorkResults."),
    ),
    "QR-PROGRESSION": (
        Statement("QualityReview:decision", "pass/proceed_to_fix: every node has completed;"),
    ),
    "QR-PROCEED-BEFORE-UNLOCK": (
        Statement(
            "QualityReview:decision",
            "proceed_to_fix: only analyze_and_fix's diagnosis review,",
        ),
    ),
    "QR-GATE-BEFORE-PASS": (Statement("QualityReview:decision", "which cannot pass;"),),
    "QR-PASS-NEEDS-MUTATION": (
        Statement("QualityReview:decision", "a fix passes after a completed mutation."),
    ),
    "QR-STAGE-COVERAGE": (
        Statement(
            "QualityReview:acceptanceResults",
            "One per contract criterion (diagnosis ones only before analyze_and_fix's fix).",
        ),
    ),
    "QR-VERIFICATION-COVERAGE": (
        Statement(
            "QualityReview:verificationResults",
            "One per contract requirement (diagnosis ones only before analyze_and_fix's fix),",
        ),
        Statement("QualityReview:VerificationResult.capability", "The contracted one."),
    ),
    "QR-REQUIRED-VERIFICATION-PASS": (
        Statement(
            "QualityReview:verificationResults",
            "required ones passing for pass/proceed_to_fix.",
        ),
    ),
    "QR-PASS-EXACT-COVERAGE-EVIDENCE": (
        Statement(
            "QualityReview:acceptanceResults",
            "A pass's evidenceRefs: the exact set a passing WorkResult coverage entry used.",
        ),
    ),
    "QR-VERIFICATION-BACKED": (
        Statement(
            "QualityReview:VerificationResult.status",
            "pass: its Evidence backs a completed read-only action of the capability "
            "(after the last mutation, for completion).",
        ),
    ),
    "QR-RULE-COMPLIANCE": (
        Statement("QualityReview:ruleCompliance", "One per contract ruleRef, as subjectRef."),
    ),
    "QR-CORRECTION-ORDER": (
        Statement(
            "QualityReview:CorrectionWorkOrder.targetCriterionIds",
            "Every completion criterion once; capabilities backed, within the contract.",
        ),
    ),
    "QR-REMEDIATION-ORDER": (
        Statement(
            "QualityReview:RemediationWorkOrder.failedCriterionIds",
            "Stage criteria; capabilities backed, within the contract.",
        ),
    ),
    "QR-REMEDIATION-SOURCES": (
        Statement(
            "QualityReview:RemediationWorkOrder.sourceRefs",
            "Cite the latest plan, its results or Evidence.",
        ),
    ),
    "RA-REMAINING-REMEDIATIONS": (
        Statement(
            "ReleaseAudit:remainingRemediations",
            "= nextAction.remainingBudgets.postExecutionRemediations.",
        ),
    ),
    "RA-ORIGINAL-REQUEST": (Statement("ReleaseAudit:originalRequestRef", _REQUEST),),
    "RA-CONTRACT-LATEST": (Statement("ReleaseAudit:taskContractRef", _LATEST_CONTRACT),),
    "RA-LINEAGE": (
        Statement("ReleaseAudit:qualityReviewRef", "The latest QualityReview."),
        Statement("ReleaseAudit:workPlanRefs", "Every WorkPlan of the run."),
        Statement("ReleaseAudit:workResultRefs", "Every WorkResult of the run."),
    ),
    "RA-USER-FIDELITY": (
        Statement("ReleaseAudit:userFidelity", "subjectRef: the original request."),
    ),
    "RA-DECISION": (
        Statement(
            "ReleaseAudit:decision",
            "Never release a modeCompliance fail nor soften a review's block;",
        ),
    ),
    "RA-RELEASE": (
        Statement("ReleaseAudit:decision", "release needs a passing latest review and claims."),
    ),
    "RA-CRITERIA": (
        Statement("ReleaseAudit:ClaimEvidenceEntry.criterionIds", "Contract criteria."),
    ),
    "RA-RELEASE-COVERAGE": (
        Statement(
            "ReleaseAudit:claimEvidenceMatrix",
            "release: each criterion has a supported direct claim.",
        ),
    ),
    "RA-DEFECT-SCOPE": (
        Statement(
            "ReleaseAudit:RemediationDefect.failedCriterionIds",
            "Contract criteria; capabilities backed, within the contract.",
        ),
    ),
    "RA-DEFECT-SOURCES": (
        Statement(
            "ReleaseAudit:RemediationDefect.sourceRefs",
            "Cite the latest review, a WorkResult or Evidence.",
        ),
    ),
    "UR-TRACE-REF": (Statement("UserReport:traceRef", "trace://<runId>."),),
    "UR-STATUS": (
        Statement(
            "UserReport:terminalStatus",
            "Fits the audit's decision (no audit: blocked); never cancelled;",
        ),
    ),
    "UR-AUDIT-LINK": (
        Statement("UserReport:id", "The audit's userReportRef names it."),
        Statement("UserReport:permissionsHonored", "= (the audit's modeCompliance is pass)."),
        Statement("ReleaseAudit:userReportRef", "The UserReport to come (pick its id)."),
        Statement("ReleaseAudit:modeCompliance", "Also the report's permissionsHonored."),
    ),
    "UR-EARLY-BLOCK": (
        Statement(
            "UserReport:findingRefs",
            "No audit: cite the blocking review and claim nothing;",
        ),
    ),
    "UR-FINDINGS": (
        Statement("UserReport:findingRefs", "not completed: cite the latest review or audit."),
    ),
    "UR-CHANGE-REFS": (
        Statement("UserReport:changeRefs", "Every distinct diffRef of the run's WorkResults."),
    ),
    "UR-VERIFICATION-REFS": (
        Statement(
            "UserReport:verificationRefs",
            "completed: exactly the evidenceRefs of the required verification results.",
        ),
    ),
    "UR-FAILED-VERIFICATION": (
        Statement("UserReport:terminalStatus", "failed_verification needs a failed one."),
    ),
    "UR-CLAIM-MATCHES-AUDIT-MATRIX": (
        Statement(
            "UserReport:completionClaims",
            "Copies of supported audit claims (id, text, evidenceRefs, basis)",
        ),
    ),
    "UR-RELEASE-CLAIMS": (Statement("UserReport:completionClaims", "; after release, all."),),
}
"""Rule id → its statements, each on the schema location it constrains."""

GENERAL: Final[Mapping[str, str]] = {
    "REF-SAME-RUN": "names an artifact of this run",
    "REF-EXISTS": "that exists",
    "REF-TYPED-TARGET": "of the type its field names",
    "REF-TRACE-EVENT": "a trace:// reference an existing event",
    "REF-SYSTEM": "artifact://system/ references only where the schema asks for one",
    "REF-REPO-SELECTED": "repo:// only for sources the ContextManifest selected",
    "REF-PERMISSION-NOT-EVIDENCE": "a permission_checked event is never evidence",
    "RUN-RESUME-LINEAGE": "source_refs cite the ClarificationRequest and its answer",
}
"""Rules true of every reference or of a tool argument: the prompt states them once, in
these words (a test checks that it does)."""

UNSTATED: Final[Mapping[str, str]] = {}
"""Rules no host-authored value can break, with the reason (none today)."""


def field_statements() -> dict[tuple[str, str], str]:
    """``(type, path)`` → the statements on that location, in registry order, as one text.

    Ordered by the registry so that a location's sentences read in the order the rules run.
    """
    from telic.controller._rules import rule_ids  # the registry imports the rule modules

    merged: dict[tuple[str, str], list[str]] = {}
    for rule_id in rule_ids():
        for statement in STATEMENTS.get(rule_id, ()):
            kind, _, path = statement.at.partition(":")
            merged.setdefault((kind, path), []).append(statement.text)
    return {where: _join(texts) for where, texts in merged.items()}


def _join(texts: list[str]) -> str:
    text = ""
    for part in texts:
        glue = "" if not text or part.startswith(";") else " "
        text += glue + part
    return text


def role_rules(artifact_type: str) -> tuple[tuple[str, str], ...]:
    """``(field path, statement)`` of every rule on ``artifact_type``'s fields, in order."""
    return tuple(
        (path or "(whole artifact)", text)
        for (kind, path), text in field_statements().items()
        if kind == artifact_type
    )


ROLE_PREFIX: Final = "artifact://system/roles/"
"""Where a NextAction's ``instructionRef`` points: ``<prefix><role>-v1``."""


def role_of(uri: str) -> str | None:
    """The role an ``artifact://system/roles/<role>-v1`` URI names (dashes allowed), or None."""
    from telic.protocol import ACTION_ROLES

    name = uri.removeprefix(ROLE_PREFIX)
    if name == uri or not name.endswith("-v1"):
        return None
    role = name.removesuffix("-v1").replace("-", "_")
    return role if role in ACTION_ROLES else None


def role_instructions(role: str) -> str:
    """The text behind ``artifact://system/roles/<role>-v1``, from the phase table and the rules.

    Markdown: each phase the role plays, what it decides there and the type it submits, then
    every rule statement on that type's fields (the same words the type text carries).
    """
    from telic.controller._phases import PHASES

    lines = [
        f"# Role {role} ({ROLE_PREFIX}{role}-v1)",
        "",
        "Telic never runs a model: you play this role, submit one typed artifact per phase, and "
        "Telic checks it. The schema's // text on each field states the same rules.",
    ]
    done: set[str] = set()
    for spec in PHASES.values():
        if spec.role != role:
            continue
        lines += ["", f"## {spec.protocol}: submit {spec.primary}", "", spec.summary]
        if spec.additional:
            lines.append(f"Also accepted in this phase: {', '.join(spec.additional)}.")
        if spec.primary in done:
            lines.append(f"The rules of {spec.primary} are listed above.")
            continue
        done.add(spec.primary)
        rules = role_rules(spec.primary)
        if rules:
            lines += ["", f"Rules a {spec.primary} meets:"]
            lines += [f"- {path}: {text}" for path, text in rules]
    if role == "executor":
        rules = role_rules("Evidence")
        lines += ["", "Rules an Evidence meets:"] + [f"- {p}: {t}" for p, t in rules]
    return "\n".join(lines) + "\n"
