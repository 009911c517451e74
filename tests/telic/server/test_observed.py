"""OpenTelemetry for a served Telic: state changes become spans, refusals become events."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telic import RuleViolation
from telic.controller import StartRequest
from telic.server._observed import ObservedService, observed
from telic.telemetry import TelemetryObserver
from tests.telic.roles.kit import ServiceFlow, serving

pytestmark = pytest.mark.anyio


async def test_without_an_observer_the_service_is_served_as_it_is(tmp_path: Path) -> None:
    async with serving(tmp_path / "state") as (service, ledger):
        assert observed(service, ledger, None) is service


async def test_state_changes_become_spans_and_a_refusal_an_event_with_its_rule(
    tmp_path: Path,
) -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    observer = TelemetryObserver(tracer_provider=provider)
    async with serving(tmp_path / "state") as (service, ledger):
        wrapped = observed(service, ledger, observer)
        assert isinstance(wrapped, ObservedService)
        flow = await ServiceFlow.start(wrapped, "analyze_only")
        await flow.ground()
        frame = flow.b.frame()
        with pytest.raises(RuleViolation):  # the frame must keep the run's mode
            await flow.submit("ProblemFrame", frame | {"intentMode": "plan_only"})
        await flow.submit("ProblemFrame", frame)
        assert (await wrapped.get_run(flow.b.run_id)).run.run_id == flow.b.run_id  # reads pass
        observer.close()

    spans = memory.get_finished_spans()
    names = [span.name for span in spans]
    assert any(name.startswith("invoke_workflow") for name in names), names
    assert any(name == "invoke_agent scenario_author" for name in names), names
    events = [event for span in spans for event in span.events if event.name == "telic.rejection"]
    assert len(events) == 1
    assert events[0].attributes is not None
    assert "PF-INTENT-MODE" in list(events[0].attributes["telic.rule_ids"])  # type: ignore[arg-type]
    text = repr([(span.attributes, [e.attributes for e in span.events]) for span in spans])
    assert frame["goal"] not in text
    assert "Find the retry limit in src" not in text


@pytest.mark.parametrize(("setting", "wrapped"), [("1", True), (None, False)])
async def test_telic_otel_decides_whether_the_served_service_is_observed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, wrapped: bool
) -> None:
    from telic.server import open_backend
    from telic.server._config import ServerConfig

    if setting is None:
        monkeypatch.delenv("TELIC_OTEL", raising=False)
    else:
        monkeypatch.setenv("TELIC_OTEL", setting)
    repository = tmp_path / "repo"
    repository.mkdir()
    config = ServerConfig(
        repository_root=repository, state_dir=tmp_path / "state", database_url="memory://"
    )
    async with open_backend(config) as backend:
        assert isinstance(backend.service, ObservedService) is wrapped
        request = StartRequest("Describe the project layout", "report_only")
        started = await backend.service.start_run(request)
        assert started.run.version == 1
