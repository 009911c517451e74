"""OpenTelemetry export of recorded runs: the span tree, its attributes, and nothing secret."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telic._errors import Issue, RuleViolation
from telic.ledger import open_ledger
from telic.telemetry import TelemetryObserver, export_run, telemetry_from_env
from tests.telic.reports.recorded import (
    HOSTILE,
    SECRET_BODY_TEXT,
    completed,
    partial,
    running,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A tracer provider that keeps finished spans in memory."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider, memory
    provider.shutdown()


def _violation(rule: str) -> RuleViolation:
    return RuleViolation("refused", issues=(Issue("body", "rule", "refused", rule=rule),))


def _all_values(span: ReadableSpan) -> list[str]:
    values = [str(v) for v in (span.attributes or {}).values()]
    for event in span.events:
        values += [str(v) for v in (event.attributes or {}).values()]
    return [*values, span.name]


async def test_a_full_run_yields_the_expected_span_tree_and_no_body_text(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, memory = exporter
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        await export_run(ledger, run_id, tracer_provider=provider)
    spans = memory.get_finished_spans()
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == "invoke_workflow telic"
    attrs = dict(root.attributes or {})
    assert attrs["gen_ai.operation.name"] == "invoke_workflow"
    assert attrs["telic.run.id"] == run_id
    assert attrs["telic.run.status"] == "completed"
    assert attrs["telic.budget.tool_calls.reserved"] == 5
    children = [s for s in spans if s.parent is not None]
    assert all(s.parent.span_id == root.context.span_id for s in children)  # type: ignore[union-attr]
    agents = [(s.name, dict(s.attributes or {}).get("telic.artifact.type")) for s in children]
    assert agents == [
        ("invoke_agent controller", "ContextManifest"),
        ("invoke_agent scenario_author", "ClarificationRequest"),
        ("invoke_agent scenario_author", "ProblemFrame"),
        ("invoke_agent task_compiler", "TaskContract"),
        ("invoke_agent scenario_author", "PromptReview"),
        ("invoke_agent task_compiler", "TaskContract"),
        ("invoke_agent scenario_author", "PromptReview"),
        ("invoke_agent quality_controller", "WorkPlan"),
        ("invoke_agent executor", "WorkResult"),
        ("invoke_agent quality_controller", "QualityReview"),
        ("invoke_agent release_auditor", "ReleaseAudit"),
        ("invoke_agent release_auditor", "UserReport"),
        ("invoke_agent explore", None),
        ("invoke_agent explore", None),
    ]
    by_type = {dict(s.attributes or {}).get("telic.artifact.type"): s for s in children}
    review = dict(by_type["QualityReview"].attributes or {})
    assert review["telic.gate.decision"] == "pass"
    assert review["telic.gate.score"] == 90
    audit = dict(by_type["ReleaseAudit"].attributes or {})
    assert audit["telic.claim_evidence"] == ("CL-1->evidence-1",)
    result = by_type["WorkResult"]
    (permission,) = result.events
    assert permission.name == "telic.permission_checked"
    assert dict(permission.attributes or {}) == {
        "telic.permission.decision": "ALLOW",
        "telic.permission.capability": "repository.read",
        "telic.permission.deciding_layer": "all layers (mode, authorization, node)",
    }
    cast = dict(children[-1].attributes or {})
    assert cast["gen_ai.operation.name"] == "invoke_agent"
    assert cast["telic.packet.outcome"] == "partial"
    assert cast["gen_ai.usage.input_tokens"] == 1200
    consumed = [e for e in root.events if e.name == "telic.packet_consumed"]
    assert dict(consumed[0].attributes or {})["telic.packet.cite_kind"] == "token"
    for span in spans:
        for value in _all_values(span):
            assert SECRET_BODY_TEXT not in value
            assert "Fix the failing parser" not in value
            assert "<script>" not in value
            assert HOSTILE not in value
            assert "/repo" not in value


async def test_a_deny_names_its_layer_and_a_rejection_its_rule_ids(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, memory = exporter
    async with open_ledger("memory://") as ledger:
        run_id = await partial(ledger)
        observer = TelemetryObserver(provider)
        await observer.observe(ledger, run_id)
        observer.on_rejection(run_id, _violation("TC-REVISE-FIELDS"), artifact_type="TaskContract")
    decisions = [
        dict(e.attributes or {})
        for s in memory.get_finished_spans()
        for e in s.events
        if e.name == "telic.permission_checked"
    ]
    assert [
        (d["telic.permission.decision"], d["telic.permission.deciding_layer"]) for d in decisions
    ] == [
        ("ALLOW", "all layers (mode, authorization, node)"),
        ("DENY", "node"),
    ]
    (lone,) = [
        s for s in memory.get_finished_spans() if s.events and s.events[0].name == "telic.rejection"
    ]
    rejection = dict(lone.events[0].attributes or {})
    assert rejection["telic.rule_ids"] == ("TC-REVISE-FIELDS",)
    assert rejection["telic.error.code"] == "invariant_violation"


async def test_a_live_run_is_followed_step_by_step_and_closed_on_shutdown(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, memory = exporter
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)
        observer = TelemetryObserver(provider)
        await observer.observe(ledger, run_id)
        first = len(memory.get_finished_spans())
        await flow.submit("Evidence", flow.b.evidence())
        await observer.observe(ledger, run_id)
        observer.on_rejection(run_id, _violation("WR-NODE"))
        await observer.observe(ledger, run_id)
        assert len(memory.get_finished_spans()) == first  # the run span is still open
        observer.close()
    root = [s for s in memory.get_finished_spans() if s.parent is None][-1]
    assert dict(root.attributes or {})["telic.run.open"] is True
    names = [e.name for e in root.events]
    assert names == ["telic.artifact_recorded", "telic.artifact_recorded", "telic.rejection"]
    evidence = dict(root.events[1].attributes or {})
    assert (evidence["telic.artifact.type"], evidence["telic.evidence.kind"]) == (
        "Evidence",
        "repository",
    )


def test_telemetry_is_off_unless_asked_for() -> None:
    assert telemetry_from_env({}) is None
    assert telemetry_from_env({"TELIC_OTEL": "0"}) is None
    assert isinstance(telemetry_from_env({"TELIC_OTEL": "1"}), TelemetryObserver)


async def test_following_a_run_records_each_step_once(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    # How many ledger reads following a run takes is measured in benchmarks/round_trips.py.
    provider, memory = exporter
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)
        observer = TelemetryObserver(provider)
        await observer.observe(ledger, run_id)
        await flow.submit("Evidence", flow.b.evidence())
        await observer.observe(ledger, run_id)
        await observer.observe(ledger, run_id)  # nothing new: nothing recorded twice
        observer.close()
    root = [s for s in memory.get_finished_spans() if s.parent is None][-1]
    assert [e.name for e in root.events] == ["telic.artifact_recorded", "telic.artifact_recorded"]
