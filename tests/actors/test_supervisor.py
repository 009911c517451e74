"""Supervision: restarts by policy, escalation to the parent, cancellation is not failure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import anyio
import anyio.abc
import pytest

from telic_actors import (
    Actor,
    ActorCrashed,
    ActorRef,
    ActorStopped,
    Ask,
    RestartPolicy,
    SupervisionEscalated,
    UsageError,
    open_runtime,
)


@dataclass(frozen=True)
class Note:
    seq: int


@dataclass(frozen=True)
class Crash(Ask[None]):
    why: str = "boom"


@dataclass(frozen=True)
class Ping(Ask[tuple[int, list[int]]]):
    """Answered with (incarnation, notes seen by this incarnation)."""


@dataclass(frozen=True)
class Park(Ask[str]):
    entered: anyio.Event = field(compare=False)
    release: anyio.Event = field(compare=False)


Message = Note | Crash | Ping | Park


@dataclass
class Journal:
    starts: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)
    fail_next_start: set[str] = field(default_factory=set)


class Worker(Actor[Message]):
    def __init__(self, journal: Journal, name: str) -> None:
        self.journal = journal
        self.name = name
        self.notes: list[int] = []

    async def on_start(self) -> None:
        self.journal.starts[self.name] += 1
        if self.name in self.journal.fail_next_start:
            self.journal.fail_next_start.discard(self.name)
            raise RuntimeError("cannot start")

    async def on_message(self, message: Message) -> object:
        match message:
            case Note(seq):
                self.notes.append(seq)
                return None
            case Crash(why):
                raise RuntimeError(why)
            case Ping():
                return self.journal.starts[self.name], list(self.notes)
            case Park(entered, release):
                entered.set()
                await release.wait()
                return "released"

    async def on_failure(self, exception: Exception) -> None:
        self.journal.failures.append((self.name, str(exception)))


def worker(journal: Journal, name: str) -> Worker:
    return Worker(journal, name)


def escalation(group: BaseExceptionGroup[BaseException]) -> SupervisionEscalated:
    """The one SupervisionEscalated inside (possibly nested) exception groups."""
    found: BaseException | None = group.split(SupervisionEscalated)[0]
    while isinstance(found, BaseExceptionGroup):
        (found,) = found.exceptions
    assert isinstance(found, SupervisionEscalated)
    return found


async def park(
    tg: anyio.abc.TaskGroup, ref: ActorRef[Message], outcomes: list[object]
) -> anyio.Event:
    """Hold the actor inside a message (asked from ``tg``); return the releasing event."""
    entered, release = anyio.Event(), anyio.Event()

    async def ask() -> None:
        try:
            outcomes.append(await ref.ask(Park(entered, release)))
        except (ActorStopped, ActorCrashed) as error:
            outcomes.append(error)

    tg.start_soon(ask)
    await entered.wait()
    return release


@pytest.mark.anyio
async def test_a_crash_fails_the_ask_in_hand_and_the_restarted_actor_keeps_the_queue() -> None:
    journal = Journal()
    outcomes: list[object] = []
    crash_outcome: list[BaseException] = []

    async def ask_crash(ref: ActorRef[Message]) -> None:
        try:
            await ref.ask(Crash("boom"))
        except ActorCrashed as crashed:
            crash_outcome.append(crashed)

    with anyio.fail_after(5):
        async with open_runtime() as runtime, anyio.create_task_group() as tg:
            ref = runtime.spawn(lambda: worker(journal, "a"), name="a")
            release = await park(tg, ref, outcomes)
            tg.start_soon(ask_crash, ref)
            await anyio.wait_all_tasks_blocked()
            await ref.tell(Note(1))
            release.set()
            incarnation, notes = await ref.ask(Ping())
    assert outcomes == ["released"]
    (crashed,) = crash_outcome
    assert isinstance(crashed, ActorCrashed)
    assert crashed.actor == "a"
    assert isinstance(crashed.exception, RuntimeError)
    assert crashed.__cause__ is crashed.exception
    assert crashed.code == "actor_crashed"
    assert (incarnation, notes) == (2, [1])
    assert journal.failures == [("a", "boom")]
    assert runtime.restart_count == 1


@pytest.mark.anyio
async def test_one_for_one_restarts_only_the_crashed_child() -> None:
    journal = Journal()
    with anyio.fail_after(5):
        async with open_runtime(policy=RestartPolicy("one_for_one")) as runtime:
            a = runtime.spawn(lambda: worker(journal, "a"), name="a")
            b = runtime.spawn(lambda: worker(journal, "b"), name="b")
            await b.tell(Note(7))
            with pytest.raises(ActorCrashed):
                await a.ask(Crash())
            assert (await a.ask(Ping()))[0] == 2
            assert await b.ask(Ping()) == (1, [7])
    assert journal.starts == {"a": 2, "b": 1}


@pytest.mark.anyio
async def test_one_for_all_restarts_every_child_and_fails_their_asks_in_hand() -> None:
    journal = Journal()
    outcomes: list[object] = []
    with anyio.fail_after(5):
        async with (
            open_runtime(policy=RestartPolicy("one_for_all")) as runtime,
            anyio.create_task_group() as tg,
        ):
            a = runtime.spawn(lambda: worker(journal, "a"), name="a")
            b = runtime.spawn(lambda: worker(journal, "b"), name="b")
            await b.tell(Note(7))
            await park(tg, b, outcomes)
            await b.tell(Note(8))
            with pytest.raises(ActorCrashed):
                await a.ask(Crash())
            assert (await a.ask(Ping()))[0] == 2
            assert await b.ask(Ping()) == (2, [8])
    assert journal.starts == {"a": 2, "b": 2}
    assert journal.failures == [("a", "boom")]
    (stopped,) = outcomes
    assert isinstance(stopped, ActorStopped)
    assert runtime.restart_count == 1


@pytest.mark.anyio
async def test_a_failing_start_counts_as_a_failure_and_is_restarted() -> None:
    journal = Journal(fail_next_start={"a"})
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(lambda: worker(journal, "a"), name="a")
            assert (await ref.ask(Ping()))[0] == 2
    assert journal.failures == [("a", "cannot start")]


@pytest.mark.anyio
async def test_too_many_restarts_within_the_window_escalate_to_the_parent() -> None:
    journal = Journal()
    outcomes: list[object] = []
    queued: list[BaseException] = []
    policy = RestartPolicy(max_restarts=2, within=60)

    async def queued_ping(ref: ActorRef[Message]) -> None:
        try:
            await ref.ask(Ping())
        except ActorCrashed as crashed:
            queued.append(crashed)

    async def crash_three_times() -> None:
        async with anyio.create_task_group() as outside, open_runtime(policy=policy) as runtime:
            a = runtime.spawn(lambda: worker(journal, "a"), name="a")
            for _ in range(2):
                with pytest.raises(ActorCrashed):
                    await a.ask(Crash())
            release = await park(outside, a, outcomes)
            await a.tell(Crash("last straw"))
            outside.start_soon(queued_ping, a)
            await anyio.wait_all_tasks_blocked()
            release.set()
            await anyio.Event().wait()  # the escalation cancels this block

    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as caught:
        await crash_three_times()
    escalated = escalation(caught.value)
    assert (escalated.supervisor, escalated.child) == ("root", "a")
    assert (escalated.max_restarts, escalated.within) == (2, 60)
    assert str(escalated.__cause__) == "last straw"
    assert escalated.code == "supervision_escalated"
    assert outcomes == ["released"]
    (crashed,) = queued
    assert isinstance(crashed, ActorCrashed)
    assert str(crashed.exception) == "last straw"
    assert journal.starts["a"] == 3


@pytest.mark.anyio
async def test_restarts_older_than_the_window_are_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [0.0]
    monkeypatch.setattr(anyio, "current_time", lambda: now[0])
    journal = Journal()
    restarts: list[int] = []

    async def crash_at_times() -> None:
        async with open_runtime(policy=RestartPolicy(max_restarts=1, within=10)) as runtime:
            a = runtime.spawn(lambda: worker(journal, "a"), name="a")
            for at in (0.0, 10.5):
                now[0] = at
                with pytest.raises(ActorCrashed):
                    await a.ask(Crash())
                await a.ask(Ping())
                restarts.append(runtime.restart_count)
            now[0] = 11.0
            await a.tell(Crash())
            await anyio.Event().wait()  # the escalation cancels this block

    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as caught:
        await crash_at_times()
    assert escalation(caught.value).child == "a"
    assert restarts == [1, 2]
    assert journal.starts["a"] == 3


@pytest.mark.anyio
async def test_a_nested_supervisor_that_gives_up_is_restarted_by_its_parent() -> None:
    journal = Journal()
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            team = runtime.spawn_supervisor(name="team", policy=RestartPolicy(max_restarts=0))
            a = team.spawn(lambda: worker(journal, "a"), name="a")
            b = runtime.spawn(lambda: worker(journal, "b"), name="b")
            await a.tell(Note(1))
            with pytest.raises(ActorCrashed):
                await a.ask(Crash())
            assert await a.ask(Ping()) == (2, [])
            assert await b.ask(Ping()) == (1, [])
            assert runtime.children == ("team", "b")
            assert team.children == ("a",)
            assert (runtime.restart_count, team.restart_count) == (1, 0)
            await team.stop()
            assert not a.is_alive
            assert "team" not in runtime.children
    assert journal.starts == {"a": 2, "b": 1}


@pytest.mark.anyio
async def test_cancelling_the_runtime_is_not_a_failure_and_is_not_swallowed() -> None:
    journal = Journal()
    outcomes: list[object] = []
    reached_after_cancel = False
    with anyio.fail_after(5):
        async with anyio.create_task_group() as outside:
            with anyio.CancelScope() as scope:
                async with open_runtime() as runtime:
                    a = runtime.spawn(lambda: worker(journal, "a"), name="a")
                    team = runtime.spawn_supervisor(name="team")
                    b = team.spawn(lambda: worker(journal, "b"), name="b")
                    await park(outside, a, outcomes)
                    await b.ask(Ping())
                    scope.cancel()
                    await anyio.lowlevel.checkpoint()
                    reached_after_cancel = True
    assert scope.cancelled_caught
    assert not reached_after_cancel
    (stopped,) = outcomes
    assert isinstance(stopped, ActorStopped)
    assert journal.failures == []
    assert journal.starts == {"a": 1, "b": 1}
    assert (runtime.restart_count, team.restart_count) == (0, 0)
    assert not a.is_alive
    assert not b.is_alive


def test_a_restart_policy_rejects_nonsense() -> None:
    with pytest.raises(UsageError):
        RestartPolicy("rest_for_one")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        RestartPolicy(max_restarts=-1)
    with pytest.raises(UsageError):
        RestartPolicy(within=0)


@pytest.mark.anyio
async def test_names_are_unique_and_a_stopped_supervisor_spawns_nothing() -> None:
    journal = Journal()
    async with open_runtime() as runtime:
        runtime.spawn(lambda: worker(journal, "a"), name="a")
        with pytest.raises(UsageError, match="already has"):
            runtime.spawn(lambda: worker(journal, "a"), name="a")
        team = runtime.spawn_supervisor(name="team")
        await team.stop()
        with pytest.raises(UsageError, match="stopped"):
            team.spawn(lambda: worker(journal, "c"))
    with pytest.raises(UsageError):
        runtime.spawn(lambda: worker(journal, "d"))
