"""The runtime: owns the root supervisor, stops everything cleanly, loses no message."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import anyio
import pytest

from telic_actors import (
    Actor,
    ActorRef,
    ActorStopped,
    Ask,
    Supervisor,
    UsageError,
    open_runtime,
)


@dataclass(frozen=True)
class Note:
    sender: int
    seq: int


@dataclass(frozen=True)
class Tally(Ask[dict[int, int]]):
    pass


@dataclass(frozen=True)
class Park(Ask[None]):
    entered: anyio.Event = field(compare=False)
    release: anyio.Event = field(compare=False)


class Tallier(Actor[Note | Tally | Park]):
    """Counts notes per sender and checks that each sender's notes arrive in order."""

    def __init__(self, name: str = "tallier", stops: list[str] | None = None) -> None:
        self.name = name
        self.stops = stops if stops is not None else []
        self.counts: dict[int, int] = {}
        self.out_of_order = 0

    async def on_message(self, message: Note | Tally | Park) -> object:
        match message:
            case Note(sender, seq):
                expected = self.counts.get(sender, 0)
                self.out_of_order += seq != expected
                self.counts[sender] = expected + 1
                return None
            case Tally():
                return dict(self.counts)
            case Park(entered, release):
                entered.set()
                await release.wait()
                return None

    async def on_stop(self) -> None:
        self.stops.append(self.name)


@pytest.mark.anyio
async def test_ten_thousand_concurrent_tells_from_a_hundred_tasks_all_arrive() -> None:
    actor = Tallier()

    async def sender(index: int) -> None:
        for seq in range(100):
            await ref.tell(Note(index, seq))

    with anyio.fail_after(20):
        async with open_runtime() as runtime:
            ref = runtime.spawn(lambda: actor, mailbox_capacity=16)
            async with anyio.create_task_group() as tg:
                for index in range(100):
                    tg.start_soon(sender, index)
            counts = await ref.ask(Tally())
            stats = ref.statistics()
    assert counts == dict.fromkeys(range(100), 100)
    assert sum(counts.values()) == 10_000
    assert actor.out_of_order == 0
    assert (stats.delivered, stats.refused, stats.dropped) == (10_001, 0, 0)


@pytest.mark.anyio
async def test_leaving_the_runtime_stops_every_actor_newest_first() -> None:
    stops: list[str] = []
    with anyio.fail_after(5):
        async with open_runtime(name="app") as runtime:
            assert isinstance(runtime, Supervisor)
            assert runtime.name == "app"
            refs = [runtime.spawn(partial(Tallier, n, stops), name=n) for n in "abc"]
            team = runtime.spawn_supervisor(name="team")
            refs.append(team.spawn(lambda: Tallier("d", stops), name="d"))
            for ref in refs:
                await ref.ask(Tally())
            assert repr(runtime) == "<Supervisor 'app' children=4>"
    assert stops == ["d", "c", "b", "a"]
    assert not any(ref.is_alive for ref in refs)
    assert runtime.children == ()


@pytest.mark.anyio
async def test_an_error_in_the_block_cancels_the_actors_and_fails_their_asks() -> None:
    stops: list[str] = []
    failures: list[BaseException] = []

    async def parked_ask(park: Park) -> None:
        try:
            await refs[0].ask(park)
        except ActorStopped as stopped:
            failures.append(stopped)

    async def fail_with_work_pending() -> None:
        entered, release = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as outside, open_runtime() as runtime:
            started.append(runtime)
            ref = runtime.spawn(lambda: Tallier("a", stops), name="a")
            refs.append(ref)
            outside.start_soon(parked_ask, Park(entered, release))
            await entered.wait()
            outside.start_soon(parked_ask, Park(anyio.Event(), release))
            await anyio.wait_all_tasks_blocked()
            raise LookupError("the block failed")

    started: list[Supervisor] = []
    refs: list[ActorRef[Note | Tally | Park]] = []
    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as caught:
        await fail_with_work_pending()
    (runtime,), (ref,) = started, refs
    assert caught.group_contains(LookupError)
    assert len(failures) == 2
    assert stops == []  # cancelled, not stopped: on_stop does not run
    assert not ref.is_alive
    with pytest.raises(UsageError):
        runtime.spawn(Tallier)
