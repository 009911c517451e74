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

import functools
from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

from telic.controller._derive import PROMPT_COVERAGE
from telic.controller._direct import CAPABILITY_KINDS, COMMAND_KINDS, DIFF_KINDS, OUTPUT_KINDS
from telic.controller._rules_frame import FACT_EVIDENCE
from telic.permissions import TYPED_INSPECT_TARGETS


class Statement(NamedTuple):
    """One rule's sentence on one schema location (``Type:path``)."""

    at: str
    text: str


def _kinds(kinds: Iterable[str]) -> str:
    return "|".join(sorted(kinds))


def _by_capability() -> str:
    """``CAPABILITY_KINDS`` in one line: capabilities sharing their kinds are grouped, a whole
    family as ``family.*``."""
    groups: dict[frozenset[str], list[str]] = {}
    for capability, kinds in CAPABILITY_KINDS.items():
        groups.setdefault(kinds, []).append(capability)
    parts = []
    for kinds, caps in groups.items():
        names: dict[str, None] = {}  # in order, once each
        for cap in caps:
            family = cap.split(".")[0]
            siblings = [c for c in CAPABILITY_KINDS if c.split(".")[0] == family]
            whole = len(siblings) > 1 and set(siblings) <= set(caps)
            names[f"{family}.*" if whole else cap] = None
        parts.append(f"{','.join(names)} {_kinds(kinds)}")
    return "Evidence kinds: " + "; ".join(parts) + "."


def _coverage() -> str:
    entries = "; ".join(f"{name}: {','.join(sorted(fields))}" for name, fields in PROMPT_COVERAGE)
    return f"Exactly 3, sourceRef → contractFields: {entries}."


def _provenance() -> str:
    kinds = "; ".join(f"{name}: Evidence {_kinds(k)}" for name, k in FACT_EVIDENCE.items())
    return f"user: the UserMessage; repository: a selected repo://; {kinds}."


_LATEST = "The latest."
_REQUEST = "The run's request."
_RUN_MODE = "The run's mode."
_PROOF = "Proofs cite Evidence."
_COPY = "v1: the frame's {}, exactly."
_PERMITTED = "permitted capabilities."
_REMEDIATIONS = "remainingBudgets.postExecutionRemediations."


def _s(at: str, text: str) -> tuple[Statement, ...]:
    return (Statement(at, text),)


STATEMENTS: Final[Mapping[str, tuple[Statement, ...]]] = {
    "REF-DIRECT-EVIDENCE": tuple(
        Statement(f"{kind}:", _PROOF)
        for kind in ("WorkResult", "QualityReview", "ReleaseAudit", "UserReport")
    ),
    "REF-EVIDENCE-KIND": (
        Statement("WorkResult:WorkAction.evidenceRefs", _by_capability()),
        Statement("WorkResult:FileChange.diffRef", f"Evidence {_kinds(DIFF_KINDS)}."),
        Statement("WorkResult:TestResult.commandRef", f"Evidence {_kinds(COMMAND_KINDS)}."),
        Statement("WorkResult:TestResult.outputRef", f"Evidence {_kinds(OUTPUT_KINDS)}."),
        Statement("QualityReview:VerificationResult.evidenceRefs", "Kinds as in WorkResult."),
    ),
    "PF-INTENT-MODE": _s("ProblemFrame:intentMode", _RUN_MODE),
    "PF-ORIGINAL-REQUEST": _s("ProblemFrame:originalRequestRef", _REQUEST),
    "PF-CLARIFICATION-NOT-REQUIRED": _s(
        "ProblemFrame:clarification",
        "required: false, or true with requestRef naming the request the user answered; "
        "to ask, submit a ClarificationRequest.",
    ),
    "PF-FACT-PROVENANCE": _s("ProblemFrame:GroundedFact.sourceRef", _provenance()),
    "PF-STAGE-CRITERIA": _s(
        "ProblemFrame:draftAcceptanceCriteria",
        "≥1; a completion one; analyze_and_fix also a diagnosis one.",
    ),
    "SS-PROBLEM-FRAME-LATEST": _s("ScenarioSpec:problemFrameRef", _LATEST),
    "SS-ONE-PER-FRAME": _s("ScenarioSpec:", "One per ProblemFrame."),
    "TC-INTENT-MODE": _s("TaskContract:intentMode", _RUN_MODE),
    "TC-ORIGINAL-REQUEST": _s("TaskContract:originalRequestRef", _REQUEST),
    "TC-PROBLEM-FRAME-LATEST": _s("TaskContract:problemFrameRef", _LATEST),
    "TC-CONTEXT-REFS": _s(
        "TaskContract:contextRefs", "⊇ sourceRefs of the frame's inferences and non-user facts."
    ),
    "TC-STAGE-CRITERIA": _s("TaskContract:acceptanceCriteria", "Stages as the frame's."),
    "TC-VERIFICATION-REACHABLE": _s(
        "TaskContract:verificationRequirements",
        "Each capability one its stage's nodes can be given (mode ∩ grant; no writes pre-fix).",
    ),
    "TC-RULE-REFS": _s("TaskContract:ruleRefs", "The frame's applicableRuleRefs, once each."),
    "TC-COMPILE-V1": _s("TaskContract:version", "1 compiled,"),
    "TC-FRAME-COPY": (
        Statement("TaskContract:scope", _COPY.format("scope")),
        Statement("TaskContract:constraints", _COPY.format("constraints")),
        Statement("TaskContract:nonGoals", _COPY.format("nonGoals")),
        Statement("TaskContract:acceptanceCriteria", _COPY.format("draftAcceptanceCriteria")),
    ),
    "TC-VERIFICATION-BACKED": _s(
        "TaskContract:verificationRequirements", "Capabilities granted by permissions."
    ),
    "TC-SHELL-ALLOWLIST": _s(
        "TaskContract:permissions", "executeAllowlist: exact commands (no ; & | < > ` $( globs)."
    ),
    "TC-PERMISSIONS-AUTHORIZED": _s("TaskContract:permissions", "⊆ mode ∩ user grant;"),
    "TC-ASSUMPTIONS": _s("TaskContract:assumptions", "Unique ids."),
    "TC-REVISE-V2": _s("TaskContract:version", "2 when revised."),
    "TC-REVISE-CITES": _s("TaskContract:", "A revision cites contract and review in source_refs,"),
    "TC-REVISE-PERMISSIONS": _s("TaskContract:permissions", "a revision's ⊆ the old."),
    "TC-REVISE-FIELDS": _s("TaskContract:", "changes exactly the blocking correctionFields"),
    "TC-REVISE-PRESERVE": _s("TaskContract:", "and no preserveFields."),
    "PR-TARGET-LATEST": _s("PromptReview:targetRef", "The latest TaskContract."),
    "PR-REVISION-NUMBER": _s("PromptReview:revisionNumber", "The contract's version − 1."),
    "PR-COVERAGE": _s("PromptReview:coverage", _coverage()),
    "WP-CONTRACT-LATEST": _s("WorkPlan:taskContractRef", "The latest TaskContract."),
    "WP-PLAN-VALID": _s("WorkPlan:planValidation", "Only valid is accepted."),
    "WP-PLAN-TOOL-CALLS": _s("WorkPlan:GlobalBudgets.maximumToolCalls", "≥ Σ nodes';"),
    "WP-CUMULATIVE-TOOL-CALLS": _s(
        "WorkPlan:GlobalBudgets.maximumToolCalls", "≤ 4000 over all plans."
    ),
    "WP-ENVELOPE-BUDGETS": _s("WorkPlan:globalBudgets", "Within remainingBudgets."),
    "WP-NODE-PERMISSIONS-CONTRACT": _s("WorkPlan:WorkNode.permissions", "⊆ the contract's"),
    "WP-NODE-PERMISSIONS-CEILING": _s(
        "WorkPlan:WorkNode.permissions",
        "and the mode's: no write, delete or mutating command before the diagnosis gate.",
    ),
    "WP-NODE-CHILDREN": _s(
        "WorkPlan:NodeBudgets.maximumChildren", "≤ its subagents.maximumChildren (0: no depth);"
    ),
    "WP-NODE-CAPABILITIES": _s(
        "WorkPlan:WorkNode.requiredCapabilities",
        "Unique, in allowedTools, permitted, ≤ maximumToolCalls; ≥1 to execute.",
    ),
    "WP-NODE-CRITERIA": _s(
        "WorkPlan:WorkNode.acceptanceCriteria",
        "Contract criteria; diagnosis ones only in analyze_and_fix's first plan.",
    ),
    "WP-NODE-SPAWN-CHILDREN": _s(
        "WorkPlan:NodeBudgets.maximumChildren", "≥1 to require subagent.spawn."
    ),
    "WP-COVERAGE": _s("WorkPlan:nodes", "Cover each criterion of the stage (or work order);"),
    "WP-SCOPED-ORDER": _s("WorkPlan:", "A replan cites the review and stays within its order."),
    "WP-VERIFICATION-PREFLIGHT": _s(
        "WorkPlan:nodes",
        "a required verification needs a node requiring its capability with a criterion of "
        "its stage.",
    ),
    "WP-VERIFIER-AFTER-MUTATION": _s(
        "WorkPlan:WorkNode.dependsOn", "A completion verifier follows every mutating node."
    ),
    "WR-PLAN-LATEST": _s("WorkResult:workPlanRef", _LATEST),
    "WR-NODE-FIRST-READY": _s("WorkResult:nodeId", "The first ready node without a result."),
    "WR-ACTION-BUDGET": _s("WorkResult:actions", "≤ node's maximumToolCalls (toolEventRefs too);"),
    "WR-NO-MUTATION": _s(
        "WorkResult:filesChanged", "None (nor mutating actions) in read-only modes or before fix;"
    ),
    "WR-COVERAGE": _s("WorkResult:acceptanceCoverage", "The node's criteria, once at most"),
    "WR-COMPLETED-COVERAGE": _s("WorkResult:acceptanceCoverage", "(all when completed)."),
    "WR-COMPLETED-FAILED-TEST": _s(
        "WorkResult:testResults", "completed with a failed test: only where the run cannot write."
    ),
    "WR-COMPLETED-CAPABILITIES": _s(
        "WorkResult:actions", "completed: one completed per required capability,"
    ),
    "WR-VERIFY-AFTER-MUTATION": _s("WorkResult:actions", "verifying after the last mutation;"),
    "WR-ACTION-ALLOWED-TOOL": _s("WorkResult:WorkAction.capability", "In the node's allowedTools."),
    "WR-SHELL-INSPECT-TARGET": _s(
        "WorkResult:WorkAction.target", f"shell.inspect: {'|'.join(TYPED_INSPECT_TARGETS)}."
    ),
    "WR-ACTION-AUTHORIZED": _s(
        "WorkResult:WorkAction.status", "completed/failed: only within the node's permissions;"
    ),
    "WR-UNAUTHORIZED-REAL": _s(
        "WorkResult:WorkAction.status", "unauthorized: one you took outside them or allowedTools;"
    ),
    "WR-FALSE-DENIAL": _s("WorkResult:WorkAction.status", "denied: only outside."),
    "WR-MUTATING-FLAG": _s(
        "WorkResult:WorkAction.mutating", "By capability; shell.execute either."
    ),
    "WR-SPAWN-COUNT": _s("WorkResult:actions", "subagent.spawn ≤ node's children."),
    "WR-FILE-CHANGES": _s("WorkResult:filesChanged", "one per completed write/delete,"),
    "WR-WRITE-FILE-CHANGE": _s("WorkResult:filesChanged", "same path,"),
    "WR-FILE-CHANGE-AUTHORIZED": _s("WorkResult:filesChanged", "authorized."),
    "EV-CONTENT-CANONICAL": _s("Evidence:content", "Canonical base64 or text, ≤ 2 MiB decoded."),
    "EV-QUOTA": _s("Evidence:", "≤ 128 per WorkPlan."),
    "QR-REMAINING-REMEDIATIONS": _s("QualityReview:remainingRemediations", _REMEDIATIONS),
    "QR-CONTRACT-LATEST": _s("QualityReview:taskContractRef", _LATEST),
    "QR-CURRENT-WORK": (
        Statement("QualityReview:workPlanRefs", "⊇ the latest."),
        Statement("QualityReview:workResultRefs", "The latest plan's, exactly."),
    ),
    "QR-PROGRESSION": _s("QualityReview:decision", "pass, proceed_to_fix: all nodes completed;"),
    "QR-PROCEED-BEFORE-UNLOCK": _s(
        "QualityReview:decision", "proceed_to_fix: analyze_and_fix's diagnosis review only,"
    ),
    "QR-GATE-BEFORE-PASS": _s("QualityReview:decision", "never pass there;"),
    "QR-PASS-NEEDS-MUTATION": _s("QualityReview:decision", "a fix passes once mutated."),
    "QR-STAGE-COVERAGE": _s(
        "QualityReview:acceptanceResults",
        "One per contract criterion, both stages (before analyze_and_fix's fix: diagnosis).",
    ),
    "QR-VERIFICATION-COVERAGE": (
        Statement("QualityReview:verificationResults", "One per requirement, likewise;"),
        Statement("QualityReview:VerificationResult.capability", "The contracted one."),
    ),
    "QR-REQUIRED-VERIFICATION-PASS": _s(
        "QualityReview:verificationResults", "required ones pass for pass, proceed_to_fix."
    ),
    "QR-PASS-EXACT-COVERAGE-EVIDENCE": _s(
        "QualityReview:acceptanceResults",
        "A pass reuses a passing WorkResult coverage's exact evidenceRefs.",
    ),
    "QR-VERIFICATION-BACKED": _s(
        "QualityReview:VerificationResult.status",
        "pass: its Evidence backs a completed read-only action of it, after the last mutation.",
    ),
    "QR-RULE-COMPLIANCE": _s("QualityReview:ruleCompliance", "subjectRefs = contract ruleRefs."),
    "QR-CORRECTION-ORDER": _s(
        "QualityReview:CorrectionWorkOrder.targetCriterionIds",
        f"Each completion criterion once; {_PERMITTED}",
    ),
    "QR-REMEDIATION-ORDER": _s(
        "QualityReview:RemediationWorkOrder.failedCriterionIds", f"Stage criteria; {_PERMITTED}"
    ),
    "QR-REMEDIATION-SOURCES": _s(
        "QualityReview:RemediationWorkOrder.sourceRefs", "The latest plan, its results or Evidence."
    ),
    "RA-REMAINING-REMEDIATIONS": _s("ReleaseAudit:remainingRemediations", _REMEDIATIONS),
    "RA-ORIGINAL-REQUEST": _s("ReleaseAudit:originalRequestRef", _REQUEST),
    "RA-CONTRACT-LATEST": _s("ReleaseAudit:taskContractRef", _LATEST),
    "RA-LINEAGE": (
        Statement("ReleaseAudit:qualityReviewRef", "The latest QualityReview."),
        Statement("ReleaseAudit:workPlanRefs", "All of the run."),
        Statement("ReleaseAudit:workResultRefs", "All of the run."),
    ),
    "RA-PERMISSIONS-BREACH": _s(
        "ReleaseAudit:modeCompliance", "fail once an action is recorded unauthorized."
    ),
    "RA-USER-FIDELITY": _s("ReleaseAudit:userFidelity", "subjectRef: the request."),
    "RA-DECISION": _s(
        "ReleaseAudit:decision", "A review's block stays; release needs modeCompliance pass,"
    ),
    "RA-RELEASE": _s("ReleaseAudit:decision", "a passing review and claims."),
    "RA-CRITERIA": _s("ReleaseAudit:ClaimEvidenceEntry.criterionIds", "Contract criteria."),
    "RA-RELEASE-COVERAGE": _s(
        "ReleaseAudit:claimEvidenceMatrix",
        "release: every claim supported, a direct one per criterion (unproven: a risk).",
    ),
    "RA-DEFECT-SCOPE": _s(
        "ReleaseAudit:RemediationDefect.failedCriterionIds", f"Contract criteria; {_PERMITTED}"
    ),
    "RA-DEFECT-SOURCES": _s(
        "ReleaseAudit:RemediationDefect.sourceRefs", "The latest review, a WorkResult or Evidence."
    ),
    "UR-TRACE-REF": _s("UserReport:traceRef", "trace://<runId>."),
    "UR-STATUS": _s("UserReport:terminalStatus", "Fits the audit (none: blocked); not cancelled;"),
    "UR-AUDIT-LINK": (
        Statement("UserReport:id", "The audit's userReportRef."),
        Statement(
            "UserReport:permissionsHonored",
            "true only if the audit's modeCompliance passed and no action is unauthorized.",
        ),
        Statement("ReleaseAudit:userReportRef", "The coming UserReport (pick its id)."),
        Statement("ReleaseAudit:modeCompliance", "Bounds the report's permissionsHonored."),
    ),
    "UR-EARLY-BLOCK": _s("UserReport:findingRefs", "No audit: the blocking review, no claims;"),
    "UR-FINDINGS": _s("UserReport:findingRefs", "not completed: the latest review or audit."),
    "UR-CHANGE-REFS": _s("UserReport:changeRefs", "The WorkResults' diffRefs."),
    "UR-VERIFICATION-REFS": _s(
        "UserReport:verificationRefs", "completed: required verification results' evidenceRefs."
    ),
    "UR-FAILED-VERIFICATION": _s("UserReport:terminalStatus", "failed_verification: one failed."),
    "UR-CLAIM-MATCHES-AUDIT-MATRIX": _s(
        "UserReport:completionClaims", "Copies of supported audit claims (id, text, evidence,"
    ),
    "UR-RELEASE-CLAIMS": _s("UserReport:completionClaims", "basis); all after a release."),
    "TP-MICRO-FRAME-CRITERIA": _s("ProblemFrame:draftAcceptanceCriteria", "micro: exactly 1."),
    "TP-MICRO-FRAME-FACTS": _s("ProblemFrame:knownFacts", "micro: at most 3."),
    "TP-MICRO-FRAME-CLARIFICATION": _s("ProblemFrame:clarification", "micro: required false."),
    "TP-MICRO-NO-FIX": _s(
        "QualityReview:decision", "micro: never proceed_to_fix (partial, remediate: standard path)."
    ),
    "TP-REVERIFY-KIND": _s(
        "QualityReview:reviewKind", "agent_3_evidence_reverify: evidence_reverify."
    ),
    "TP-REVERIFY-DECISION": _s(
        "QualityReview:decision", "agent_3_evidence_reverify: pass, partial or block."
    ),
    "TP-MICRO-REPORT-RECEIPT": _s(
        "UserReport:terminalStatus", "micro completed: receipt-01 verified the latest review."
    ),
    "TP-MICRO-REPORT-CITE": _s(
        "UserReport:findingRefs", "micro, not completed: the latest review."
    ),
}
"""Rule id → its statements, each on the schema location it constrains."""

GENERAL: Final[Mapping[str, str]] = {
    "REF-SAME-RUN": "names an artifact of this run",
    "REF-EXISTS": "that exists",
    "REF-LINKED-EVIDENCE": "in a run started with prior_run_id, also Evidence of that prior run",
    "REF-TYPED-TARGET": "of the type its field names",
    "REF-TRACE-EVENT": "a trace:// reference an existing event",
    "REF-SYSTEM": "artifact://system/ references only where the schema asks for one",
    "REF-REPO-SELECTED": "repo:// only for sources the ContextManifest selected",
    "REF-PERMISSION-NOT-EVIDENCE": "a permission_checked event is never evidence",
    "RUN-RESUME-LINEAGE": "source_refs cite the ClarificationRequest and its answer",
    "TP-RESERVED-ID": "ids contract-01, plan-01 and receipt-01 stay the controller's",
}
"""Rules true of every reference or of a tool argument: the prompt states them once, in
these words (a test checks that it does)."""

UNSTATED: Final[Mapping[str, str]] = {}
"""Rules no host-authored value can break, with the reason (none today)."""


@functools.cache
def field_statements(topology_rules: bool = True) -> dict[tuple[str, str], str]:
    """``(type, path)`` → the statements on that location, in registry order, as one text.

    Ordered by the registry so that a location's sentences read in the order the rules run.
    ``topology_rules=False`` leaves out the ``TP-*`` rules, which only a run that asked for a
    topology meets (docs/protocol.md §3.7): a draft of a 1.0 run never meets them. Cached and
    shared: callers must not change it.
    """
    from telic.controller._rules import rule_ids  # the registry imports the rule modules

    merged: dict[tuple[str, str], list[str]] = {}
    for rule_id in rule_ids():
        if not topology_rules and rule_id.startswith("TP-"):
            continue
        for statement in STATEMENTS.get(rule_id, ()):
            kind, _, path = statement.at.partition(":")
            merged.setdefault((kind, path), []).append(statement.text)
    return {where: " ".join(texts) for where, texts in merged.items()}


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
    role = name.removesuffix("-v1")
    for variant in ("-micro", "-spot", "-reverify"):  # a topology's variant (§3.7)
        role = role.removesuffix(variant)
    role = role.replace("-", "_")
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
