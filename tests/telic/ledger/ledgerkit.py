"""Record factories shared by the ledger tests and their helper processes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from telic.ledger import Commit, Ledger, NewArtifact, NewTraceEvent, RunRecord

REQUEST_TEXT = "please fix the flaky checkout test (request text must never leak)"


def only(*kinds: str) -> Any:
    """Restrict a ``ledger_kind`` test to some backends ("sqlite") or combinations
    ("sqlite-asyncio"); a decorator read by the conftest's ``pytest_generate_tests``."""

    def mark(function: Any) -> Any:
        function.ledger_kinds = kinds
        return function

    return mark


def stamp(second: int) -> str:
    """A fixed UTC timestamp ``second`` seconds after a reference instant."""
    minutes, seconds = divmod(second, 60)
    hours, minutes = divmod(minutes, 60)
    return f"2026-05-20T{10 + hours:02d}:{minutes:02d}:{seconds:02d}.000Z"


def run_record(
    run_id: str = "run-1", version: int = 1, updated: int = 0, **changes: Any
) -> RunRecord:
    """A run row at ``version``."""
    fields: dict[str, Any] = {
        "run_id": run_id,
        "schema_version": "1.0",
        "repository_root": "/srv/checkout/project",
        "requested_mode": "analyze_and_fix",
        "status": "running",
        "phase": "context_grounding",
        "resume_phase": None,
        "version": version,
        "prompt_revisions_remaining": 1,
        "remediations_remaining": 1,
        "outcome_hint": None,
        "created_at": stamp(0),
        "updated_at": stamp(updated),
        "controller_state": {"step": version},
    }
    fields.update(changes)
    return RunRecord(**fields)


def artifact(
    artifact_id: str, type_: str = "Evidence", *, run_id: str = "run-1", **changes: Any
) -> NewArtifact:
    """A small artifact whose body names its id and run."""
    fields: dict[str, Any] = {
        "artifact_id": artifact_id,
        "type": type_,
        "schema_version": "1.0",
        "producer": "executor",
        "body": {"schemaVersion": "1.0", "id": artifact_id, "runId": run_id, "n": [1, 2.5, None]},
        "source_refs": (f"artifact://{run_id}/request",),
    }
    fields.update(changes)
    return NewArtifact(**fields)


def event(event_type: str = "phase_submitted", **changes: Any) -> NewTraceEvent:
    """A trace event."""
    fields: dict[str, Any] = {
        "actor": "controller",
        "phase": "agent_1_frame",
        "event_type": event_type,
        "input_refs": ("artifact://run-1/request",),
        "decision_summary": "accepted",
        "budget_snapshot": {"promptRevisions": 1, "postExecutionRemediations": 1},
    }
    fields.update(changes)
    return NewTraceEvent(**fields)


async def start(ledger: Ledger, run_id: str = "run-1", updated: int = 0) -> Commit:
    """Create a run with its request message, envelope and ``run_started`` event."""
    request = NewArtifact(
        artifact_id=f"{run_id}-request",
        type="UserMessage",
        schema_version="1.0",
        producer="user",
        body={
            "schemaVersion": "1.0",
            "id": f"{run_id}-request",
            "runId": run_id,
            "content": REQUEST_TEXT,
        },
    )
    envelope = NewArtifact(
        artifact_id=run_id,
        type="RunEnvelope",
        schema_version="1.0",
        producer="controller",
        body={"schemaVersion": "1.0", "id": run_id, "runId": run_id, "mode": "analyze_and_fix"},
    )
    return await ledger.create_run(
        run_record(run_id, updated=updated),
        request,
        envelope,
        [event("run_started", phase="context_grounding")],
    )


async def step(
    ledger: Ledger,
    run_id: str,
    expected: int,
    artifacts: Sequence[NewArtifact] = (),
    events: Sequence[NewTraceEvent] = (),
    updated: int | None = None,
) -> Commit:
    """Commit one step from ``expected`` to ``expected + 1``."""
    new = run_record(run_id, expected + 1, updated=expected if updated is None else updated)
    return await ledger.commit_step(run_id, expected, new, artifacts, events)
