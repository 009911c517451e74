"""Actor references: tell, ask typed by the request, stop, and what happens to pending work."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
import anyio.abc
import pytest

from telic_actors import (
    Actor,
    ActorRef,
    ActorStopped,
    Ask,
    MailboxFull,
    MessageRefused,
    open_runtime,
)


@dataclass(frozen=True)
class Add:
    amount: int


@dataclass(frozen=True)
class Total(Ask[int]):
    pass


@dataclass(frozen=True)
class Hold(Ask[str]):
    entered: anyio.Event = field(compare=False)
    release: anyio.Event = field(compare=False)


@dataclass(frozen=True)
class StopYourself(Ask[str]):
    pass


CounterMessage = Add | Total | Hold | StopYourself


class Counter(Actor[CounterMessage]):
    def __init__(self) -> None:
        self.total = 0
        self.stopped = False

    async def on_message(self, message: CounterMessage) -> object:
        match message:
            case Add(amount):
                self.total += amount
                return None
            case Total():
                return self.total
            case Hold(entered, release):
                entered.set()
                await release.wait()
                return "released"
            case StopYourself():
                await self.ref.stop()
                return "stopping"

    async def on_stop(self) -> None:
        self.stopped = True


async def _hold(
    tg: anyio.abc.TaskGroup, ref: ActorRef[CounterMessage], results: list[object]
) -> anyio.Event:
    """Park the actor inside a message; return the event that releases it."""
    entered, release = anyio.Event(), anyio.Event()

    async def ask() -> None:
        results.append(await ref.ask(Hold(entered, release)))

    tg.start_soon(ask)
    await entered.wait()
    return release


@pytest.mark.anyio
async def test_ask_returns_the_reply_and_tell_is_fire_and_forget() -> None:
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(Counter, name="counter")
            await ref.tell(Add(2))
            ref.tell_nowait(Add(3))
            total: int = await ref.ask(Total())
            assert ref.is_alive
            assert repr(ref) == "<ActorRef 'counter' alive>"
    assert total == 5
    assert not ref.is_alive


@pytest.mark.anyio
async def test_wrong_and_oversized_messages_are_refused_before_reaching_the_actor() -> None:
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(
                Counter, max_message_bytes=3, size_of=lambda m: len(repr(getattr(m, "amount", "")))
            )
            with pytest.raises(MessageRefused) as wrong:
                await ref.tell("add two")  # type: ignore[arg-type]
            with pytest.raises(MessageRefused) as large:
                ref.tell_nowait(Add(10_000))
            await ref.tell(Add(999))
            assert await ref.ask(Total()) == 999
            stats = ref.statistics()
    assert (wrong.value.reason, large.value.reason) == ("wrong_type", "too_large")
    assert (stats.refused, stats.delivered) == (2, 2)


@pytest.mark.anyio
async def test_tell_waits_at_capacity_and_tell_nowait_raises_mailbox_full() -> None:
    results: list[object] = []
    with anyio.fail_after(5):
        async with open_runtime() as runtime, anyio.create_task_group() as tg:
            ref = runtime.spawn(Counter, mailbox_capacity=2)
            release = await _hold(tg, ref, results)
            ref.tell_nowait(Add(1))
            ref.tell_nowait(Add(1))
            with pytest.raises(MailboxFull):
                ref.tell_nowait(Add(1))
            tg.start_soon(ref.tell, Add(1))
            tg.start_soon(ref.tell, Add(1))
            await anyio.wait_all_tasks_blocked()
            assert ref.statistics().tasks_waiting_send == 2
            release.set()
            assert await ref.ask(Total()) == 4
    assert results == ["released"]


@pytest.mark.anyio
async def test_stop_finishes_the_message_in_hand_and_fails_the_queued_asks() -> None:
    results: list[object] = []
    failures: list[ActorStopped] = []
    actor = Counter()

    async def doomed_ask(ref: ActorRef[CounterMessage]) -> None:
        try:
            await ref.ask(Total())
        except ActorStopped as stopped:
            failures.append(stopped)

    with anyio.fail_after(5):
        async with open_runtime() as runtime, anyio.create_task_group() as tg:
            ref = runtime.spawn(lambda: actor, name="counter")
            release = await _hold(tg, ref, results)
            for _ in range(3):
                tg.start_soon(doomed_ask, ref)
            await ref.tell(Add(1))
            await ref.tell(Add(1))
            await anyio.wait_all_tasks_blocked()
            assert ref.statistics().current_buffer_used == 5

            tg.start_soon(ref.stop)
            await anyio.wait_all_tasks_blocked()
            assert not ref.is_alive
            assert len(failures) == 3
            release.set()
            await ref.stop()
            stats = ref.statistics()
            with pytest.raises(MessageRefused) as late:
                await ref.tell(Add(1))
    assert results == ["released"]
    assert actor.stopped
    assert [f.actor for f in failures] == ["counter"] * 3
    assert failures[0].code == "actor_stopped"
    assert (stats.delivered, stats.dropped, stats.current_buffer_used) == (1, 5, 0)
    assert late.value.reason == "closed"


@pytest.mark.anyio
async def test_an_actor_can_stop_itself_without_waiting_on_itself() -> None:
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(Counter)
            assert await ref.ask(StopYourself()) == "stopping"
            await ref.stop()
            assert not ref.is_alive
            assert runtime.children == ()
