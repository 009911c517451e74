"""``replay_report``: the pure replay of a run from its ledger records (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping

from telic.controller import DigestStatus, replay_report
from telic.ledger import ArtifactRecord, BrokenRecord, RunRecord, TraceRecord, VerifyReport

RUN = "run-1"
NOW = "2026-08-12T00:00:00.000Z"
HASH = "sha256:" + "0" * 64


def _run(phase: str = "agent_5_report") -> RunRecord:
    return RunRecord(
        run_id=RUN,
        schema_version="1.0",
        repository_root="/repo",
        requested_mode="analyze_only",
        status="completed",
        phase=phase,
        resume_phase=None,
        version=9,
        prompt_revisions_remaining=1,
        remediations_remaining=1,
        outcome_hint=None,
        created_at=NOW,
        updated_at=NOW,
    )


def _artifact(position: int, artifact_id: str, kind: str) -> ArtifactRecord:
    return ArtifactRecord(
        run_id=RUN,
        artifact_id=artifact_id,
        type=kind,
        schema_version="1.0",
        producer="controller",
        sha256=HASH,
        size_bytes=2,
        source_refs=(),
        redaction="none",
        quota_key=None,
        created_at=NOW,
        position=position,
        chain_index=position,
        previous_hash=HASH,
        record_hash=HASH,
    )


def _event(
    sequence: int,
    event_type: str,
    phase: str,
    *outputs: str,
    summary: str = "",
    actor: str = "controller",
    decision: Mapping[str, str] | None = None,
) -> TraceRecord:
    return TraceRecord(
        event_id=f"event-{sequence}",
        run_id=RUN,
        sequence=sequence,
        timestamp=NOW,
        actor=actor,
        phase=phase,
        event_type=event_type,
        input_refs=(),
        output_refs=tuple(f"artifact://{RUN}/{o}" for o in outputs),
        permission_decision=decision,
        decision_summary=summary,
        budget_snapshot={},
        chain_index=100 + sequence,
        previous_hash=HASH,
        record_hash=HASH,
    )


ARTIFACTS = (
    _artifact(1, "request", "UserMessage"),
    _artifact(2, "envelope", "RunEnvelope"),
    _artifact(3, "frame-01", "ProblemFrame"),
    _artifact(4, "contract-01", "TaskContract"),  # a companion: no event produced it
    _artifact(5, "review-01", "QualityReview"),
)
OK: dict[str, DigestStatus] = {a.artifact_id: "ok" for a in ARTIFACTS}


def _wire(**changes: object) -> dict[str, object]:
    arguments: dict[str, object] = {"topology": "standard"} | changes
    events = arguments.pop("events", ())
    digests = arguments.pop("digests", OK)
    return replay_report(_run(), ARTIFACTS, events, digests, **arguments).to_wire()  # type: ignore[arg-type]


def test_each_artifact_takes_the_last_event_that_output_it_and_its_internal_phase() -> None:
    events = (
        _event(1, "run_started", "context_grounding"),
        _event(4, "phase_submitted", "agent_1_frame", "frame-01"),
        _event(5, "artifact_recorded", "agent_1_frame", "frame-01", "not-an-artifact"),
        _event(7, "phase_submitted", "agent_3_review", "review-01"),
    )
    steps = _wire(events=events)["steps"]
    assert steps == [
        {
            "sequence": 0,
            "phase": "agent_5_report",
            "artifactRef": "artifact://run-1/request",
            "artifactType": "UserMessage",
            "digestStatus": "ok",
        },
        {
            "sequence": 1,
            "phase": "agent_5_report",
            "artifactRef": "artifact://run-1/envelope",
            "artifactType": "RunEnvelope",
            "digestStatus": "ok",
        },
        {
            "sequence": 3,  # the companion: its 0-based position, the run's current phase
            "phase": "agent_5_report",
            "artifactRef": "artifact://run-1/contract-01",
            "artifactType": "TaskContract",
            "digestStatus": "ok",
        },
        {
            "sequence": 5,  # the later of its two events
            "phase": "agent_1_frame",
            "artifactRef": "artifact://run-1/frame-01",
            "artifactType": "ProblemFrame",
            "digestStatus": "ok",
        },
        {
            "sequence": 7,
            "phase": "agent_3_review",
            "artifactRef": "artifact://run-1/review-01",
            "artifactType": "QualityReview",
            "digestStatus": "ok",
        },
    ]


def test_equal_sequences_keep_commit_order() -> None:
    events = (_event(3, "phase_submitted", "agent_1_frame", "frame-01"),)
    refs = [s["artifactRef"] for s in _wire(events=events)["steps"]]  # type: ignore[index]
    # frame-01 (event 3) comes before contract-01 (position 3) because it was committed first.
    assert refs.index("artifact://run-1/frame-01") < refs.index("artifact://run-1/contract-01")


def test_an_escalation_names_its_reason_and_leads_the_highlights() -> None:
    deny = {"decision": "deny", "capability": "repository.write"}
    events = (
        _event(2, "broker_decision", "agent_1_frame", actor="host", decision=deny, summary="B1"),
        _event(6, "phase_submitted", "agent_3_review", "review-01"),
        _event(
            7, "topology_escalated", "agent_3_review", "review-01", summary="MICRO_SPOT_PARTIAL"
        ),
        _event(
            8, "permission_checked", "agent_4_execute", actor="host", decision=deny, summary="P"
        ),
        _event(9, "permission_checked", "agent_4_execute", actor="executor", decision=deny),
        _event(
            10,
            "broker_decision",
            "agent_1_frame",
            actor="host",
            summary="A",
            decision={"decision": "allow"},
        ),
    )
    report = _wire(events=events)
    review = report["steps"][-1]  # type: ignore[index]
    assert review["escalationReason"] == "MICRO_SPOT_PARTIAL"
    assert review["sequence"] == 7
    assert all("escalationReason" not in s for s in report["steps"][:-1])  # type: ignore[index]
    # Escalations first, then the hosts' denials in trace order; an executor's is not a check.
    assert report["traceHighlights"] == ["MICRO_SPOT_PARTIAL", "B1", "P"]


def test_digest_statuses_are_reported_and_an_unread_artifact_counts_as_missing() -> None:
    digests: dict[str, DigestStatus] = {**OK, "frame-01": "mismatch"}
    del digests["review-01"]
    steps = _wire(digests=digests)["steps"]
    status = {s["artifactRef"].rsplit("/", 1)[1]: s["digestStatus"] for s in steps}  # type: ignore[index, union-attr]
    assert status == {
        "request": "ok",
        "envelope": "ok",
        "frame-01": "mismatch",
        "contract-01": "ok",
        "review-01": "missing",
    }


def test_a_micro_run_is_the_degraded_stub() -> None:
    events = (_event(4, "phase_submitted", "agent_1_frame", "frame-01"),)
    assert _wire(topology="micro", events=events) == {
        "runId": "run-1",
        "topology": "micro",
        "steps": [],
        "traceHighlights": [],
        "degraded": True,
        "reason": "micro_topology",
    }


def test_degraded_and_reason_are_absent_unless_micro_and_the_chain_sits_beside() -> None:
    chain = VerifyReport(
        ok=False, records_checked=3, first_broken=BrokenRecord(kind="artifact", id="x", reason="r")
    )
    report = _wire(topology="forensic", chain=chain, trace_readable=False)
    assert "degraded" not in report
    assert "reason" not in report
    assert report["topology"] == "forensic"
    assert report["chain"] == {
        "intact": False,
        "recordsChecked": 3,
        "firstBroken": {"kind": "artifact", "id": "x", "reason": "r"},
        "traceReadable": False,
    }
