"""A rejection through the service persists exactly what it must: the DENY records, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from telic import RuleViolation

from .kit import ServiceFlow, serving

pytestmark = pytest.mark.anyio

DIFF_HASH = "sha256:" + "ab" * 32


async def _denials(flow: ServiceFlow) -> list[tuple[str, str]]:
    trace = await flow.service.get_trace(flow.b.run_id, limit=500)
    return [
        (e.permission_decision.capability, e.permission_decision.scope)
        for e in trace.events
        if e.event_type == "permission_checked"
        and e.permission_decision is not None
        and e.permission_decision.decision == "deny"
    ]


async def test_a_read_only_mutation_submitted_through_the_service_leaves_one_deny_record(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path / "state") as (service, _):
        flow = await ServiceFlow.start(service, "analyze_only")
        await flow.to_execute()
        b = flow.b
        await flow.submit("Evidence", b.evidence("evidence-1", kind="diff"))
        body = b.result(
            node="node-1",
            actions=[b.action("A-1", "repository.write", "src/retry.py", "evidence-1")],
            files=[
                {
                    "path": "src/retry.py",
                    "changeType": "created",
                    "beforeHash": None,
                    "afterHash": DIFF_HASH,
                    "diffRef": b.uri("evidence-1"),
                }
            ],
        )
        version = flow.version
        artifacts = len((await service.get_run(b.run_id)).artifacts)

        with pytest.raises(RuleViolation) as refused:
            await flow.submit("WorkResult", body)
        assert "WR-NO-MUTATION" in refused.value.rules
        assert await _denials(flow) == [("repository.write", "src/retry.py")]

        with pytest.raises(RuleViolation):  # an identical replay adds no second record
            await flow.submit("WorkResult", body)
        assert await _denials(flow) == [("repository.write", "src/retry.py")]

        details = await service.get_run(b.run_id)
        assert details.run.version == version
        assert len(details.artifacts) == artifacts
