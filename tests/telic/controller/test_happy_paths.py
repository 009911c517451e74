"""Each of the five modes runs end to end through the driver along its §3.2 phase sequence."""

from __future__ import annotations

from typing import Any

import pytest

from telic.ledger import open_ledger

from .builders import FIX, READ, Flow, criterion, shape

pytestmark = pytest.mark.anyio

REVIEW = ("phase", "agent_3_quality_review", "quality_controller", "QualityReview")
AUDIT = ("phase", "agent_5_release_audit", "release_auditor", "ReleaseAudit")
REPORT = ("phase", "user_report", "release_auditor", "UserReport")
PLAN = ("phase", "agent_3_plan", "quality_controller", "WorkPlan")
EXECUTE = ("phase", "agent_4_execute", "executor", "WorkResult")
FRAMING = [
    ("phase", "context_discovery", "controller", "ContextManifest"),
    ("phase", "agent_1_frame", "scenario_author", "ProblemFrame"),
    ("phase", "agent_2_compile", "task_compiler", "TaskContract"),
    ("phase", "agent_1_review", "scenario_author", "PromptReview"),
]


async def _frame_and_contract(flow: Flow) -> list[tuple[int, Any]]:
    seen = [(flow.version, shape(flow.action))]
    await flow.ground()
    seen.append((flow.version, shape(flow.action)))
    await flow.submit("ProblemFrame", flow.b.frame())
    seen.append((flow.version, shape(flow.action)))
    await flow.submit("TaskContract", flow.b.contract())
    seen.append((flow.version, shape(flow.action)))
    await flow.submit("PromptReview", flow.b.prompt_review())
    seen.append((flow.version, shape(flow.action)))
    return seen


@pytest.mark.parametrize("mode", ["report_only", "plan_only"])
async def test_report_and_plan_modes_skip_execution_and_complete(mode: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, mode)
        b = flow.b
        b.permissions = READ if mode == "plan_only" else b.permissions
        seen = await _frame_and_contract(flow)
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(calls=0)]))
        seen.append((flow.version, shape(flow.action)))
        qr = b.quality_review(results=(), evidence="plan-1")
        await flow.submit("QualityReview", qr)
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("ReleaseAudit", b.audit(results=(), evidence=("plan-1",)))
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("UserReport", b.report(evidence=("plan-1",)))
        seen.append((flow.version, shape(flow.action)))
    assert seen == [
        (v, s) for v, s in zip(range(1, 9), [*FRAMING, PLAN, REVIEW, AUDIT, REPORT], strict=True)
    ] + [(9, ("terminal", "completed", "completed", None))]
    assert flow.action.report_ref == b.uri("report-1")


async def test_analyze_only_reads_then_completes_at_version_ten() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        b.permissions = READ
        b.verifications = [
            {
                "id": "VR-1",
                "stage": "completion",
                "description": "Read it",
                "required": True,
                "capability": "repository.read",
                "fallback": None,
            }
        ]
        seen = await _frame_and_contract(flow)
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
        seen.append((flow.version, shape(flow.action)))
        assert flow.action.work_node_id == "node-1"
        assert flow.action.effective_permissions.repository.read == ["**"]
        await flow.submit("Evidence", b.evidence())
        assert flow.version == 6, "Evidence never advances the version"
        await flow.submit("WorkResult", b.result())
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("ReleaseAudit", b.audit())
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("UserReport", b.report(verifications=["evidence-1"]))
        seen.append((flow.version, shape(flow.action)))
        trace = await flow.controller.get_trace(b.run_id)
    assert [s for _, s in seen] == [
        *FRAMING,
        PLAN,
        EXECUTE,
        REVIEW,
        AUDIT,
        REPORT,
        ("terminal", "completed", "completed", None),
    ]
    assert [v for v, _ in seen] == list(range(1, 11))
    assert [e.event_type for e in trace.events] == [
        "run_started",
        "phase_submitted",
        "phase_submitted",
        "phase_submitted",
        "phase_submitted",
        "phase_submitted",
        "artifact_recorded",
        "permission_checked",
        "phase_submitted",
        "phase_submitted",
        "phase_submitted",
        "phase_submitted",
    ]


def _fix_result(
    flow: Flow, wid: str, plan: str, node: str, evidence: str, criteria: tuple[str, ...]
) -> dict[str, Any]:
    b = flow.b
    actions = [
        b.action("A-1", "repository.write", "src/fix.py", evidence),
        b.action("A-2", "repository.read", "src/fix.py", evidence),
    ]
    files = [
        {
            "path": "src/fix.py",
            "changeType": "created",
            "beforeHash": None,
            "afterHash": "sha256:" + "c" * 64,
            "diffRef": b.uri(evidence),
        }
    ]
    return b.result(
        wid,
        plan=plan,
        node=node,
        evidence=evidence,
        criteria=criteria,
        actions=actions,
        files=files,
    )


async def test_fix_only_mutates_then_verifies_and_completes() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "fix_only")
        b = flow.b
        b.permissions = FIX
        b.verifications = [
            {
                "id": "VR-1",
                "stage": "completion",
                "description": "Read it back",
                "required": True,
                "capability": "repository.read",
                "fallback": None,
            }
        ]
        seen = await _frame_and_contract(flow)
        tools = ["repository.read", "repository.write"]
        await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=tools, calls=10)]))
        seen.append((flow.version, shape(flow.action)))
        assert flow.action.effective_permissions.repository.write == ["src/**"]
        await flow.submit("Evidence", b.evidence(kind="diff"))
        await flow.submit(
            "WorkResult", _fix_result(flow, "result-1", "plan-1", "node-1", "evidence-1", ("AC-1",))
        )
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("QualityReview", b.quality_review(verifications=["VR-1"]))
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("ReleaseAudit", b.audit())
        seen.append((flow.version, shape(flow.action)))
        await flow.submit(
            "UserReport", b.report(changes=["evidence-1"], verifications=["evidence-1"])
        )
        seen.append((flow.version, shape(flow.action)))
    assert seen == list(
        zip(
            range(1, 11),
            [
                *FRAMING,
                PLAN,
                EXECUTE,
                REVIEW,
                AUDIT,
                REPORT,
                ("terminal", "completed", "completed", None),
            ],
            strict=True,
        )
    )


async def test_analyze_and_fix_goes_through_the_gate_and_a_fix_plan() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_and_fix")
        b = flow.b
        b.permissions = FIX
        b.criteria = [criterion("AC-1", "diagnosis"), criterion("AC-2", "completion")]
        b.verifications = [
            {
                "id": "VR-DIAG",
                "stage": "diagnosis",
                "description": "Find it",
                "required": True,
                "capability": "repository.read",
                "fallback": None,
            },
            {
                "id": "VR-COMP",
                "stage": "completion",
                "description": "Read it back",
                "required": True,
                "capability": "repository.read",
                "fallback": None,
            },
        ]
        seen = await _frame_and_contract(flow)
        read = ["repository.read"]
        await flow.submit("WorkPlan", b.plan("plan-01", [b.node("diag", ["AC-1"], read, READ)]))
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("Evidence", b.evidence("evidence-01"))
        await flow.submit(
            "WorkResult", b.result("result-01", "plan-01", "diag", evidence="evidence-01")
        )
        seen.append((flow.version, shape(flow.action)))
        gate = {
            "id": "GATE-1",
            "status": "supported",
            "rootCause": "The parser skips a token",
            "directEvidenceRefs": [b.uri("evidence-01")],
            "correctionWorkOrder": {
                "id": "CWO-1",
                "targetCriterionIds": ["AC-2"],
                "objective": "Fix the parser",
                "allowedCapabilities": ["repository.read", "repository.write"],
                "permissions": FIX,
                "sourceRefs": [b.uri("evidence-01")],
                "maximumToolCalls": 20,
                "rationaleSummary": "Scoped fix.",
            },
            "withinApprovedScope": True,
            "permissionsSufficient": True,
            "rationaleSummary": "Supported diagnosis.",
        }
        qr1 = b.quality_review(
            "QR-01",
            "plan-01",
            ["result-01"],
            "proceed_to_fix",
            "evidence-01",
            ["AC-1"],
            ["VR-DIAG"],
            diagnosisGate=gate,
        )
        await flow.submit("QualityReview", qr1)
        seen.append((flow.version, shape(flow.action)))
        fix = b.node(
            "fix",
            ["AC-2"],
            ["repository.read", "repository.write"],
            FIX,
            10,
            input_refs=[b.uri("QR-01")],
        )
        await flow.submit("WorkPlan", b.plan("plan-02", [fix]))
        seen.append((flow.version, shape(flow.action)))
        await flow.submit("Evidence", b.evidence("evidence-02", kind="diff"))
        await flow.submit(
            "WorkResult", _fix_result(flow, "result-02", "plan-02", "fix", "evidence-02", ("AC-2",))
        )
        seen.append((flow.version, shape(flow.action)))
        qr2 = b.quality_review(
            "QR-02",
            "plan-02",
            ["result-02"],
            "pass",
            "evidence-02",
            ["AC-1", "AC-2"],
            ["VR-DIAG", "VR-COMP"],
        )
        # AC-1 and VR-DIAG are not re-assigned by plan-02: they keep QR-01's evidence exactly.
        qr2["acceptanceResults"][0]["evidenceRefs"] = [b.uri("evidence-01")]
        qr2["verificationResults"][0]["evidenceRefs"] = [b.uri("evidence-01")]
        await flow.submit("QualityReview", qr2)
        seen.append((flow.version, shape(flow.action)))
        audit = b.audit(
            qr="QR-02",
            plans=("plan-01", "plan-02"),
            results=("result-01", "result-02"),
            evidence=("evidence-01", "evidence-02"),
        )
        await flow.submit("ReleaseAudit", audit)
        seen.append((flow.version, shape(flow.action)))
        await flow.submit(
            "UserReport",
            b.report(
                evidence=("evidence-01", "evidence-02"),
                changes=["evidence-02"],
                verifications=["evidence-01", "evidence-02"],
            ),
        )
        seen.append((flow.version, shape(flow.action)))
    assert seen == list(
        zip(
            range(1, 14),
            [
                *FRAMING,
                PLAN,
                EXECUTE,
                REVIEW,
                PLAN,
                EXECUTE,
                REVIEW,
                AUDIT,
                REPORT,
                ("terminal", "completed", "completed", None),
            ],
            strict=True,
        )
    )
