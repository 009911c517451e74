"""The actor lifecycle as a state machine: start, tell, ask, crash, restart, stop.

Hypothesis drives one runtime per example through a blocking portal, once on asyncio and once
on trio. Invariants: every ask gets a reply or a typed error; every message offered is
delivered, dropped, refused or still queued, and the counts match the model exactly.
Apart from the machine: an idle actor holds on to nothing it has handled.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import ClassVar

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from telic_actors import (
    Actor,
    ActorCrashed,
    ActorError,
    ActorRef,
    ActorStopped,
    Ask,
    MessageRefused,
    RestartPolicy,
    Supervisor,
    open_runtime,
)


@dataclass(frozen=True)
class Note:
    value: int


@dataclass(frozen=True)
class Recall(Ask[tuple[int, list[int]]]):
    """Answered with (incarnation, notes this incarnation has seen)."""


@dataclass(frozen=True)
class Crash(Ask[None]):
    pass


@dataclass(frozen=True)
class Park(Ask[str]):
    entered: anyio.Event = field(compare=False)
    release: anyio.Event = field(compare=False)


Message = Note | Recall | Crash | Park


class Probe(Actor[Message]):
    def __init__(self, starts: list[int]) -> None:
        self.starts = starts
        self.notes: list[int] = []

    async def on_start(self) -> None:
        self.starts[0] += 1

    async def on_message(self, message: Message) -> object:
        match message:
            case Note(value):
                self.notes.append(value)
                return None
            case Recall():
                return self.starts[0], list(self.notes)
            case Crash():
                raise RuntimeError("crash requested")
            case Park(entered, release):
                entered.set()
                await release.wait()
                return "released"


async def _outcome(ref: ActorRef[Message], request: Recall | Crash | Park) -> object:
    """The reply, or the typed error the ask failed with; anything else escapes."""
    with anyio.fail_after(5):
        try:
            return await ref.ask(request)
        except ActorError as error:
            return error


async def _until(predicate: Callable[[], bool]) -> None:
    """Let the other tasks run until ``predicate`` holds (bounded, no sleeping)."""
    with anyio.fail_after(5):
        while not predicate():
            await anyio.lowlevel.checkpoint()


async def _run_runtime(*, task_status: anyio.abc.TaskStatus[Supervisor]) -> None:
    """Host a runtime in the portal until the machine's teardown cancels it."""
    async with open_runtime(policy=RestartPolicy(max_restarts=1_000, within=60)) as runtime:
        task_status.started(runtime)
        await anyio.Event().wait()


async def _stop_within_bounds(runtime: Supervisor) -> None:
    with anyio.fail_after(5):
        await runtime.stop()


class ActorLifecycle(RuleBasedStateMachine):
    backend: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.stack = ExitStack()
        self.portal = self.stack.enter_context(
            anyio.from_thread.start_blocking_portal(self.backend)
        )
        self.running, self.runtime = self.portal.start_task(_run_runtime)
        self.generation = 0
        self.ref: ActorRef[Message] | None = None
        self.alive = False
        self.starts = [0]
        self.incarnation = 0
        self.notes: list[int] = []
        self.sent = self.refused = self.dropped = 0
        self.asks = self.answered = 0

    def teardown(self) -> None:
        try:
            self.portal.call(_stop_within_bounds, self.runtime)
        finally:
            self.running.cancel()
            self.stack.close()

    # -- helpers ----------------------------------------------------------------------------

    def ask(self, request: Recall | Crash) -> object:
        assert self.ref is not None
        self.sent += 1
        self.asks += 1
        outcome = self.portal.call(_outcome, self.ref, request)
        self.answered += 1
        if not self.alive:
            assert isinstance(outcome, MessageRefused)
            assert outcome.reason == "closed"
            self.refused += 1
        return outcome

    def tell(self, message: object) -> MessageRefused | None:
        assert self.ref is not None
        self.sent += 1
        try:
            self.portal.call(self.ref.tell, message)  # type: ignore[arg-type]
        except MessageRefused as refused:
            self.refused += 1
            return refused
        return None

    # -- rules ------------------------------------------------------------------------------

    @precondition(lambda self: not self.alive)
    @rule()
    def start(self) -> None:
        self.generation += 1
        self.starts = [0]
        name = f"probe-{self.generation}"
        self.ref = self.portal.call(
            lambda: self.runtime.spawn(lambda: Probe(self.starts), name=name)
        )
        self.alive, self.incarnation, self.notes = True, 1, []
        self.sent = self.refused = self.dropped = 0

    @precondition(lambda self: self.ref is not None)
    @rule(value=st.integers())
    def tell_note(self, value: int) -> None:
        refused = self.tell(Note(value))
        if self.alive:
            assert refused is None
            self.notes.append(value)
        else:
            assert refused is not None
            assert refused.reason == "closed"

    @precondition(lambda self: self.ref is not None)
    @rule(message=st.one_of(st.text(), st.integers(), st.none()))
    def tell_wrong_type(self, message: object) -> None:
        refused = self.tell(message)
        assert refused is not None
        assert refused.reason == ("wrong_type" if self.alive else "closed")

    @precondition(lambda self: self.ref is not None)
    @rule()
    def recall(self) -> None:
        outcome = self.ask(Recall())
        if self.alive:
            assert outcome == (self.incarnation, self.notes)

    @precondition(lambda self: self.ref is not None)
    @rule()
    def crash_by_ask(self) -> None:
        outcome = self.ask(Crash())
        if self.alive:
            assert isinstance(outcome, ActorCrashed)
            assert isinstance(outcome.exception, RuntimeError)
            self.incarnation += 1
            self.notes = []

    @precondition(lambda self: self.alive)
    @rule()
    def crash_by_tell(self) -> None:
        assert self.tell(Crash()) is None
        self.incarnation += 1
        self.notes = []

    @precondition(lambda self: self.alive)
    @rule()
    def stop(self) -> None:
        assert self.ref is not None
        self.portal.call(self.ref.stop)
        self.alive = False

    @precondition(lambda self: self.alive)
    @rule(asks=st.integers(0, 4), tells=st.integers(0, 4))
    def stop_with_work_pending(self, asks: int, tells: int) -> None:
        assert self.ref is not None
        ref = self.ref
        outcomes: list[object] = []

        async def scenario() -> None:
            entered, release = anyio.Event(), anyio.Event()

            async def ask(request: Recall | Park) -> None:
                outcomes.append(await _outcome(ref, request))

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask, Park(entered, release))
                await entered.wait()
                for _ in range(asks):
                    tg.start_soon(ask, Recall())
                for value in range(tells):
                    await ref.tell(Note(value))
                await _until(lambda: ref.statistics().current_buffer_used == asks + tells)
                tg.start_soon(ref.stop)
                await _until(lambda: not ref.is_alive and len(outcomes) == asks)
                release.set()

        self.portal.call(scenario)
        self.sent += 1 + asks + tells
        self.asks += 1 + asks
        self.answered += len(outcomes)
        self.dropped += asks + tells
        assert outcomes[-1] == "released"
        assert sum(isinstance(o, ActorStopped) for o in outcomes) == asks
        self.alive = False

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def every_ask_is_answered_by_a_reply_or_a_typed_error(self) -> None:
        assert self.answered == self.asks

    @invariant()
    def every_message_is_delivered_dropped_refused_or_queued(self) -> None:
        if self.ref is None:
            return
        stats = self.portal.call(self.ref.statistics)
        accounted = stats.delivered + stats.dropped + stats.refused + stats.current_buffer_used
        assert accounted == self.sent
        assert (stats.refused, stats.dropped) == (self.refused, self.dropped)
        assert self.ref.is_alive == self.alive
        if not self.alive:
            assert stats.current_buffer_used == 0


_SETTINGS = settings(max_examples=60, stateful_step_count=20, deadline=None)


class AsyncioLifecycle(ActorLifecycle):
    backend = "asyncio"


class TrioLifecycle(ActorLifecycle):
    backend = "trio"


TestActorLifecycleOnAsyncio = AsyncioLifecycle.TestCase
TestActorLifecycleOnAsyncio.settings = _SETTINGS
TestActorLifecycleOnTrio = TrioLifecycle.TestCase
TestActorLifecycleOnTrio.settings = _SETTINGS


class Bulk:
    """An answer that may pin a large state."""


@dataclass(frozen=True)
class Load(Ask[Bulk]):
    """A request that may pin a large state."""


class Loader(Actor[Load]):
    async def on_message(self, message: Load) -> Bulk:
        return Bulk()


@pytest.mark.anyio
async def test_an_idle_actor_keeps_neither_its_last_message_nor_its_answer_alive() -> None:
    async with open_runtime() as runtime:
        ref = runtime.spawn(Loader)
        request = Load()
        answer = await ref.ask(request)
        left = weakref.ref(request), weakref.ref(answer)
        del request, answer
        await _until(lambda: ref.statistics().tasks_waiting_receive == 1)  # idle, waiting for mail
        gc.collect()
        assert [r() for r in left] == [None, None]
        assert ref.is_alive
