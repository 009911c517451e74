"""Small builders of artifact bodies (wire form) and a ``Flow`` that drives one run.

Every builder returns a camelCase JSON body that satisfies the schema and, with the defaults, the
controller's invariants for a straightforward run; keyword arguments bend one thing at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from telic.controller import Controller, StartRequest, StepResult
from telic.ledger import Ledger
from telic.protocol._context import ContextDocument, ContextManifest

JSON = dict[str, Any]
SHA = "sha256:" + "a" * 64
SHA_B = "sha256:" + "b" * 64
ROOT = "/repo"
ALL_GRANTS = (
    "repository.read",
    "repository.write",
    "shell.inspect",
    "runtime.inspect",
    "browser.inspect",
)


def clock_from(start: int = 0) -> Callable[[], str]:
    """Return a clock ticking one second per call from 2026-01-01T00:00:00.000Z."""
    counter = itertools.count(start)

    def now() -> str:
        tick = next(counter)
        return f"2026-01-01T{tick // 3600 % 24:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}.000Z"

    return now


def ids_from(prefix: str = "id") -> Callable[[], str]:
    """Return an id generator ``<prefix>-0001``, ``<prefix>-0002``…"""
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter):04d}"


def perms(
    read: Sequence[str] = (),
    write: Sequence[str] = (),
    shell_inspect: bool = False,
) -> JSON:
    """A PermissionSet wire body with the given repository scopes."""
    return {
        "repository": {"read": list(read), "write": list(write), "delete": []},
        "shell": {"inspect": shell_inspect, "executeAllowlist": []},
        "runtime": {"inspect": [], "restart": []},
        "browser": {"inspect": False, "mutateState": False},
        "network": {"readDomains": [], "externalWrite": False},
        "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0},
    }


READ = perms(read=["**"])
FIX = perms(read=["**"], write=["src/**"])


def grounding(run_id: str, documents: int = 0) -> tuple[ContextManifest, list[ContextDocument]]:
    """A canonical manifest with ``documents`` selected files and their ContextDocuments."""
    docs = [
        ContextDocument.from_wire(
            {
                "schemaVersion": "1.0",
                "id": f"ctx-source-{n:03d}",
                "runId": run_id,
                "repositoryRef": f"repo://src/file{n}.py",
                "contentHash": SHA,
                "sizeBytes": 4,
                "trustKind": "untrusted_repository_content",
                "instructionScope": ".",
                "content": "pass",
            }
        )
        for n in range(documents)
    ]
    candidates = [
        {
            "id": f"candidate-{n + 1:04d}",
            "ref": f"repo://src/file{n}.py",
            "locations": [],
            "contentHash": SHA,
            "byteSize": 4,
            "decision": "selected",
            "selectionReason": "matches the request",
            "path": f"src/file{n}.py",
            "score": 100,
            "pinned": False,
        }
        for n in range(documents)
    ]
    manifest = ContextManifest.from_wire(
        {
            "schemaVersion": "1.0",
            "id": f"context-{run_id[-8:]}",
            "runId": run_id,
            "repositoryFingerprint": {"headCommit": None, "dirtyWorktreeHash": SHA},
            "pinnedRefs": [],
            "candidates": candidates,
            "derivedRefs": [f"artifact://{run_id}/{d.id}" for d in docs],
            "excludedCandidateSummaries": [],
            "inventorySource": "filesystem",
            "warnings": [],
            "budget": {
                "maximumFiles": 256,
                "maximumFileBytes": 131072,
                "maximumTotalBytes": 16_777_216,
                "maximumInventoryFiles": 20000,
                "candidateFiles": documents,
                "selectedFiles": documents,
                "estimatedTokens": documents,
                "selectedBytes": 4 * documents,
            },
        }
    )
    return manifest, docs


def criterion(cid: str, stage: str = "completion") -> JSON:
    """An acceptance criterion."""
    return {"id": cid, "stage": stage, "requirement": f"{cid} holds", "evidenceRequired": ["test"]}


@dataclass
class Run:
    """What builders need to know about the run they write for."""

    run_id: str
    mode: str
    criteria: list[JSON] = field(default_factory=lambda: [criterion("AC-1")])
    verifications: list[JSON] = field(default_factory=list)
    permissions: JSON = field(default_factory=lambda: perms())

    def uri(self, artifact_id: str) -> str:
        """The artifact URI of ``artifact_id`` in this run."""
        return f"artifact://{self.run_id}/{artifact_id}"

    @property
    def request(self) -> str:
        """URI of the original request (the first id the generator minted after the run id)."""
        return self.uri(self._request_id)

    _request_id: str = ""

    def base(self, artifact_id: str) -> JSON:
        """The id/runId/schemaVersion header of a body."""
        return {"schemaVersion": "1.0", "id": artifact_id, "runId": self.run_id}

    # --------------------------------------------------------------- framing

    def frame(self, fid: str = "frame-1", **over: Any) -> JSON:
        """A ProblemFrame in the run's mode with the run's criteria."""
        return (
            self.base(fid)
            | {
                "originalRequestRef": self.request,
                "intentMode": self.mode,
                "goal": "Do what the user asked",
                "knownFacts": [
                    {
                        "id": "F-1",
                        "claim": "The user asked",
                        "provenance": "user",
                        "sourceRef": self.request,
                    }
                ],
                "inferences": [],
                "unknowns": [],
                "scope": {"include": ["src"], "exclude": []},
                "constraints": ["Stay in scope"],
                "nonGoals": [],
                "applicableRuleRefs": [],
                "draftAcceptanceCriteria": self.criteria,
                "clarification": {"required": False, "reason": None},
                "rationaleSummary": "Framed from the request.",
            }
            | over
        )

    def contract(
        self, cid: str = "contract-1", frame: str = "frame-1", version: int = 1, **over: Any
    ) -> JSON:
        """A TaskContract copying the frame, with the run's permissions and verifications."""
        return (
            self.base(cid)
            | {
                "version": version,
                "originalRequestRef": self.request,
                "problemFrameRef": self.uri(frame),
                "intentMode": self.mode,
                "objective": "Do what the user asked",
                "scope": {"include": ["src"], "exclude": []},
                "constraints": ["Stay in scope"],
                "nonGoals": [],
                "contextRefs": [],
                "ruleRefs": [],
                "permissions": self.permissions,
                "acceptanceCriteria": self.criteria,
                "requiredOutputs": [],
                "verificationRequirements": self.verifications,
                "stopConditions": [],
                "assumptions": [],
                "unresolvedQuestions": [],
                "rationaleSummary": "Compiled from the frame.",
            }
            | over
        )

    def prompt_review(
        self,
        rid: str = "review-1",
        contract: str = "contract-1",
        decision: str = "pass",
        revision: int = 0,
        frame: str = "frame-1",
        **over: Any,
    ) -> JSON:
        """A PromptReview of ``contract``; revise/block carry one blocking finding."""
        findings = []
        if decision in ("revise", "block"):
            findings = [
                {
                    "id": "FIND-1",
                    "severity": "blocking",
                    "claim": "The objective is vague",
                    "sourceRefs": [self.uri(contract)],
                    "rubricDimension": None,
                    "requiredCorrection": "Sharpen the objective",
                    "preserveFields": [],
                    "correctionFields": ["objective"],
                    "rationaleSummary": "Vague objective.",
                }
            ]
        coverage_status = "covered" if decision == "pass" else "partial"
        return (
            self.base(rid)
            | {
                "targetRef": self.uri(contract),
                "rubricId": "contract-readiness-v1",
                "revisionNumber": revision,
                "coverage": [
                    {
                        "sourceRef": self.request,
                        "contractFields": ["objective", "intentMode"],
                        "status": coverage_status,
                    },
                    {
                        "sourceRef": self.uri(frame),
                        "contractFields": [
                            "scope",
                            "constraints",
                            "nonGoals",
                            "acceptanceCriteria",
                            "ruleRefs",
                        ],
                        "status": "covered",
                    },
                    {
                        "sourceRef": self.uri(contract),
                        "contractFields": [
                            "permissions",
                            "contextRefs",
                            "requiredOutputs",
                            "verificationRequirements",
                            "stopConditions",
                            "assumptions",
                            "unresolvedQuestions",
                        ],
                        "status": "covered",
                    },
                ],
                "dimensionScores": {
                    "intentFidelity": 90,
                    "repositoryGrounding": 90,
                    "constraintsAndPermissions": 90,
                    "testableAcceptance": 90,
                    "executionFeasibility": 90,
                    "contextEfficiency": 90,
                },
                "overallScore": 90,
                "hardGates": [
                    {
                        "id": "G-1",
                        "passed": True,
                        "description": "Intent kept",
                        "evidenceRefs": [self.request],
                        "rationaleSummary": "Kept.",
                    }
                ],
                "findings": findings,
                "decision": decision,
                "rationaleSummary": "Reviewed.",
            }
            | over
        )

    # --------------------------------------------------------------- planning and work

    def node(
        self,
        nid: str = "node-1",
        criteria: Sequence[str] = ("AC-1",),
        tools: Sequence[str] = (),
        permissions: JSON | None = None,
        calls: int = 5,
        depends_on: Sequence[str] = (),
        input_refs: Sequence[str] = (),
    ) -> JSON:
        """A WorkNode; by default it reads with the run's permissions."""
        return {
            "id": nid,
            "logicalRole": "executor",
            "objective": f"Do {nid}",
            "dependsOn": list(depends_on),
            "inputRefs": list(input_refs),
            "contextRefs": [],
            "allowedTools": list(tools),
            "requiredCapabilities": list(tools),
            "permissions": self.permissions if permissions is None else permissions,
            "outputType": "WorkResult",
            "acceptanceCriteria": list(criteria),
            "stopConditions": [],
            "budgets": {"maximumToolCalls": calls, "maximumChildren": 0},
        }

    def plan(
        self,
        pid: str = "plan-1",
        nodes: Sequence[JSON] | None = None,
        contract: str = "contract-1",
        budget: int | None = None,
    ) -> JSON:
        """A serial WorkPlan whose global budget is the sum of its nodes' budgets."""
        nodes = list(nodes) if nodes is not None else [self.node()]
        total = sum(n["budgets"]["maximumToolCalls"] for n in nodes)
        return self.base(pid) | {
            "taskContractRef": self.uri(contract),
            "executionMode": "serial",
            "nodes": nodes,
            "joinRules": [],
            "globalBudgets": {
                "maximumToolCalls": total if budget is None else budget,
                "maximumParallelWorkers": 1,
                "maximumSubagentDepth": 0,
            },
            "planValidation": "valid",
            "rationaleSummary": "Planned.",
        }

    def evidence(self, eid: str = "evidence-1", kind: str = "repository") -> JSON:
        """A small Evidence capture."""
        return self.base(eid) | {
            "kind": kind,
            "capturedAt": "2026-01-01T00:00:00.000Z",
            "summary": "Captured.",
            "contentType": "text/plain",
            "encoding": "utf8",
            "content": "ok",
            "sourceRefs": [],
            "redactions": [],
            "rationaleSummary": "Proof.",
        }

    def action(
        self, aid: str, capability: str, target: str, evidence: str, status: str = "completed"
    ) -> JSON:
        """A WorkAction with its mutating flag derived from the capability."""
        mutating = capability in ("repository.write", "repository.delete")
        return {
            "id": aid,
            "capability": capability,
            "target": target,
            "mutating": mutating,
            "status": status,
            "evidenceRefs": [self.uri(evidence)],
            "rationaleSummary": "Done.",
        }

    def result(
        self,
        wid: str = "result-1",
        plan: str = "plan-1",
        node: str = "node-1",
        status: str = "completed",
        evidence: str = "evidence-1",
        criteria: Sequence[str] = ("AC-1",),
        actions: Sequence[JSON] | None = None,
        files: Sequence[JSON] = (),
    ) -> JSON:
        """A WorkResult; by default one completed read of src/app.py."""
        passing = status == "completed"
        if actions is None:
            actions = [self.action("A-1", "repository.read", "src/app.py", evidence)]
        return self.base(wid) | {
            "workPlanRef": self.uri(plan),
            "nodeId": node,
            "status": status,
            "observations": [],
            "inferences": [],
            "actions": list(actions),
            "filesChanged": list(files),
            "toolEventRefs": [],
            "evidenceRefs": [self.uri(evidence)],
            "testResults": [],
            "acceptanceCoverage": [
                {
                    "criterionId": c,
                    "status": "pass" if passing else "fail",
                    "evidenceRefs": [self.uri(evidence)],
                    "rationaleSummary": "Checked.",
                }
                for c in criteria
            ],
            "unresolvedIssues": [] if passing else ["It did not work"],
            "deviations": [],
            "rationaleSummary": "Executed.",
        }

    # --------------------------------------------------------------- judgement

    def quality_review(
        self,
        qid: str = "qr-1",
        plan: str = "plan-1",
        results: Sequence[str] = ("result-1",),
        decision: str = "pass",
        evidence: str = "evidence-1",
        criteria: Sequence[str] = ("AC-1",),
        verifications: Sequence[str] = (),
        remaining: int = 1,
        contract: str = "contract-1",
        **over: Any,
    ) -> JSON:
        """A QualityReview of the given results."""
        ok = decision in ("pass", "proceed_to_fix")
        status = "pass" if ok else "fail"
        by_id = {v["id"]: v for v in self.verifications}
        return (
            self.base(qid)
            | {
                "taskContractRef": self.uri(contract),
                "workPlanRefs": [self.uri(plan)],
                "workResultRefs": [self.uri(r) for r in results],
                "rubricId": "execution-quality-v1",
                "acceptanceResults": [
                    {
                        "criterionId": c,
                        "status": status,
                        "evidenceRefs": [self.uri(evidence)],
                        "rationaleSummary": "Judged.",
                    }
                    for c in criteria
                ],
                "ruleCompliance": [],
                "regressionChecks": [],
                "verificationResults": [
                    {
                        "requirementId": v,
                        "capability": by_id[v]["capability"],
                        "status": "pass" if ok else "fail",
                        "evidenceRefs": [self.uri(evidence)],
                        "rationaleSummary": "Verified.",
                    }
                    for v in verifications
                ],
                "findings": [],
                "hardGates": [
                    {
                        "id": "QG-1",
                        "passed": True,
                        "description": "Evidence is direct",
                        "evidenceRefs": [self.uri(evidence)],
                        "rationaleSummary": "Direct.",
                    }
                ],
                "score": 90 if ok else 40,
                "remainingRemediations": remaining,
                "decision": decision,
                "diagnosisGate": None,
                "remediationWorkOrder": None,
                "rationaleSummary": "Reviewed.",
            }
            | over
        )

    def remediation(
        self,
        evidence: str = "evidence-1",
        criteria: Sequence[str] = ("AC-1",),
        permissions: JSON | None = None,
        tools: Sequence[str] = ("repository.read",),
        calls: int = 50,
    ) -> JSON:
        """A remediationWorkOrder."""
        return {
            "id": "RWO-1",
            "failedCriterionIds": list(criteria),
            "objective": "Try again",
            "allowedCapabilities": list(tools),
            "permissions": self.permissions if permissions is None else permissions,
            "sourceRefs": [self.uri(evidence)],
            "maximumToolCalls": calls,
            "rationaleSummary": "Remediate.",
        }

    def audit(
        self,
        aid: str = "audit-1",
        decision: str = "release",
        qr: str = "qr-1",
        plans: Sequence[str] = ("plan-1",),
        results: Sequence[str] = ("result-1",),
        report: str | None = "report-1",
        evidence: Sequence[str] = ("evidence-1",),
        remaining: int = 1,
        contract: str = "contract-1",
        **over: Any,
    ) -> JSON:
        """A ReleaseAudit; release claims every criterion as supported by ``evidence``."""
        release = decision == "release"
        return (
            self.base(aid)
            | {
                "originalRequestRef": self.request,
                "taskContractRef": self.uri(contract),
                "workPlanRefs": [self.uri(p) for p in plans],
                "workResultRefs": [self.uri(r) for r in results],
                "qualityReviewRef": self.uri(qr),
                "userFidelity": [
                    {
                        "id": "UF-1",
                        "subjectRef": self.request,
                        "description": "Matches the request",
                        "status": "pass" if release else "fail",
                        "evidenceRefs": [self.uri(e) for e in evidence],
                        "rationaleSummary": "Faithful.",
                    }
                ],
                "modeCompliance": "pass",
                "claimEvidenceMatrix": [
                    {
                        "claimId": "CL-1",
                        "claim": "The work is done",
                        "criterionIds": [c["id"] for c in self.criteria],
                        "basis": "direct",
                        "status": "supported" if release else "unsupported",
                        "evidenceRefs": [self.uri(e) for e in evidence],
                        "rationaleSummary": "Shown.",
                    }
                ],
                "unresolvedRisks": [] if release else ["Not everything was proven"],
                "findings": [],
                "remainingRemediations": remaining,
                "decision": decision,
                "remediationDefect": None,
                "userReportRef": None if report is None else self.uri(report),
                "rationaleSummary": "Audited.",
            }
            | over
        )

    def report(
        self,
        rid: str = "report-1",
        status: str = "completed",
        evidence: Sequence[str] = ("evidence-1",),
        findings: Sequence[str] = (),
        changes: Sequence[str] = (),
        verifications: Sequence[str] = (),
        honored: bool = True,
    ) -> JSON:
        """A UserReport; a completed one claims CL-1 with ``evidence``."""
        completed = status == "completed"
        return self.base(rid) | {
            "terminalStatus": status,
            "summary": "What happened.",
            "completionClaims": [
                {
                    "id": "CL-1",
                    "text": "The work is done",
                    "status": "observed",
                    "evidenceRefs": [self.uri(e) for e in evidence],
                    "confidence": 1,
                }
            ]
            if completed
            else [],
            "findingRefs": [self.uri(f) for f in findings],
            "changeRefs": [self.uri(c) for c in changes],
            "verificationRefs": [self.uri(v) for v in verifications],
            "unresolvedRisks": [] if completed else ["Not everything was proven"],
            "permissionsHonored": honored,
            "nextActions": [],
            "traceRef": f"trace://{self.run_id}",
            "rationaleSummary": "Reported.",
        }

    def clarification(self, cid: str = "clar-1", expanding: bool = False) -> JSON:
        """A ClarificationRequest offering resume and cancel (and new_run when ``expanding``)."""
        choices = [
            {
                "id": "keep",
                "label": "Keep going",
                "consequence": "The run resumes",
                "authorityEffect": "within_current_authority",
                "runEffect": "resume",
            },
            {
                "id": "stop",
                "label": "Stop",
                "consequence": "The run is cancelled",
                "authorityEffect": "within_current_authority",
                "runEffect": "cancel",
            },
        ]
        if expanding:
            choices.append(
                {
                    "id": "restart",
                    "label": "Start over",
                    "consequence": "A new run is needed",
                    "authorityEffect": "requires_new_run",
                    "runEffect": "new_run",
                }
            )
        return self.base(cid) | {
            "question": "Which behaviour do you want?",
            "reason": "permission_expanding" if expanding else "user_owned_materially_divergent",
            "divergence": "Two readings differ materially",
            "evidenceInspected": [self.request],
            "blockedBoundary": "behaviour choice",
            "responseConstraints": "Pick one choice id.",
            "responseChoices": choices,
            "permissionExpansionRequired": expanding,
            "rationaleSummary": "The user owns this choice.",
        }


class Flow:
    """Drives one run through a Controller, always presenting the current tokens."""

    def __init__(self, controller: Controller, started: StepResult, run: Run) -> None:
        self.controller = controller
        self.last = started
        self.b = run

    @classmethod
    async def start(
        cls,
        ledger: Ledger,
        mode: str,
        *,
        clock: Callable[[], str] | None = None,
        new_id: Callable[[], str] | None = None,
        **kwargs: Any,
    ) -> Flow:
        """Start a run in ``mode`` with every default grant available on the host."""
        ids = new_id or ids_from("run")
        minted: list[str] = []

        def recording() -> str:
            value = ids()
            minted.append(value)
            return value

        controller = Controller(ledger, clock=clock or clock_from(), new_id=recording)
        kwargs.setdefault("host_capabilities", ALL_GRANTS)
        request = StartRequest("Fix the failing parser in src", mode, **kwargs)  # type: ignore[arg-type]
        started = await controller.start_run(request, repository_root=ROOT)
        run = Run(run_id=started.run.run_id, mode=mode)
        run._request_id = minted[1]
        return cls(controller, started, run)

    @property
    def version(self) -> int:
        """The run version after the last call."""
        return self.last.run.version

    @property
    def action(self) -> Any:
        """The next action after the last call."""
        return self.last.next_action

    def token(self) -> tuple[str, int]:
        """The current (action_id, expected_run_version)."""
        return self.action.id, self.version

    async def ground(self, documents: int = 0) -> StepResult:
        """Ground with a synthetic manifest of ``documents`` files."""
        manifest, docs = grounding(self.b.run_id, documents)
        self.last = await self.controller.ground(self.b.run_id, *self.token(), manifest, docs)
        return self.last

    async def submit(self, artifact_type: str, body: JSON, refs: Sequence[str] = ()) -> StepResult:
        """Submit ``body`` with the current tokens."""
        self.last = await self.controller.submit_artifact(
            self.b.run_id, *self.token(), artifact_type, body, list(refs)
        )
        return self.last

    async def answer(self, choice: str) -> StepResult:
        """Answer the pending clarification."""
        self.last = await self.controller.answer_clarification(self.b.run_id, *self.token(), choice)
        return self.last

    async def cancel(self) -> StepResult:
        """Cancel the run."""
        self.last = await self.controller.cancel(self.b.run_id, *self.token())
        return self.last


def shape(action: Any) -> tuple[Any, ...]:
    """(kind, phase, role, required type) of a NextAction — what flow tests compare."""
    if action.kind == "phase":
        return ("phase", action.phase, action.logical_role, action.required_output_type)
    if action.kind == "clarification":
        return ("clarification", action.phase, None, None)
    return ("terminal", action.phase, action.status, None)
