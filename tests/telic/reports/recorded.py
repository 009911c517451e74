"""Real runs recorded through the Controller for the report and telemetry tests.

Each recorder drives one run with the controller test builders, with a fixed clock and fixed
ids, so every byte a report renders from it is the same on every machine. ``RECORDERS`` maps
each terminal status the reports must show to the run that ends in it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from telic.ledger import Ledger, NewArtifact, NewTraceEvent
from telic_packets import (
    Cast,
    CastBudget,
    Counters,
    Harness,
    RoutingReason,
    archive_verifier,
    canonical_json,
    consumption,
    seal_packet,
)
from tests.telic.controller.builders import READ, Flow, ids_from, perms

GENERATED_AT = "2026-01-02T00:00:00.000Z"
GENERATOR = "snapshot"
SECRET_BODY_TEXT = "BODY-CANARY-7f3a"
"""A string planted in artifact bodies that must never reach a telemetry attribute."""
HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> | `tick` ]]>'
"""Untrusted text planted in the request: the renderers must escape it."""

VR = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read the parser back",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}


def fixed_clock() -> Callable[[], str]:
    """The generation clock of every report in the tests."""
    return lambda: GENERATED_AT


async def _start(ledger: Ledger, prefix: str, mode: str = "analyze_only") -> Flow:
    flow = await Flow.start(ledger, mode, new_id=ids_from(prefix))
    flow.b.permissions = READ
    flow.b.verifications = [VR]
    return flow


async def _to_plan(flow: Flow, *, revise: bool = False, clarify: bool = False) -> None:
    b = flow.b
    await flow.ground(documents=1)
    refs: list[str] = []
    if clarify:
        await flow.submit("ClarificationRequest", b.clarification())
        await flow.answer("keep")
        details = await flow.controller.get_run(b.run_id)
        refs = [b.uri("clar-1"), b.uri(details.artifacts[-1].artifact_id)]
    await flow.submit("ProblemFrame", b.frame(), refs)
    await flow.submit("TaskContract", b.contract())
    if revise:
        await flow.submit("PromptReview", b.prompt_review(decision="revise"))
        v2 = b.contract("contract-2", version=2, objective="Fix the parser's token skip")
        await flow.submit("TaskContract", v2, [b.uri("contract-1"), b.uri("review-1")])
        await flow.submit("PromptReview", b.prompt_review("review-2", "contract-2", revision=1))
    else:
        await flow.submit("PromptReview", b.prompt_review())


def _evidence(flow: Flow, eid: str = "evidence-1") -> dict[str, Any]:
    body = flow.b.evidence(eid)
    body["summary"] = f"Read src/parser.py ({SECRET_BODY_TEXT})"
    body["content"] = f"def parse(tokens): ...  # {SECRET_BODY_TEXT}"
    return body


async def _packets(ledger: Ledger, flow: Flow) -> None:
    """Store two sealed packets and one consumption event, as the casting layer does."""
    run_id, archive_ref = flow.b.run_id, flow.b.uri("evidence-1")
    archive = {archive_ref: f"def parse(tokens): ...  # {SECRET_BODY_TEXT}"}
    moment = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    harness = Harness(name="telic", version=GENERATOR)
    sealed = []
    for n, (need, outcome) in enumerate([("locate", "completed"), ("verify_claim", "partial")]):
        cast = Cast(
            run_id=run_id,
            cast_id=f"cast-{n + 1}",
            cast_type="explore",
            work_node_id="node-1",
            routing=RoutingReason(
                need_code=need, text="Find the parser entry point", expected_evidence=["citation"]
            ),
            budget=CastBudget(max_turns=4, max_total_tokens=8000),
        )
        returned: dict[str, Any] = {
            "claim": f"parse() lives in src/parser.py {SECRET_BODY_TEXT}",
            "evidence": [{"kind": "citation", "source": archive_ref, "quote": "def parse"}],
            "completed": [0],
        }
        if outcome == "partial":
            returned["remaining"] = ["Check the tokenizer"]
        packet = seal_packet(
            returned,
            cast=cast,
            cast_open=True,
            packet_id=f"pk_cast{n + 1:04d}abc",
            outcome=outcome,  # type: ignore[arg-type]
            stop_reason=None if outcome == "completed" else "turn_capped",
            counters=Counters(
                turns=3,
                tool_calls=2,
                input_tokens=1200,
                output_tokens=300,
                total_tokens=1500 + n,
                wall_ms=9000,
                evidence_proposed=0,
                evidence_verified=0,
            ),
            verifier=archive_verifier(archive),
            now=moment,
            harness=harness,
        )
        sealed.append(packet)
        await ledger.store_supporting(
            run_id,
            NewArtifact(
                artifact_id=packet.packet_id,
                type="EvidencePacket",
                schema_version="1.0",
                producer="executor",
                body=packet.to_wire(),
                source_refs=(flow.b.uri(cast.cast_id),),
                created_at="2026-01-01T00:00:30.000Z",
            ),
            (),
        )
    record = consumption(
        sealed[0],
        packet_uri=flow.b.uri(sealed[0].packet_id),
        consumer_ref=flow.b.uri("result-1"),
        artifact_text=f"Used {sealed[0].packet_id}",
        artifact_refs=[],
        at=moment,
    )
    consumed = NewTraceEvent(
        actor="controller",
        phase="agent_5_report",
        event_type="packet_consumed",
        input_refs=(record.consumer_ref,),
        output_refs=(flow.b.uri(sealed[0].packet_id),),
        decision_summary=canonical_json(record.to_wire()).decode("utf-8"),
        event_id="consumed-0001",
        timestamp="2026-01-01T00:00:31.000Z",
    )
    await ledger.record_events(run_id, [consumed])


async def completed(ledger: Ledger) -> str:
    """A clarification, a contract revision, one read, a release and two cast packets."""
    flow = await _start(ledger, "completed")
    b = flow.b
    await _to_plan(flow, revise=True, clarify=True)
    await flow.submit(
        "WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])], contract="contract-2")
    )
    await flow.submit("Evidence", _evidence(flow))
    await flow.submit("WorkResult", b.result())
    qr = b.quality_review(verifications=["VR-1"], contract="contract-2")
    await flow.submit("QualityReview", qr)
    await flow.submit("ReleaseAudit", b.audit(contract="contract-2"))
    report = b.report(verifications=["evidence-1"])
    report["summary"] = f"The parser is fixed. {HOSTILE}"
    report["nextActions"] = [
        {"id": "NA-1", "description": "Open a pull request", "requiresAuthorization": True}
    ]
    await flow.submit("UserReport", report)
    await _packets(ledger, flow)
    return b.run_id


async def _unsuccessful(ledger: Ledger, prefix: str, result: str, report: str) -> str:
    flow = await _start(ledger, prefix)
    b = flow.b
    await _to_plan(flow)
    node = b.node(tools=["repository.read"], permissions=perms(read=["src/**"]))
    await flow.submit("WorkPlan", b.plan(nodes=[node]))
    await flow.submit("Evidence", _evidence(flow))
    actions = [
        b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
        b.action("A-2", "repository.read", "docs/private.md", "evidence-1", status="denied"),
    ]
    await flow.submit("WorkResult", b.result(status=result, actions=actions))
    await flow.submit("QualityReview", b.quality_review(decision="partial", verifications=["VR-1"]))
    await flow.submit("ReleaseAudit", b.audit(decision="partial"))
    await flow.submit("UserReport", b.report(status=report, findings=["audit-1"]))
    return b.run_id


async def partial(ledger: Ledger) -> str:
    """A partial result with one denied read outside the node's scope."""
    return await _unsuccessful(ledger, "partial", "partial", "partial")


async def failed_verification(ledger: Ledger) -> str:
    """A failed result reported as failed verification."""
    return await _unsuccessful(ledger, "failedv", "failed", "failed_verification")


async def blocked(ledger: Ledger) -> str:
    """A remediation loop whose second review blocks."""
    flow = await _start(ledger, "blocked")
    b = flow.b
    await _to_plan(flow)
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
    await flow.submit("Evidence", _evidence(flow))
    await flow.submit("WorkResult", b.result())
    order = b.remediation()
    qr = b.quality_review(decision="remediate", verifications=["VR-1"], remediationWorkOrder=order)
    await flow.submit("QualityReview", qr)
    node = b.node("node-2", tools=["repository.read"], input_refs=[b.uri("qr-1")])
    await flow.submit("WorkPlan", b.plan("plan-2", [node]))
    await flow.submit("Evidence", _evidence(flow, "evidence-2"))
    await flow.submit("WorkResult", b.result("result-2", "plan-2", "node-2", evidence="evidence-2"))
    block = b.quality_review(
        "qr-2", "plan-2", ["result-2"], "block", "evidence-2", verifications=["VR-1"], remaining=0
    )
    await flow.submit("QualityReview", block)
    audit = b.audit(
        decision="block",
        qr="qr-2",
        plans=("plan-1", "plan-2"),
        results=("result-1", "result-2"),
        remaining=0,
    )
    await flow.submit("ReleaseAudit", audit)
    await flow.submit("UserReport", b.report(status="blocked", findings=["audit-1"]))
    return b.run_id


async def cancelled(ledger: Ledger) -> str:
    """A run cancelled after planning: no UserReport exists."""
    flow = await _start(ledger, "cancelled")
    await _to_plan(flow)
    await flow.cancel()
    return flow.b.run_id


async def running(ledger: Ledger) -> tuple[str, Flow]:
    """A run stopped in execution (not terminal), and its flow to continue it."""
    flow = await _start(ledger, "running")
    b = flow.b
    await _to_plan(flow)
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))
    return b.run_id, flow


RECORDERS: dict[str, Callable[[Ledger], Awaitable[str]]] = {
    "completed": completed,
    "partial": partial,
    "failed_verification": failed_verification,
    "blocked": blocked,
    "cancelled": cancelled,
}
