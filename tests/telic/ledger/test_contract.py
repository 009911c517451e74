"""The ledger contract: every backend keeps the same promises (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

from typing import Any, cast

import pytest
from ledgerkit import REQUEST_TEXT, artifact, event, only, run_record, start, step

from telic._errors import LedgerConflict, LimitExceeded, NotFound, UsageError
from telic.ledger import Limits, open_ledger
from telic.protocol._canonical import canonical_json, canonical_sha256

pytestmark = pytest.mark.anyio


async def test_an_artifact_round_trips_with_its_digest(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        created = await start(ledger)
        body = {"schemaVersion": "1.0", "id": "frame-1", "runId": "run-1", "text": "é€😀", "x": 1.5}
        frame = artifact("frame-1", "ProblemFrame", body=body, producer="scenario_author")
        commit = await step(ledger, "run-1", 1, [frame], [event()])

        stored = await ledger.read_artifact("run-1", "frame-1")
        assert stored.body == body
        assert stored.canonical == canonical_json(body)
        assert stored.record.sha256 == canonical_sha256(body)
        assert stored.record == commit.artifacts[0]
        assert stored.record.position == 3
        assert [a.artifact_id for a in await ledger.list_artifacts("run-1")] == [
            "run-1-request",
            "run-1",
            "frame-1",
        ]
        run = await ledger.get_run("run-1")
        assert run == commit.run
        assert run.version == 2
        assert run.controller_state == {"step": 2}
        assert created.events[0].sequence == 1
        assert commit.events[0].sequence == 2


async def test_a_stale_version_is_rejected_without_change(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1")], [event()])
        with pytest.raises(LedgerConflict, match="Stale run version 1; current version is 2"):
            await step(ledger, "run-1", 1, [artifact("a-2")], [event()])
        assert (await ledger.get_run("run-1")).version == 2
        with pytest.raises(NotFound):
            await ledger.read_artifact("run-1", "a-2")
        assert len((await ledger.page_trace("run-1")).events) == 2
        assert (await ledger.verify_run("run-1")).ok


async def test_a_duplicate_artifact_id_in_a_run_is_a_conflict(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1")])
        with pytest.raises(LedgerConflict, match="already exists"):
            await step(ledger, "run-1", 2, [artifact("a-1", body={"other": True})])
        with pytest.raises(LedgerConflict, match="already exists"):
            await step(ledger, "run-1", 2, [artifact("b-1"), artifact("b-1")])
        assert (await ledger.get_run("run-1")).version == 2
        assert len(await ledger.list_artifacts("run-1")) == 3


async def test_the_same_artifact_id_in_two_runs_is_fine(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger, "run-1")
        await start(ledger, "run-2")
        await step(ledger, "run-1", 1, [artifact("shared", run_id="run-1")])
        await step(ledger, "run-2", 1, [artifact("shared", run_id="run-2")])
        first = await ledger.read_artifact("run-1", "shared")
        second = await ledger.read_artifact("run-2", "shared")
        assert first.body["runId"] == "run-1"
        assert second.body["runId"] == "run-2"


async def test_a_second_run_with_the_same_id_is_a_conflict(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        with pytest.raises(LedgerConflict):
            await start(ledger)


async def test_an_identical_supporting_replay_returns_the_stored_record(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        first = await ledger.store_supporting(
            "run-1", artifact("ev-1"), [event("evidence_captured")]
        )
        replay = await ledger.store_supporting(
            "run-1", artifact("ev-1"), [event("evidence_captured")]
        )
        assert not first.replayed
        assert replay.replayed
        assert replay.artifacts == first.artifacts
        assert replay.events == ()
        assert len((await ledger.page_trace("run-1")).events) == 2
        assert (await ledger.get_run("run-1")).version == 1


async def test_a_divergent_supporting_replay_is_a_conflict(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await ledger.store_supporting("run-1", artifact("ev-1"), [])
        for divergent in (
            artifact("ev-1", body={"different": "body"}),
            artifact("ev-1", producer="release_auditor"),
            artifact("ev-1", source_refs=()),
            artifact("ev-1", redaction="partial"),
            artifact("ev-1", schema_version="1.1"),
        ):
            with pytest.raises(LedgerConflict):
                await ledger.store_supporting("run-1", divergent, [event()])
        assert len(await ledger.list_artifacts("run-1")) == 3
        assert len((await ledger.page_trace("run-1")).events) == 1


async def test_the_artifact_quota_accepts_the_limit_and_rejects_one_more(ledger_url: str) -> None:
    async with open_ledger(ledger_url, limits=Limits(max_artifacts=6)) as ledger:
        await start(ledger)  # 2 artifacts
        await step(ledger, "run-1", 1, [artifact(f"a-{i}") for i in range(4)])  # exactly 6
        with pytest.raises(LimitExceeded, match="artifact limit of 6"):
            await step(ledger, "run-1", 2, [artifact("a-over")], [event()])
        with pytest.raises(LimitExceeded):
            await ledger.store_supporting("run-1", artifact("a-over"), [])
        assert (await ledger.get_run("run-1")).version == 2
        assert len(await ledger.list_artifacts("run-1")) == 6
        assert len((await ledger.page_trace("run-1")).events) == 1
        assert (await ledger.verify_run("run-1")).ok


async def test_the_event_quota_accepts_the_limit_and_rejects_one_more(ledger_url: str) -> None:
    async with open_ledger(ledger_url, limits=Limits(max_events=5)) as ledger:
        await start(ledger)  # 1 event
        await ledger.record_events("run-1", [event()] * 3)
        await step(ledger, "run-1", 1, [], [event()])  # exactly 5
        with pytest.raises(LimitExceeded, match="trace event limit of 5"):
            await step(ledger, "run-1", 2, [artifact("late")], [event()])
        with pytest.raises(LimitExceeded):
            await ledger.record_events("run-1", [event()])
        assert (await ledger.get_run("run-1")).version == 2
        assert len(await ledger.list_artifacts("run-1")) == 2
        assert len((await ledger.page_trace("run-1")).events) == 5


async def test_evidence_is_limited_per_current_work_plan(ledger_url: str) -> None:
    async with open_ledger(ledger_url, limits=Limits(max_evidence_per_plan=2)) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("plan-1", "WorkPlan")])
        await ledger.store_supporting("run-1", artifact("ev-1"), [])
        await ledger.store_supporting("run-1", artifact("ev-2"), [])
        with pytest.raises(LimitExceeded, match="Evidence limit of 2"):
            await ledger.store_supporting("run-1", artifact("ev-3"), [])
        # A new plan opens a new allowance, even within the same commit.
        await step(ledger, "run-1", 2, [artifact("plan-2", "WorkPlan"), artifact("ev-3")])
        await ledger.store_supporting("run-1", artifact("ev-4"), [])
        with pytest.raises(LimitExceeded):
            await ledger.store_supporting("run-1", artifact("ev-5"), [])


async def test_one_scenario_spec_is_allowed_per_problem_frame(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        frame = "artifact://run-1/frame-1"
        spec = artifact("spec-1", "ScenarioSpec", quota_key=frame)
        await ledger.store_supporting("run-1", spec, [])
        assert (await ledger.store_supporting("run-1", spec, [])).replayed
        with pytest.raises(LimitExceeded, match="Only one ScenarioSpec"):
            await ledger.store_supporting(
                "run-1", artifact("spec-2", "ScenarioSpec", quota_key=frame), []
            )
        other = artifact("spec-3", "ScenarioSpec", quota_key="artifact://run-1/frame-2")
        await ledger.store_supporting("run-1", other, [])


async def test_an_event_id_recorded_once_is_written_once_and_a_repeat_without_once_conflicts(
    ledger_url: str,
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        before = await ledger.get_run("run-1")
        (first,) = await ledger.record_events("run-1", [event(event_id="check-1")], once=True)
        assert first.event_id == "check-1"
        written = await ledger.get_run("run-1")
        again = await ledger.record_events(
            "run-1", [event(event_id="check-1"), event(event_id="check-2")], once=True
        )
        assert [e.event_id for e in again] == ["check-2"]
        assert await ledger.record_events("run-1", [event(event_id="check-2")], once=True) == ()
        page = await ledger.page_trace("run-1")
        assert [e.event_id for e in page.events].count("check-1") == 1
        assert written.version == before.version
        with pytest.raises(LedgerConflict, match="already exists"):
            await ledger.record_events("run-1", [event(event_id="check-1")])
        assert (await ledger.verify_run("run-1")).ok


async def test_the_trace_pages_in_sequence_and_says_when_there_is_more(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await ledger.record_events("run-1", [event(decision_summary=f"e{i}") for i in range(6)])
        first = await ledger.page_trace("run-1", after_sequence=0, limit=3)
        assert [e.sequence for e in first.events] == [1, 2, 3]
        assert first.has_more
        second = await ledger.page_trace("run-1", after_sequence=3, limit=4)
        assert [e.sequence for e in second.events] == [4, 5, 6, 7]
        assert not second.has_more
        exact = await ledger.page_trace("run-1", after_sequence=4, limit=3)
        assert [e.decision_summary for e in exact.events] == ["e3", "e4", "e5"]
        assert not exact.has_more
        assert (await ledger.page_trace("run-1", after_sequence=7)).events == ()
        with pytest.raises(UsageError):
            await ledger.page_trace("run-1", limit=0)


async def test_list_runs_is_newest_first_and_carries_no_request_text(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger, "run-b", updated=5)
        await start(ledger, "run-a", updated=5)
        await start(ledger, "run-c", updated=1)
        await start(ledger, "run-d", updated=9)
        runs = await ledger.list_runs()
        assert [r.run_id for r in runs] == ["run-d", "run-a", "run-b", "run-c"]
        assert [r.run_id for r in await ledger.list_runs(limit=2)] == ["run-d", "run-a"]
        assert REQUEST_TEXT not in repr(runs)
        # The records are whole; what the list shows of one leaves out its root and state.
        entries = [r.summary_wire() for r in runs]
        assert not {"repositoryRoot", "budgets", "controllerState"} & set(entries[0])
        assert "/srv/checkout" not in repr(entries)
        assert "step" not in repr(entries)


async def test_a_listed_run_is_its_whole_record_and_a_copy(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        (listed,) = await ledger.list_runs()
        assert listed == await ledger.get_run("run-1")
        cast("dict[str, Any]", listed.controller_state)["step"] = 99
        assert (await ledger.get_run("run-1")).controller_state == {"step": 1}
        assert (await ledger.list_runs())[0].controller_state == {"step": 1}


async def test_a_permission_denial_is_recorded_without_a_step(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        decision = {"decision": "deny", "capability": "repository.write", "policyRefs": []}
        (denied,) = await ledger.record_events(
            "run-1", [event("permission_checked", permission_decision=decision)]
        )
        assert denied.sequence == 2
        page = await ledger.page_trace("run-1")
        assert page.events[1].permission_decision == decision
        assert (await ledger.get_run("run-1")).version == 1


async def test_verify_run_checks_every_record_of_an_intact_run(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        await step(ledger, "run-1", 1, [artifact("a-1"), artifact("a-2")], [event(), event()])
        await ledger.store_supporting("run-1", artifact("ev-1"), [event()])
        report = await ledger.verify_run("run-1")
        assert report.ok
        assert report.first_broken is None
        assert report.records_checked == 3 + 2 + 3 + 1


async def test_unknown_runs_and_artifacts_are_not_found(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        for call in (
            ledger.get_run("nope"),
            ledger.list_artifacts("nope"),
            ledger.page_trace("nope"),
            ledger.verify_run("nope"),
            ledger.read_artifact("run-1", "nope"),
            ledger.read_artifact("nope", "run-1"),
            ledger.record_events("nope", [event()]),
            step(ledger, "nope", 1),
        ):
            with pytest.raises(NotFound):
                await call


async def test_a_step_must_raise_the_version_by_one(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        with pytest.raises(UsageError):
            await ledger.commit_step("run-1", 1, run_record(version=3), [], [])
        with pytest.raises(UsageError):
            await ledger.commit_step("run-1", 1, run_record(version=2, requested_mode="x"), [], [])
        assert (await ledger.get_run("run-1")).version == 1


@pytest.mark.slow
@only("memory-asyncio", "sqlite-asyncio")
async def test_the_real_limits_of_2048_artifacts_and_10000_events_hold(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)  # 2 artifacts, 1 event
        version = 1
        made = 2
        while made < 2048:
            count = min(256, 2048 - made)
            batch = [artifact(f"a-{made + i}", "ContextDocument") for i in range(count)]
            await step(ledger, "run-1", version, batch)
            version += 1
            made += len(batch)
        with pytest.raises(LimitExceeded):
            await step(ledger, "run-1", version, [artifact("one-too-many")])
        events = 1
        while events < 10_000:
            count = min(1000, 10_000 - events)
            await ledger.record_events("run-1", [event()] * count)
            events += count
        with pytest.raises(LimitExceeded):
            await ledger.record_events("run-1", [event()])
        assert len(await ledger.list_artifacts("run-1")) == 2048
        assert (await ledger.page_trace("run-1", after_sequence=9_999)).events[0].sequence == 10_000
        assert (await ledger.verify_run("run-1")).ok


async def test_read_changes_returns_only_what_was_appended_after_a_point(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        everything = await ledger.read_changes("run-1")
        assert (everything.artifact_count, everything.event_count) == (2, 1)
        assert [a.record.artifact_id for a in everything.artifacts] == ["run-1-request", "run-1"]
        await step(ledger, "run-1", 1, [artifact("a-1")], [event(), event()])
        await ledger.store_supporting("run-1", artifact("ev-1"), [event("evidence_captured")])

        changes = await ledger.read_changes("run-1", after_artifact=2, after_event=1)
        assert changes.run == await ledger.get_run("run-1")
        assert (changes.artifact_count, changes.event_count) == (4, 4)
        assert [a.record.artifact_id for a in changes.artifacts] == ["a-1", "ev-1"]
        assert [a.record.position for a in changes.artifacts] == [3, 4]
        assert changes.artifacts[1] == await ledger.read_artifact("run-1", "ev-1")
        assert [e.sequence for e in changes.events] == [2, 3, 4]
        assert changes.events == (await ledger.page_trace("run-1", 1)).events

        nothing = await ledger.read_changes("run-1", after_artifact=4, after_event=4)
        assert (nothing.artifacts, nothing.events) == ((), ())
        with pytest.raises(NotFound):
            await ledger.read_changes("run-2")
        with pytest.raises(UsageError):
            await ledger.read_changes("run-1", after_artifact=-1)
