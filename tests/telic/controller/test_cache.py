"""The controller's copy of a run's state: never stale, never trusted over the ledger on read."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from telic._errors import IntegrityError
from telic.controller import Accepted, Controller, RunState, StepResult, SubmitArtifact, Token, step
from telic.ledger import ArtifactBody, Ledger, NewArtifact, open_ledger
from telic.protocol._canonical import canonical_json

from .builders import READ, Flow, clock_from, ids_from
from .counting import CountingLedger

pytestmark = pytest.mark.anyio

VERIFY = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read it",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}


async def _to_execute(flow: Flow) -> None:
    b = flow.b
    b.permissions = READ
    b.verifications = [VERIFY]
    await flow.ground()
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    await flow.submit("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])]))


async def test_a_run_advanced_by_another_controller_on_the_same_file_is_seen(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'state'}"
    async with open_ledger(url) as first_ledger, open_ledger(url) as second_ledger:
        flow = await Flow.start(first_ledger, "analyze_only")
        b = flow.b
        b.permissions = READ
        b.verifications = [VERIFY]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        mine = flow.controller
        cached = await mine.load(b.run_id)  # the first controller now holds version 3
        other = Controller(second_ledger, clock=clock_from(100), new_id=ids_from("other"))
        action = await other.get_next_action(b.run_id)
        moved = await other.submit_artifact(b.run_id, action.id, 3, "TaskContract", b.contract())

        state = await mine.load(b.run_id)
        assert state.run.version == moved.run.version == 4
        assert state.latest("TaskContract") is not None
        assert len(state.trace) == len(cached.trace) + 1
        assert (await mine.get_next_action(b.run_id)).id == moved.next_action.id
        flow.last = moved
        await flow.submit("PromptReview", b.prompt_review())
        assert flow.version == 5


async def test_a_supporting_artifact_stored_between_load_and_commit_is_not_lost(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'state'}"
    async with open_ledger(url) as first_ledger, open_ledger(url) as second_ledger:
        flow = await Flow.start(first_ledger, "analyze_only")
        await _to_execute(flow)
        b, mine = flow.b, flow.controller
        state = await mine.load(b.run_id)
        other = Controller(second_ledger, clock=clock_from(100), new_id=ids_from("other"))
        await other.submit_artifact(b.run_id, *flow.token(), "Evidence", b.evidence("evidence-1"))

        token = Token(*flow.token())
        submission = SubmitArtifact(
            token, "Evidence", b.evidence("evidence-2"), (), "2026-01-02T00:00:00.000Z"
        )
        outcome = step(state, submission)
        assert isinstance(outcome, Accepted)
        stored = await mine.settle(b.run_id, state, outcome, submission.now)
        assert isinstance(stored, StepResult)
        assert stored.artifact is not None
        assert stored.artifact.position == len(state.artifacts) + 2  # after the other's

        ids = [a.id for a in (await mine.load(b.run_id)).all("Evidence")]
        assert ids == ["evidence-1", "evidence-2"]
        fresh = await Controller(second_ledger).load(b.run_id)
        assert await mine.load(b.run_id) == fresh


async def test_the_kept_state_equals_a_fresh_load_from_the_ledger() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_execute(flow)
        b = flow.b
        await flow.submit("Evidence", b.evidence())
        await flow.submit("WorkResult", b.result())
        kept = await flow.controller.load(b.run_id)
        fresh = await Controller(ledger).load(b.run_id)
        assert kept == fresh
        assert [e.sequence for e in kept.trace] == list(range(1, len(kept.trace) + 1))


async def test_a_controller_keeping_one_run_serves_two_runs_correctly() -> None:
    async with open_ledger("memory://") as ledger:
        one = await Flow.start(ledger, "analyze_only", new_id=ids_from("one"))
        two = await Flow.start(ledger, "analyze_only", new_id=ids_from("two"))
        small = Controller(ledger, clock=clock_from(50), new_id=ids_from("small"), cached_runs=1)
        for flow in (one, two):
            flow.controller = small
        await one.ground()
        await two.ground()
        await one.submit("ProblemFrame", one.b.frame())
        await two.submit("ProblemFrame", two.b.frame())
        assert (one.version, two.version) == (3, 3)
        assert await small.load(one.b.run_id) == await Controller(ledger).load(one.b.run_id)


def _flip_a_byte(state_dir: Path, stored: ArtifactBody) -> None:
    """Corrupt a stored body where the SQLite ledger keeps it: a blob file, or a table row."""
    data = bytearray(stored.canonical)
    data[5] ^= 1
    hex_digest = stored.record.sha256.removeprefix("sha256:")
    blob = state_dir / "blobs" / "sha256" / hex_digest[:2] / hex_digest[2:]
    if blob.exists():
        blob.write_bytes(bytes(data))
        return
    with contextlib.closing(sqlite3.connect(state_dir / "ledger.sqlite3")) as db, db:
        changed = db.execute(
            "UPDATE blobs SET data = ? WHERE sha256 = ?", (bytes(data), stored.record.sha256)
        ).rowcount
    assert changed == 1


async def test_a_tampered_blob_is_detected_on_read_even_while_its_body_is_kept(
    tmp_path: Path,
) -> None:
    state_dir = tmp_path / "state"
    async with open_ledger(f"sqlite:///{state_dir}") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        b = flow.b
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        _flip_a_byte(state_dir, await flow.controller.get_artifact(b.run_id, "frame-1"))

        with pytest.raises(IntegrityError):
            await flow.controller.get_artifact(b.run_id, "frame-1")
        with pytest.raises(IntegrityError):
            await Controller(ledger).load(b.run_id)  # a fresh reader verifies every body
        assert not (await ledger.verify_run(b.run_id)).ok


async def test_a_carried_index_answers_as_one_built_from_scratch() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_execute(flow)
        b = flow.b
        await flow.submit("Evidence", b.evidence())
        kept = await flow.controller.load(b.run_id)  # extended step after step
        scratch = RunState(run=kept.run, artifacts=kept.artifacts, trace=kept.trace)
        for artifact in kept.artifacts:
            assert kept.by_id(artifact.id) is scratch.by_id(artifact.id) is artifact
            assert kept.all(artifact.type) == scratch.all(artifact.type)
            assert kept.latest(artifact.type) is scratch.latest(artifact.type)
        assert kept.by_id("no-such-id") is None
        assert kept.all("UserReport") == ()
        assert kept.latest("UserReport") is None


async def test_a_started_runs_kept_state_is_the_state_read_back() -> None:
    # How many ledger reads the kept run saves is measured in benchmarks/round_trips.py.
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        assert flow.last.state is not None
        assert flow.last.state == await Controller(ledger).load(flow.b.run_id)
        assert await flow.controller.load(flow.b.run_id) == flow.last.state


async def test_get_run_lists_what_the_ledger_lists() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_execute(flow)
        await flow.submit("Evidence", flow.b.evidence())
        details = await flow.controller.get_run(flow.b.run_id)
        assert details.artifacts == await ledger.list_artifacts(flow.b.run_id)
        assert details.run == await ledger.get_run(flow.b.run_id)


async def test_get_run_lists_artifacts_another_controller_appended(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state'}"
    async with open_ledger(url) as first_ledger, open_ledger(url) as second_ledger:
        flow = await Flow.start(first_ledger, "analyze_only")
        await _to_execute(flow)
        mine = flow.controller
        await mine.get_run(flow.b.run_id)
        other = Controller(second_ledger, clock=clock_from(100), new_id=ids_from("other"))
        await other.submit_artifact(
            flow.b.run_id, *flow.token(), "Evidence", flow.b.evidence("evidence-9")
        )
        details = await mine.get_run(flow.b.run_id)
        assert details.artifacts[-1].artifact_id == "evidence-9"
        assert details.artifacts == await first_ledger.list_artifacts(flow.b.run_id)


async def test_a_step_carries_its_state_when_nothing_was_written_in_between() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, "analyze_only")
        await _to_execute(flow)
        for kind, body in (("Evidence", flow.b.evidence()), ("WorkResult", flow.b.result())):
            result = await flow.submit(kind, body)
            assert result.state is not None
            assert result.state == await Controller(ledger).load(flow.b.run_id)
            assert result.state.run.version == result.run.version


async def test_a_step_carries_no_state_when_another_writer_came_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state'}"
    async with open_ledger(url) as first_ledger, open_ledger(url) as second_ledger:
        flow = await Flow.start(first_ledger, "analyze_only")
        await _to_execute(flow)
        b, mine = flow.b, flow.controller
        state = await mine.load(b.run_id)
        other = Controller(second_ledger, clock=clock_from(100), new_id=ids_from("other"))
        await other.submit_artifact(b.run_id, *flow.token(), "Evidence", b.evidence("evidence-1"))
        submission = SubmitArtifact(
            Token(*flow.token()),
            "Evidence",
            b.evidence("evidence-2"),
            (),
            "2026-01-02T00:00:00.000Z",
        )
        outcome = step(state, submission)
        assert isinstance(outcome, Accepted)
        stored = await mine.settle(b.run_id, state, outcome, submission.now)
        assert isinstance(stored, StepResult)
        assert stored.state is None  # the caller must load: the other's Evidence is not in it
        assert [a.id for a in (await mine.load(b.run_id)).all("Evidence")] == [
            "evidence-1",
            "evidence-2",
        ]


class _Recording(CountingLedger):
    """Keeps every artifact handed to the ledger."""

    def __init__(self, inner: Ledger) -> None:
        super().__init__(inner)
        self.artifacts: list[NewArtifact] = []

    async def store_supporting(self, run_id: str, artifact: NewArtifact, events: Any) -> Any:
        self.artifacts.append(artifact)
        return await self.inner.store_supporting(run_id, artifact, events)

    async def commit_step(
        self, run_id: str, version: int, run: Any, artifacts: Any, events: Any
    ) -> Any:
        self.artifacts.extend(artifacts)
        return await self.inner.commit_step(run_id, version, run, artifacts, events)


async def test_the_controller_hands_the_ledger_the_bytes_it_hashed_once() -> None:
    async with open_ledger("memory://") as ledger:
        recording = _Recording(ledger)
        flow = await Flow.start(recording.ledger, "analyze_only")
        await _to_execute(flow)
        await flow.submit("Evidence", flow.b.evidence())

        assert [a.type for a in recording.artifacts][-2:] == ["WorkPlan", "Evidence"]
        for new in recording.artifacts:
            assert new.canonical is not None
            assert new.canonical.body is new.body
            stored = await ledger.read_artifact(flow.b.run_id, new.artifact_id)
            assert stored.canonical == new.canonical.data == canonical_json(new.body)
