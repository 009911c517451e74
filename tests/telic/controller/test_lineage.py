"""Which stored artifacts keep, and which consume, the resume-lineage obligation."""

from __future__ import annotations

import pytest

from telic.controller import RunState, StoredArtifact
from telic.controller._refs import pending_answer
from telic.ledger import RunRecord

RUN = "9d7c1e52-3f0a-4b7e-9a51-2c8e5d7f6a10"


def _artifact(
    artifact_id: str, artifact_type: str, source_refs: tuple[str, ...] = ()
) -> StoredArtifact:
    return StoredArtifact(
        id=artifact_id,
        type=artifact_type,
        producer="controller",
        uri=f"artifact://{RUN}/{artifact_id}",
        source_refs=source_refs,
        created_at="2026-01-01T00:00:00.000Z",
        body=None,
        wire={},
        sha256="sha256:" + "0" * 64,
    )


def _state(*tail: StoredArtifact) -> RunState:
    run = RunRecord(
        run_id=RUN,
        schema_version="1.0",
        repository_root="/srv/repo",
        requested_mode="analyze_only",
        status="running",
        phase="agent_4_execute",
        resume_phase=None,
        version=9,
        prompt_revisions_remaining=1,
        remediations_remaining=1,
        outcome_hint=None,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
    )
    head = (
        _artifact("request", "UserMessage"),
        _artifact(RUN, "RunEnvelope"),
        _artifact("clar-1", "ClarificationRequest"),
        _artifact("answer-1", "UserMessage", (f"artifact://{RUN}/clar-1",)),
    )
    return RunState(run=run, artifacts=head + tail)


@pytest.mark.parametrize(
    "neutral",
    ["Evidence", "ScenarioSpec", "ContextDocument", "EvidencePacket", "CastRecord", "CastPolicy"],
)
def test_supporting_and_casting_artifacts_do_not_consume_the_pending_answer(neutral: str) -> None:
    answer = pending_answer(_state(_artifact("later", neutral)))
    assert answer is not None
    assert answer.id == "answer-1"


def test_a_primary_artifact_after_the_answer_consumes_it() -> None:
    assert pending_answer(_state(_artifact("result-1", "WorkResult"))) is None
