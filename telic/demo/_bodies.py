"""Artifact bodies a scripted host writes: the demo's and the examples' stand-in for a model.

Each method returns one camelCase wire body that satisfies its schema and, used in the order of
``telic.demo._host``, the controller's cross-artifact invariants. Nothing here decides anything:
the controller still checks every body exactly as it checks a real host's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_origin

from pydantic import BaseModel

from telic.controller import PROMPT_COVERAGE
from telic.permissions import MUTATING_REPOSITORY
from telic.protocol import ARTIFACT_MODELS, DimensionScores, WorkNode

JSON = dict[str, Any]


def _bounds() -> JSON:
    """The scope, constraints and non-goals the frame states and the contract copies (fresh
    lists each time: a caller may edit a body it was handed)."""
    return {
        "scope": {"include": ["src"], "exclude": ["tests"]},
        "constraints": ["Stay inside src/", "Do not edit the tests"],
        "nonGoals": ["Refactoring unrelated code"],
    }


def permissions(read: Sequence[str] = (), write: Sequence[str] = (), *, children: int = 0) -> JSON:
    """A PermissionSet with repository scopes and, when ``children`` > 0, subagent casting."""
    return {
        "repository": {"read": list(read), "write": list(write), "delete": []},
        "shell": {"inspect": False, "executeAllowlist": []},
        "runtime": {"inspect": [], "restart": []},
        "browser": {"inspect": False, "mutateState": False},
        "network": {"readDomains": [], "externalWrite": False},
        "subagents": {
            "spawn": children > 0,
            "maximumChildren": children,
            "maximumDepth": 1 if children else 0,
        },
    }


def _empty_lists(model: type[BaseModel]) -> JSON:
    """Each list field of ``model``, empty: what a body leaves empty, it need not name."""
    fields = model.model_fields.values()
    return {str(f.alias): [] for f in fields if get_origin(f.annotation) is list}


def criterion(cid: str, stage: str, requirement: str) -> JSON:
    """An acceptance criterion of ``stage`` (diagnosis or completion)."""
    return {"id": cid, "stage": stage, "requirement": requirement, "evidenceRequired": ["test"]}


def verification(vid: str, stage: str, description: str) -> JSON:
    """A required repository.read verification of ``stage``."""
    return {
        "id": vid,
        "stage": stage,
        "description": description,
        "required": True,
        "capability": "repository.read",
        "fallback": None,
    }


@dataclass
class Bodies:
    """Writes the bodies of one run; ``request_id`` is the id of the run's UserMessage."""

    run_id: str
    mode: str
    request_id: str
    goal: str
    criteria: list[JSON] = field(default_factory=list)
    verifications: list[JSON] = field(default_factory=list)
    permissions: JSON = field(default_factory=permissions)

    def uri(self, artifact_id: str) -> str:
        """The artifact URI of ``artifact_id`` in this run."""
        return f"artifact://{self.run_id}/{artifact_id}"

    @property
    def request(self) -> str:
        """The URI of the original request."""
        return self.uri(self.request_id)

    def _base(self, artifact_type: str, artifact_id: str) -> JSON:
        """The fields every body of ``artifact_type`` begins with: its ids, and each list field
        of its schema empty (a body's own fields replace them)."""
        ids = {"schemaVersion": "1.0", "id": artifact_id, "runId": self.run_id}
        return ids | _empty_lists(ARTIFACT_MODELS[artifact_type])

    def frame(self, fid: str = "frame-1") -> JSON:
        """Agent 1's ProblemFrame."""
        return self._base("ProblemFrame", fid) | {
            "originalRequestRef": self.request,
            "intentMode": self.mode,
            "goal": self.goal,
            "knownFacts": [
                {
                    "id": "F-1",
                    "claim": "The user described the problem in the original request",
                    "provenance": "user",
                    "sourceRef": self.request,
                }
            ],
            **_bounds(),
            "draftAcceptanceCriteria": self.criteria,
            "clarification": {"required": False, "reason": None},
            "rationaleSummary": "Framed from the user's request.",
        }

    def contract(self, cid: str = "contract-1", frame: str = "frame-1") -> JSON:
        """Agent 2's TaskContract, copying the frame."""
        return self._base("TaskContract", cid) | {
            "version": 1,
            "originalRequestRef": self.request,
            "problemFrameRef": self.uri(frame),
            "intentMode": self.mode,
            "objective": self.goal,
            **_bounds(),
            "permissions": self.permissions,
            "acceptanceCriteria": self.criteria,
            "verificationRequirements": self.verifications,
            "stopConditions": ["Stop if the fix needs changes outside src/"],
            "rationaleSummary": "Compiled from the frame.",
        }

    def prompt_review(
        self, rid: str = "review-1", contract: str = "contract-1", frame: str = "frame-1"
    ) -> JSON:
        """Agent 1's passing PromptReview of the contract."""
        sources = {
            "request": self.request,
            "frame": self.uri(frame),
            "contract": self.uri(contract),
        }
        return self._base("PromptReview", rid) | {
            "targetRef": self.uri(contract),
            "rubricId": "contract-readiness-v1",
            "revisionNumber": 0,
            "coverage": [
                {"sourceRef": sources[name], "contractFields": list(fields), "status": "covered"}
                for name, fields in PROMPT_COVERAGE
            ],
            "dimensionScores": {str(f.alias): 90 for f in DimensionScores.model_fields.values()},
            "overallScore": 90,
            "hardGates": [
                {
                    "id": "G-1",
                    "passed": True,
                    "description": "The contract keeps the user's intent",
                    "evidenceRefs": [self.request],
                    "rationaleSummary": "Objective matches the request.",
                }
            ],
            "decision": "pass",
            "rationaleSummary": "Ready to plan.",
        }

    def node(
        self,
        nid: str,
        criteria: Sequence[str],
        tools: Sequence[str],
        node_permissions: JSON,
        *,
        calls: int = 5,
        children: int = 0,
        input_refs: Sequence[str] = (),
        extra_tools: Sequence[str] = (),
    ) -> JSON:
        """A WorkNode requiring ``tools`` (and allowing ``extra_tools`` too)."""
        return _empty_lists(WorkNode) | {
            "id": nid,
            "logicalRole": "executor",
            "objective": f"Carry out {nid}",
            "inputRefs": list(input_refs),
            "allowedTools": [*tools, *extra_tools],
            "requiredCapabilities": list(tools),
            "permissions": node_permissions,
            "outputType": "WorkResult",
            "acceptanceCriteria": list(criteria),
            "budgets": {"maximumToolCalls": calls, "maximumChildren": children},
        }

    def plan(
        self, pid: str, nodes: Sequence[JSON], *, depth: int = 0, contract: str = "contract-1"
    ) -> JSON:
        """A serial WorkPlan whose tool budget is the sum of its nodes'."""
        return self._base("WorkPlan", pid) | {
            "taskContractRef": self.uri(contract),
            "executionMode": "serial",
            "nodes": list(nodes),
            "globalBudgets": {
                "maximumToolCalls": sum(n["budgets"]["maximumToolCalls"] for n in nodes),
                "maximumParallelWorkers": 1,
                "maximumSubagentDepth": depth,
            },
            "planValidation": "valid",
            "rationaleSummary": "One serial node per step.",
        }

    def evidence(self, eid: str, kind: str, summary: str, content: str) -> JSON:
        """An Evidence capture of real content."""
        return self._base("Evidence", eid) | {
            "kind": kind,
            "capturedAt": "2026-01-01T00:00:00.000Z",
            "summary": summary,
            "contentType": "text/plain",
            "encoding": "utf8",
            "content": content,
            "rationaleSummary": "Captured verbatim.",
        }

    def action(
        self, aid: str, capability: str, target: str, evidence: Sequence[str], note: str = "Done."
    ) -> JSON:
        """A completed WorkAction; mutating exactly when it writes."""
        return {
            "id": aid,
            "capability": capability,
            "target": target,
            "mutating": capability in MUTATING_REPOSITORY,
            "status": "completed",
            "evidenceRefs": [self.uri(e) for e in evidence],
            "rationaleSummary": note,
        }

    def result(
        self,
        wid: str,
        plan: str,
        node: str,
        *,
        actions: Sequence[JSON],
        evidence: Sequence[str],
        criteria: Sequence[str],
        files: Sequence[JSON] = (),
        note: str = "Executed as planned.",
    ) -> JSON:
        """A completed WorkResult covering ``criteria`` with ``evidence``."""
        refs = [self.uri(e) for e in evidence]
        return self._base("WorkResult", wid) | {
            "workPlanRef": self.uri(plan),
            "nodeId": node,
            "status": "completed",
            "actions": list(actions),
            "filesChanged": list(files),
            "evidenceRefs": refs,
            "acceptanceCoverage": [
                {"criterionId": c, "status": "pass", "evidenceRefs": refs, "rationaleSummary": note}
                for c in criteria
            ],
            "rationaleSummary": note,
        }

    def diagnosis_gate(
        self, evidence: str, capabilities: Sequence[str], permissions: JSON, rationale: str
    ) -> JSON:
        """The demo bug's diagnosis gate: supported by ``evidence``, with the one-line correction
        work order (``capabilities`` and ``permissions``) a fix plan must then follow."""
        return {
            "id": "GATE-1",
            "status": "supported",
            "rootCause": "paginate treats its 1-based page number as 0-based",
            "directEvidenceRefs": [self.uri(evidence)],
            "correctionWorkOrder": {
                "id": "CWO-1",
                "targetCriterionIds": ["AC-2"],
                "objective": "Compute the start index from a 1-based page",
                "allowedCapabilities": list(capabilities),
                "permissions": permissions,
                "sourceRefs": [self.uri(evidence)],
                "maximumToolCalls": 20,
                "rationaleSummary": "A one-line fix inside src/.",
            },
            "withinApprovedScope": True,
            "permissionsSufficient": True,
            "rationaleSummary": rationale,
        }

    def quality_review(
        self,
        qid: str,
        plan: str,
        results: Sequence[str],
        decision: str,
        acceptance: Sequence[tuple[str, Sequence[str]]],
        checks: Sequence[tuple[str, Sequence[str]]],
        *,
        gate: JSON | None = None,
        remaining: int = 1,
    ) -> JSON:
        """A QualityReview; ``acceptance`` and ``checks`` pair ids with their evidence ids."""
        by_id = {v["id"]: v for v in self.verifications}
        return self._base("QualityReview", qid) | {
            "taskContractRef": self.uri("contract-1"),
            "workPlanRefs": [self.uri(plan)],
            "workResultRefs": [self.uri(r) for r in results],
            "rubricId": "execution-quality-v1",
            "acceptanceResults": [
                {
                    "criterionId": c,
                    "status": "pass",
                    "evidenceRefs": [self.uri(e) for e in ev],
                    "rationaleSummary": "Met, with direct evidence.",
                }
                for c, ev in acceptance
            ],
            "verificationResults": [
                {
                    "requirementId": v,
                    "capability": by_id[v]["capability"],
                    "status": "pass",
                    "evidenceRefs": [self.uri(e) for e in ev],
                    "rationaleSummary": "Verified.",
                }
                for v, ev in checks
            ],
            "hardGates": [
                {
                    "id": "QG-1",
                    "passed": True,
                    "description": "Every claim rests on captured evidence",
                    "evidenceRefs": [self.uri(acceptance[0][1][0])],
                    "rationaleSummary": "Direct evidence only.",
                }
            ],
            "score": 90,
            "remainingRemediations": remaining,
            "decision": decision,
            "diagnosisGate": gate,
            "remediationWorkOrder": None,
            "rationaleSummary": "Reviewed against the contract.",
        }

    def audit(
        self,
        qr: str,
        plans: Sequence[str],
        results: Sequence[str],
        evidence: Sequence[str],
        claim: str,
        *,
        report: str = "report-1",
    ) -> JSON:
        """A releasing ReleaseAudit with one supported claim over every criterion."""
        refs = [self.uri(e) for e in evidence]
        return self._base("ReleaseAudit", "audit-1") | {
            "originalRequestRef": self.request,
            "taskContractRef": self.uri("contract-1"),
            "workPlanRefs": [self.uri(p) for p in plans],
            "workResultRefs": [self.uri(r) for r in results],
            "qualityReviewRef": self.uri(qr),
            "userFidelity": [
                {
                    "id": "UF-1",
                    "subjectRef": self.request,
                    "description": "The outcome matches what the user asked",
                    "status": "pass",
                    "evidenceRefs": refs,
                    "rationaleSummary": "Faithful to the request.",
                }
            ],
            "modeCompliance": "pass",
            "claimEvidenceMatrix": [
                {
                    "claimId": "CL-1",
                    "claim": claim,
                    "criterionIds": [c["id"] for c in self.criteria],
                    "basis": "direct",
                    "status": "supported",
                    "evidenceRefs": refs,
                    "rationaleSummary": "Shown by the evidence.",
                }
            ],
            "remainingRemediations": 1,
            "decision": "release",
            "remediationDefect": None,
            "userReportRef": self.uri(report),
            "rationaleSummary": "Released.",
        }

    def report(
        self,
        summary: str,
        claim: str,
        evidence: Sequence[str],
        *,
        changes: Sequence[str] = (),
        verifications: Sequence[str] = (),
        rid: str = "report-1",
    ) -> JSON:
        """A completed UserReport restating the audit's claim."""
        return self._base("UserReport", rid) | {
            "terminalStatus": "completed",
            "summary": summary,
            "completionClaims": [
                {
                    "id": "CL-1",
                    "text": claim,
                    "status": "observed",
                    "evidenceRefs": [self.uri(e) for e in evidence],
                    "confidence": 1,
                }
            ],
            "changeRefs": [self.uri(c) for c in changes],
            "verificationRefs": [self.uri(v) for v in verifications],
            "permissionsHonored": True,
            "traceRef": f"trace://{self.run_id}",
            "rationaleSummary": "Reported from the audit.",
        }
