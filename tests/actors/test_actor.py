"""Actors: typed message sets, one message at a time in mailbox order, lifecycle hooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar

import anyio
import pytest

from telic_actors import Actor, ActorCrashed, Ask, UsageError, open_runtime

T = TypeVar("T")


@dataclass(frozen=True)
class Note:
    seq: int


@dataclass(frozen=True)
class Log(Ask[list[int]]):
    pass


@dataclass(frozen=True)
class Hold(Ask[None]):
    entered: anyio.Event = field(compare=False)
    release: anyio.Event = field(compare=False)


class Recorder(Actor[Note | Log | Hold]):
    """Records notes; tracks how many messages it is handling at once."""

    def __init__(self, events: list[str] | None = None) -> None:
        self.seen: list[int] = []
        self.active = 0
        self.max_active = 0
        self.events = events if events is not None else []

    async def on_start(self) -> None:
        self.events.append("start")

    async def on_message(self, message: Note | Log | Hold) -> object:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            match message:
                case Note(seq):
                    self.events.append(f"note {seq}")
                    self.seen.append(seq)
                    await anyio.lowlevel.checkpoint()
                    return None
                case Log():
                    return list(self.seen)
                case Hold(entered, release):
                    entered.set()
                    await release.wait()
                    return None
        finally:
            self.active -= 1

    async def on_stop(self) -> None:
        self.events.append("stop")


def test_message_types_are_read_from_the_type_argument() -> None:
    class One(Actor[Note]):
        pass

    class Wrapped(Actor[Annotated[Note, "meta"]]):
        pass

    class Parametrised(Actor[list[int]]):
        pass

    class Anything(Actor[Any]):
        pass

    assert Recorder.message_types == (Note, Log, Hold)
    assert One.message_types == (Note,)
    assert Wrapped.message_types == (Note,)
    assert Parametrised.message_types == (list,)
    assert Anything.message_types == (object,)


def test_a_generic_subclass_inherits_and_its_specialisation_sets_the_types() -> None:
    class Base(Actor[T], Generic[T]):
        pass

    class Concrete(Base[Note]):
        message_types = (Note,)

    assert Base.message_types == (object,)
    assert Concrete.message_types == (Note,)


def test_unreadable_message_types_are_a_usage_error_unless_declared() -> None:
    with pytest.raises(UsageError, match="message_types"):

        class Bad(Actor[Literal["go"]]):
            pass

    class Declared(Actor[Literal["go"]]):
        message_types = (str,)

    assert Declared.message_types == (str,)


def test_an_actor_has_no_ref_before_it_is_spawned() -> None:
    with pytest.raises(UsageError):
        _ = Recorder().ref


@pytest.mark.anyio
async def test_an_actor_handles_its_mailbox_in_order_one_message_at_a_time() -> None:
    actor = Recorder()
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(lambda: actor, mailbox_capacity=8)
            async with anyio.create_task_group() as tg:
                for seq in range(200):
                    await ref.tell(Note(seq))
                tg.start_soon(ref.ask, Log())
            log = await ref.ask(Log())
    assert log == list(range(200))
    assert actor.max_active == 1
    assert ref.name.startswith("Recorder-")


@pytest.mark.anyio
async def test_hooks_run_start_then_messages_then_stop() -> None:
    events: list[str] = []
    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(lambda: Recorder(events), name="rec")
            await ref.tell(Note(1))
            await ref.ask(Log())
    assert events == ["start", "note 1", "stop"]


@pytest.mark.anyio
async def test_an_actor_that_does_not_override_on_message_fails_on_its_first_message() -> None:
    class Silent(Actor[Log]):
        pass

    with anyio.fail_after(5):
        async with open_runtime() as runtime:
            ref = runtime.spawn(Silent)
            with pytest.raises(ActorCrashed) as crashed:
                await ref.ask(Log())
    assert isinstance(crashed.value.exception, NotImplementedError)
