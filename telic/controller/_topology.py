"""Run topologies on request (beyond Telic 1.0; docs/protocol.md §3.7), purely.

A host may ask ``telic_start_run`` for a topology: ``micro`` (frame → spot review → report,
with a controller-made contract and plan), ``standard`` (the 1.0 path) or ``forensic`` (the
1.0 path plus a second, evidence re-verifying review). ``classify`` applies the original
Telic's classification rules to decide whether the request fits the topology asked for; a run
that asks for nothing is never classified and follows 1.0 exactly. ``bootstrap`` builds the
micro companions stored with the frame, ``certify`` the receipt stored with a run's first
passing review, and ``pre_escalation`` names the submissions that move a run up a topology.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from telic._errors import Issue, RuleViolation
from telic.controller._derive import frame_context_refs
from telic.controller._phases import MAY_MUTATE
from telic.controller._state import RunState, StoredArtifact, artifact_uri, stored_artifact
from telic.ledger import CanonicalBody
from telic.protocol import (
    Mode,
    ProblemFrame,
    QualityReview,
    ReleaseAudit,
    Topology,
    UserReport,
    parse_artifact,
)

MAX_ESCALATIONS: Final = 2
"""How many times one run's topology may escalate (micro → standard → forensic)."""
BOOTSTRAP_CONTRACT: Final = "contract-01"
BOOTSTRAP_PLAN: Final = "plan-01"
RECEIPT: Final = "receipt-01"
MICRO_NODE: Final = "micro-execute"
MICRO_TEXT_UNITS: Final = 200
MICRO_LINES: Final = 5
LONG_TEXT_UNITS: Final = 512
LONG_LINES: Final = 12

# ASCII word boundaries and classes, as the original's JavaScript regular expressions have.
_COMPLEXITY: Final = re.compile(
    r"\b(refactor|migrate|architecture|security audit|across codebase|across the codebase|"
    r"multifile|multi-file)\b",
    re.IGNORECASE | re.ASCII,
)
_DIVERGENCE: Final = re.compile(
    r"\b(either|or both|unclear|not sure|choose between)\b", re.IGNORECASE | re.ASCII
)
_FILE_PATH: Final = re.compile(
    r"\b(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+\.(?:ts|tsx|js|jsx|md|json|css|html|py|rs|go)\b",
    re.IGNORECASE | re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Classification:
    """A run's topology at start, the rationale code traced with it, and every signal seen."""

    topology: Topology
    rationale: str
    signals: tuple[str, ...]


def _units(text: str) -> int:
    """Length in UTF-16 code units, as the original counts a JavaScript string."""
    return len(text.encode("utf-16-le")) // 2


def _forensic_signals(
    text: str,
    mode: Mode,
    granted: Sequence[str],
    shell_execute_allowlist: Sequence[str],
    network_read_domains: Sequence[str],
) -> list[str]:
    signals = []
    if mode == "analyze_and_fix":
        signals.append("ANALYZE_AND_FIX")
    if any(capability in MAY_MUTATE for capability in granted):
        signals.append("ELEVATED_CAPABILITY")
    if network_read_domains:
        signals.append("NETWORK_READ")
    if shell_execute_allowlist:
        signals.append("SHELL_EXECUTE_ALLOWLIST")
    if _units(text) > LONG_TEXT_UNITS or len(text.split("\n")) > LONG_LINES:
        signals.append("LONG_REQUEST")
    if _COMPLEXITY.search(text):
        signals.append("COMPLEXITY_KEYWORD")
    return sorted(signals)


def _refused(rule: str, message: str, expected: object) -> RuleViolation:
    issue = Issue("topology_override", rule.lower(), message, rule=rule, expected=expected)
    return RuleViolation(message, issues=(issue,))


def classify(
    *,
    request: str,
    mode: Mode,
    granted: Sequence[str],
    shell_execute_allowlist: Sequence[str],
    network_read_domains: Sequence[str],
    override: Topology | None,
) -> Classification:
    """Classify a run as the original Telic does (docs/protocol.md §3.7 "Classification").

    With ``override`` None this is the original's automatic classification; ``open_run`` only
    calls it with the topology the host asked for.

    Raises:
        RuleViolation: ``micro`` asked for a request that is not a short read-only question
            (``TP-OVERRIDE-MICRO``), or ``standard`` for one with forensic signals
            (``TP-OVERRIDE-STANDARD``); ``expected`` names the topology that would pass.
    """
    text = request.strip()
    forensic = _forensic_signals(text, mode, granted, shell_execute_allowlist, network_read_domains)
    # micro fits a short, unambiguous request: a read-only report, or a fix naming its file
    plain = (
        _units(text) <= MICRO_TEXT_UNITS
        and len(text.split("\n")) <= MICRO_LINES
        and not _DIVERGENCE.search(text)
    )
    report = plain and mode == "report_only" and set(granted) <= {"repository.read"}
    fix = (
        plain
        and mode == "fix_only"
        and not _COMPLEXITY.search(text)
        and set(granted) == {"repository.read", "repository.write"}
        and _FILE_PATH.search(text) is not None
    )
    if override == "micro":
        if forensic or not (fix or report):
            raise _refused(
                "TP-OVERRIDE-MICRO",
                "topologyOverride micro is incompatible with the current request signals "
                "(micro fits a report_only question of at most 200 characters and 5 lines, "
                "granted repository.read at most, with no forensic signal"
                + (f": {', '.join(forensic)}" if forensic else "")
                + ")",
                "forensic" if forensic else "standard",
            )
        code = "MICRO_SHORT_FIX_ONLY" if fix else "MICRO_SHORT_REPORT_ONLY"
        return Classification("micro", code, (code,))
    if override == "standard":
        if forensic:
            raise _refused(
                "TP-OVERRIDE-STANDARD",
                "topologyOverride standard is incompatible with forensic classification "
                f"signals ({', '.join(forensic)})",
                "forensic",
            )
        return Classification("standard", "OVERRIDE_STANDARD", ("OVERRIDE_STANDARD",))
    if override == "forensic":
        signals = tuple(sorted(("OVERRIDE_FORENSIC", *forensic)))
        return Classification("forensic", "OVERRIDE_FORENSIC", signals)
    if fix:
        return Classification("micro", "MICRO_SHORT_FIX_ONLY", ("MICRO_SHORT_FIX_ONLY",))
    if forensic:
        return Classification("forensic", forensic[0], tuple(forensic))
    inspect = {"runtime.inspect", "browser.inspect", "shell.inspect"}
    if mode == "analyze_only" and inspect & set(granted):
        return Classification("standard", "INVESTIGATIVE_MODE", ("INVESTIGATIVE_MODE",))
    if mode == "plan_only":
        return Classification("standard", "PLAN_ONLY", ("PLAN_ONLY",))
    if mode == "fix_only":
        return Classification("standard", "FIX_ONLY", ("FIX_ONLY",))
    if report:
        return Classification("micro", "MICRO_SHORT_REPORT_ONLY", ("MICRO_SHORT_REPORT_ONLY",))
    return Classification("standard", "DEFAULT_STANDARD", ("DEFAULT_STANDARD",))


def asked_topology(state: RunState) -> Topology | None:
    """The topology the run asked for at start, or None for a run that follows 1.0."""
    return state.envelope.topology


def reserved_ids(state: RunState) -> frozenset[str]:
    """Artifact ids the controller will still need in this run (a host may not take them)."""
    if asked_topology(state) is None:
        return frozenset()
    reserved = set()
    if state.run.topology == "micro" and state.latest("ProblemFrame") is None:
        reserved |= {BOOTSTRAP_CONTRACT, BOOTSTRAP_PLAN}
    if state.run.topology != "forensic" and state.by_id(RECEIPT) is None:
        reserved.add(RECEIPT)
    return frozenset(reserved)


def _companion(
    state: RunState,
    kind: str,
    artifact_id: str,
    producer: str,
    fields: dict[str, Any],
    source_refs: tuple[str, ...],
    now: str,
) -> StoredArtifact:
    run_id = state.run.run_id
    wire = {"schemaVersion": "1.0", "id": artifact_id, "runId": run_id, **fields}
    body = parse_artifact(kind, wire)  # schema-checked like any artifact
    return stored_artifact(run_id, kind, body, producer, source_refs, now)


def serial_plan(contract_ref: str, node: dict[str, Any], rationale: str) -> dict[str, Any]:
    """Return the wire fields of a serial WorkPlan of ``node`` alone, whose tool-call budget is
    the plan's, without the artifact's id."""
    return {
        "taskContractRef": contract_ref,
        "executionMode": "serial",
        "nodes": [node],
        "joinRules": [],
        "globalBudgets": {
            "maximumToolCalls": node["budgets"]["maximumToolCalls"],
            "maximumParallelWorkers": 1,
            "maximumSubagentDepth": 0,
        },
        "planValidation": "valid",
        "rationaleSummary": rationale,
    }


def bootstrap(
    state: RunState, frame: StoredArtifact, now: str
) -> tuple[StoredArtifact, StoredArtifact]:
    """The micro contract ``contract-01`` and plan ``plan-01`` stored with an accepted frame."""
    run = state.run
    body: ProblemFrame = frame.body
    envelope = state.envelope
    manifest = state.latest("ContextManifest")
    grounded = () if manifest is None else (manifest.uri,)
    context_refs = list(dict.fromkeys((*frame_context_refs(frame), *grounded)))
    granted = envelope.authorization.granted.model_dump(mode="json", by_alias=True)
    executes = run.requested_mode in ("fix_only", "analyze_only")
    contract_uri = artifact_uri(run.run_id, BOOTSTRAP_CONTRACT)
    contract = {
        "version": 1,
        "originalRequestRef": envelope.original_request_ref,
        "problemFrameRef": frame.uri,
        "intentMode": run.requested_mode,
        "objective": body.goal,
        "scope": body.scope.model_dump(mode="json", by_alias=True),
        "constraints": list(body.constraints),
        "nonGoals": list(body.non_goals),
        "contextRefs": context_refs,
        "ruleRefs": list(body.applicable_rule_refs),
        "permissions": granted,
        "acceptanceCriteria": [
            c.model_dump(mode="json", by_alias=True) for c in body.draft_acceptance_criteria
        ],
        "requiredOutputs": [
            "Evidence-backed work result" if executes else "Evidence-backed answer"
        ],
        "verificationRequirements": [
            {
                "id": "VR-MICRO",
                "stage": "completion",
                "description": "Capture repository evidence for the micro change.",
                "required": True,
                "capability": "repository.read",
                "fallback": "Stop when the repository evidence cannot be captured.",
            }
        ]
        if executes
        else [],
        "stopConditions": ["Stop within the micro topology scope."],
        "assumptions": [],
        "unresolvedQuestions": [],
        "rationaleSummary": "Controller bootstrap contract for micro topology execution.",
    }
    sources = (frame.uri, *(() if manifest is None else (manifest.uri,)))
    stored_contract = _companion(
        state, "TaskContract", BOOTSTRAP_CONTRACT, "task_compiler", contract, sources, now
    )
    tools = (
        ["repository.read", "repository.write"]
        if run.requested_mode == "fix_only"
        else ["repository.read"]
    )
    calls = (
        0
        if run.requested_mode in ("report_only", "plan_only")
        else 8
        if run.requested_mode == "fix_only"
        else 32
    )
    node = {
        "id": MICRO_NODE,
        "logicalRole": "executor",
        "objective": body.goal,
        "dependsOn": [],
        "inputRefs": [contract_uri],
        "contextRefs": context_refs,
        "allowedTools": tools,
        "requiredCapabilities": tools,
        "permissions": granted,
        "outputType": "WorkResult",
        "acceptanceCriteria": [c.id for c in body.draft_acceptance_criteria],
        "stopConditions": ["Stop within the micro topology scope."],
        "budgets": {"maximumToolCalls": calls, "maximumChildren": 0},
    }
    plan = serial_plan(contract_uri, node, "Controller bootstrap serial plan for micro topology.")
    stored_plan = _companion(
        state, "WorkPlan", BOOTSTRAP_PLAN, "quality_controller", plan, (contract_uri,), now
    )
    return stored_contract, stored_plan


_ARTIFACT_ID: Final = re.compile(r"^artifact://([^/]+)/([A-Za-z0-9._-]+)$")


def certify(
    state: RunState, review: StoredArtifact, now: str
) -> tuple[StoredArtifact, tuple[str, ...]]:
    """The receipt of a passing review: every reference it cites, read back and re-hashed.

    ``state`` is the run before the review; returns the ``receipt-01`` artifact and the
    references that verified (empty when the receipt failed), in the order first cited.
    """
    body: QualityReview = review.body
    checks: tuple[Any, ...] = (  # every check that cites evidence, in the review's order
        *body.acceptance_results,
        *body.verification_results,
        *body.hard_gates,
        *body.rule_compliance,
        *body.regression_checks,
    )
    refs = list(dict.fromkeys(ref for check in checks for ref in check.evidence_refs))
    verified = {ref for ref in refs if _verifies(state, ref)}
    matrix = [
        {
            "claimId": f"claim-{result.criterion_id}",
            "claim": f"Criterion {result.criterion_id} spot-check claim",
            "criterionIds": [result.criterion_id],
            "basis": "direct",
            "status": "supported"
            if result.status == "pass" and all(ref in verified for ref in result.evidence_refs)
            else "unverified",
            "evidenceRefs": list(result.evidence_refs),
            "rationaleSummary": result.rationale_summary,
        }
        for result in body.acceptance_results
    ]
    ok = len(verified) == len(refs) and all(entry["status"] == "supported" for entry in matrix)
    receipt = {
        "controllingReviewRef": review.uri,
        "claimEvidenceMatrix": matrix,
        "digestStatus": "verified" if ok else "failed",
        "verifiedAt": now,
    }
    stored = _companion(state, "ReceiptAudit", RECEIPT, "controller", receipt, (review.uri,), now)
    return stored, tuple(ref for ref in refs if ref in verified) if ok else ()


def _verifies(state: RunState, ref: str) -> bool:
    match = _ARTIFACT_ID.match(ref)
    if match is None or match.group(1) != state.run.run_id:
        return False
    artifact = state.by_id(match.group(2))
    if artifact is None:
        return False
    # The state's bodies were read back through the ledger, which re-verified each blob.
    return CanonicalBody(artifact.wire).sha256 == artifact.sha256


def receipt_gap(state: RunState) -> str | None:
    """Return what a completed micro report lacks: a verified receipt of the latest
    QualityReview; None when the run has one (TP-MICRO-REPORT-RECEIPT)."""
    receipt, review = state.by_id(RECEIPT), state.latest("QualityReview")
    if receipt is None or receipt.type != "ReceiptAudit":
        return "Completed micro UserReport requires a ReceiptAudit companion"
    if receipt.body.digest_status != "verified":
        return "Completed micro UserReport requires a verified ReceiptAudit"
    if review is None or receipt.body.controlling_review_ref != review.uri:
        return "ReceiptAudit must cite the controlling QualityReview"
    return None


def receipt_summary(refs: Sequence[str]) -> str:
    """The ``digest_verified`` summary: ``sha256:`` over the sorted references joined by ``|``."""
    joined = "|".join(sorted(refs)).encode("utf-8")
    return "sha256:" + hashlib.sha256(joined).hexdigest()


def pre_escalation(state: RunState, body: object) -> tuple[Topology, str] | None:
    """The topology a refused-and-escalated submission moves the run to, and the reason code.

    A micro UserReport with a ``user_reported`` claim moves the run to standard; a standard
    ReleaseAudit with a ``user_reported`` claim basis moves it to forensic. Only in a run that
    asked for a topology.
    """
    if asked_topology(state) is None:
        return None
    topology = state.run.topology
    if topology == "micro" and isinstance(body, UserReport):
        claims = [claim.status for claim in body.completion_claims]
        return ("standard", "MICRO_USER_REPORTED") if "user_reported" in claims else None
    if topology == "standard" and isinstance(body, ReleaseAudit):
        bases = [entry.basis for entry in body.claim_evidence_matrix]
        return ("forensic", "STANDARD_USER_REPORTED_CLAIMS") if "user_reported" in bases else None
    return None
