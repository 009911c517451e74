"""Run states are snapshots: extending one shares its log, and never changes what it sees."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from telic.controller import RunState, StoredArtifact, TraceEntry
from telic.controller._log import Log
from telic.ledger import RunRecord

RUN = "run-1"


def _artifact(artifact_id: str, artifact_type: str = "Evidence") -> StoredArtifact:
    return StoredArtifact(
        id=artifact_id,
        type=artifact_type,
        producer="host",
        uri=f"artifact://{RUN}/{artifact_id}",
        source_refs=(),
        created_at="2026-01-01T00:00:00.000Z",
        body=None,
        wire={},
        sha256="sha256:" + "0" * 64,
    )


def _state() -> RunState:
    run = RunRecord(
        run_id=RUN,
        schema_version="1.0",
        repository_root="/srv/repo",
        requested_mode="analyze_only",
        status="running",
        phase="agent_4_execute",
        resume_phase=None,
        version=1,
        prompt_revisions_remaining=1,
        remediations_remaining=1,
        outcome_hint=None,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
    )
    head = (_artifact("request", "UserMessage"), _artifact("plan-1", "WorkPlan"))
    return RunState(run=run, artifacts=head, trace=(TraceEntry("event-a", 1, "run_created"),))


def _seen(state: RunState) -> list[str]:
    return [a.id for a in state.artifacts]


def test_an_older_state_still_sees_exactly_its_own_artifacts_after_a_newer_one_appended() -> None:
    parent = _state()
    child = parent.extended((_artifact("ev-1"),))
    grandchild = child.extended((_artifact("ev-2"), _artifact("result-1", "WorkResult")))

    assert _seen(parent) == ["request", "plan-1"]
    assert _seen(child) == ["request", "plan-1", "ev-1"]
    assert parent.by_id("ev-1") is None
    assert child.by_id("ev-2") is None
    assert parent.all("Evidence") == ()
    assert child.all("Evidence") == (child.by_id("ev-1"),)
    assert child.latest("WorkResult") is None
    assert grandchild.latest("WorkResult") is grandchild.by_id("result-1")
    assert [a.id for a in grandchild.all_after(child.by_id("plan-1"), "Evidence")] == [
        "ev-1",
        "ev-2",
    ]


def test_two_different_appends_to_one_parent_diverge_without_seeing_each_other() -> None:
    parent = _state()
    abandoned = parent.extended((_artifact("ev-lost"),))  # e.g. lost a version race
    taken = parent.extended((_artifact("ev-kept"), _artifact("ev-next")))
    later = abandoned.extended((_artifact("ev-after-lost"),))

    assert _seen(taken) == ["request", "plan-1", "ev-kept", "ev-next"]
    assert taken.by_id("ev-lost") is None
    assert taken.by_id("ev-after-lost") is None
    assert [a.id for a in taken.all("Evidence")] == ["ev-kept", "ev-next"]
    assert _seen(abandoned) == ["request", "plan-1", "ev-lost"]
    assert abandoned.by_id("ev-kept") is None
    assert _seen(later) == ["request", "plan-1", "ev-lost", "ev-after-lost"]
    assert _seen(parent) == ["request", "plan-1"]
    assert parent.all("Evidence") == ()


def test_the_same_append_twice_from_one_parent_gives_equal_states() -> None:
    parent = _state()
    evidence = _artifact("ev-1")
    first, second = parent.extended((evidence,)), parent.extended((evidence,))

    assert first.artifacts == second.artifacts == (*parent.artifacts, evidence)
    assert first.by_id("ev-1") is second.by_id("ev-1") is evidence


def test_a_trace_extended_from_an_older_state_does_not_leak_into_a_sibling() -> None:
    parent = _state()
    one = parent.extended((), trace=parent.with_trace((TraceEntry("event-b", 2, "x"),)))
    two = parent.extended((), trace=parent.with_trace((TraceEntry("event-c", 2, "y"),)))

    assert [e.id for e in one.trace] == ["event-a", "event-b"]
    assert [e.id for e in two.trace] == ["event-a", "event-c"]
    assert parent.trace_event(f"trace://{RUN}/event-b") is None
    assert one.trace_event(f"trace://{RUN}/event-0002") is one.trace[1]
    assert two.trace_event(f"trace://{RUN}/event-b") is None
    assert two.trace_event(f"trace://{RUN}/event-c") is two.trace[1]


def test_values_derived_without_evidence_are_kept_only_while_evidence_is_appended() -> None:
    calls: list[int] = []

    def plans(state: RunState) -> int:
        calls.append(1)
        return len(state.all("WorkPlan"))

    parent = _state()
    with_evidence = parent.extended((_artifact("ev-1"),))
    replanned = with_evidence.extended((_artifact("plan-2", "WorkPlan"),))

    assert parent.carried(plans) == with_evidence.carried(plans) == 1
    assert len(calls) == 1
    assert replanned.carried(plans) == 2
    assert parent.carried(plans) == 1


def test_a_log_is_an_immutable_sequence() -> None:
    log = Log.of(["a", "b", "c"], lambda item: (item,))
    longer = log.appended(["d"])

    assert list(log) == ["a", "b", "c"]
    assert len(log) == 3
    assert log[-1] == "c"
    assert log[1:] == ("b", "c")
    assert list(reversed(log)) == ["c", "b", "a"]
    assert longer == ("a", "b", "c", "d")
    assert log != longer
    assert log.find("d") is None
    assert longer.find("d") == "d"
    with pytest.raises(IndexError):
        log[3]


@given(st.lists(st.tuples(st.integers(0, 5), st.lists(st.integers(0, 3), max_size=3))))
def test_any_tree_of_appends_gives_every_log_exactly_its_own_items(
    steps: list[tuple[int, list[int]]],
) -> None:
    """Each step appends to one earlier log (a branch), as states do after conflicts."""
    logs: list[Log[str]] = [Log.of([], lambda item: (item,), lambda item: item[0])]
    expected: list[list[str]] = [[]]
    for count, (parent, items) in enumerate(steps):
        index = parent % len(logs)
        new = [f"{value}-{count}-{n}" for n, value in enumerate(items)]
        logs.append(logs[index].appended(new))
        expected.append(expected[index] + new)
    for log, items in zip(logs, expected, strict=True):
        assert list(log) == items
        assert all(log.find(item) == item for item in items)
        for group in "0123":
            assert list(log.members(group)) == [i for i in items if i[0] == group]
