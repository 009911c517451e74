"""What a supervisor supervises: the actor cell, which runs one incarnation at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import anyio

from ._actor import Actor
from ._errors import ActorCrashed, ActorError, ActorStopped
from ._mailbox import Mailbox, _Reply
from ._ref import ActorRef

M = TypeVar("M")


class _Child:
    """The part of a child that its supervisor drives: run, interrupt, stop, close for good."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.scope: anyio.CancelScope | None = None
        """Cancel scope of the running incarnation (set by the supervisor)."""
        self.restart_pending = False
        """The supervisor interrupted this child to restart it (one-for-all)."""
        self.stopping = False
        self.supervised = False
        """A supervisor task is running this child (or about to restart it)."""
        self.failure: Exception | None = None
        """The failure that ended the last incarnation, if one did."""
        self.terminated = anyio.Event()

    async def run_once(self) -> None:
        """Run one incarnation; return when stopped, raise when it fails."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Ask the child to stop and wait for it (unless called from inside it)."""
        raise NotImplementedError

    def close(self) -> None:
        """Terminate for good: nothing will run this child again."""
        raise NotImplementedError

    def runs_in(self, task_id: int) -> bool:
        """Whether the task is this child's own (or a descendant's): it must not wait on us."""
        raise NotImplementedError


class _Cell(_Child, Generic[M]):
    """One actor under supervision: its mailbox outlives its incarnations."""

    def __init__(
        self, name: str, factory: Callable[[], Actor[M]], first: Actor[M], mailbox: Mailbox[M]
    ) -> None:
        super().__init__(name)
        self.mailbox = mailbox
        self.ref = ActorRef(self)
        self._factory = factory
        self._first: Actor[M] | None = first
        self._task_id: int | None = None

    async def run_once(self) -> None:
        if self.stopping:
            return
        actor, self._first = self._first or self._factory(), None
        actor._ref = self.ref
        self._task_id = anyio.get_current_task().id
        self.failure = None
        in_flight: _Reply | None = None
        try:
            await actor.on_start()
            while True:
                try:
                    envelope = await self.mailbox._take()
                except anyio.EndOfStream:
                    break
                in_flight = envelope.reply
                result = await actor.on_message(envelope.message)
                if in_flight is not None:
                    in_flight.resolve(result)
                    in_flight = None
                # An idle actor must not keep its last message and reply alive: they may hold
                # large states, and nothing else may ever refer to them again.
                del envelope, result
            await actor.on_stop()
        except Exception as exc:
            self.failure = exc
            if in_flight is not None:
                in_flight.fail(ActorCrashed(self.name, exc))
                in_flight = None
            await actor.on_failure(exc)
            raise
        finally:
            # Cancelled (runtime shutdown or a one-for-all restart): the ask cannot be answered.
            if in_flight is not None:
                in_flight.fail(ActorStopped(self.name))
            self._task_id = None

    async def stop(self) -> None:
        if not self.stopping:
            self.stopping = True
            self.mailbox._discard(lambda: ActorStopped(self.name))
            if not self.supervised:
                self.close()
        if not self.runs_in(anyio.get_current_task().id):
            await self.terminated.wait()

    def runs_in(self, task_id: int) -> bool:
        return task_id == self._task_id

    def close(self) -> None:
        if self.terminated.is_set():
            return
        self.stopping = True
        failure = self.failure
        error: Callable[[], ActorError] = (
            (lambda: ActorCrashed(self.name, failure))
            if failure is not None
            else (lambda: ActorStopped(self.name))
        )
        self.mailbox._discard(error)
        self.terminated.set()
