"""The runtime, in the order a message travels: a bounded mailbox, the reference a sender holds,
the cell whose loop hands each message to its actor, the supervisor that runs and restarts cells,
and ``open_runtime``, the root of them all."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, Literal, TypeVar, cast

import anyio
from anyio.abc import TaskGroup

from ._actor import Actor, Ask
from ._errors import (
    ActorCrashed,
    ActorError,
    ActorStopped,
    MailboxFull,
    MessageRefused,
    RefusalReason,
    SupervisionEscalated,
    UsageError,
)

M = TypeVar("M")
R = TypeVar("R")

_anonymous = itertools.count(1)


# ---------------------------------------------------------------------- bounded, typed mailboxes


class _Reply:
    """The one-shot answer slot of an ask: a value or an error, set once."""

    __slots__ = ("_error", "_event", "_value")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: object = None
        self._error: BaseException | None = None

    @property
    def settled(self) -> bool:
        return self._event.is_set()

    def resolve(self, value: object) -> None:
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def fail(self, error: BaseException) -> None:
        if not self._event.is_set():
            self._error = error
            self._event.set()

    async def wait(self) -> object:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


@dataclass(frozen=True, slots=True)
class _Envelope(Generic[M]):
    message: M
    reply: _Reply | None


@dataclass(frozen=True, slots=True)
class MailboxStatistics:
    """A snapshot of a mailbox: its buffer, its waiting tasks and what became of its messages.

    Every message a sender offers ends up exactly once in ``refused`` (at the sender),
    ``delivered`` (handed to the receiver), ``dropped`` (discarded when the mailbox was
    discarded) or is still in the buffer.
    """

    current_buffer_used: int
    """Messages waiting in the buffer."""
    max_buffer_size: int
    """Capacity in messages."""
    tasks_waiting_send: int
    """Senders blocked because the buffer is full (backpressure)."""
    tasks_waiting_receive: int
    """Receivers blocked because the buffer is empty."""
    delivered: int
    """Messages handed to the receiver."""
    refused: int
    """Messages refused at the sender (wrong type, too large, closed)."""
    dropped: int
    """Accepted messages discarded undelivered (their asks failed)."""
    closed: bool
    """Whether the mailbox no longer accepts messages."""


class Mailbox(Generic[M]):
    """A bounded mailbox that accepts only messages of its declared types and sizes.

    Refusals happen at the sender (`MessageRefused`), a full mailbox makes `send` wait
    (backpressure) and `send_nowait` raise `MailboxFull`. Use it as a context manager, or call
    `discard` when done, so that nothing stays queued unaccounted for.

    Args:
        accepts: The message type, or a tuple of types, this mailbox accepts.
        capacity: How many messages the buffer holds before senders wait.
        max_message_bytes: Largest accepted message as measured by ``size_of``.
        size_of: Measures a message in bytes; required with ``max_message_bytes``.
        name: Used in errors and statistics.
    """

    def __init__(
        self,
        accepts: type[M] | tuple[type[M], ...],
        *,
        capacity: int = 64,
        max_message_bytes: int | None = None,
        size_of: Callable[[M], int] | None = None,
        name: str = "mailbox",
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
            raise UsageError(f"mailbox capacity must be an int >= 0, not {capacity!r}")
        if max_message_bytes is not None and size_of is None:
            raise UsageError("max_message_bytes needs a size_of function to measure messages")
        self._accepts: tuple[type[M], ...] = accepts if isinstance(accepts, tuple) else (accepts,)
        self._capacity = capacity
        self._max_message_bytes = max_message_bytes
        self._size_of = size_of
        self.name = name
        self._send, self._receive = anyio.create_memory_object_stream[_Envelope[M]](capacity)
        self._closed = False
        self._delivered = 0
        self._refused = 0
        self._dropped = 0

    @property
    def accepts(self) -> tuple[type[M], ...]:
        """The accepted message types."""
        return self._accepts

    @property
    def capacity(self) -> int:
        """Capacity in messages."""
        return self._capacity

    @property
    def closed(self) -> bool:
        """Whether the mailbox no longer accepts messages."""
        return self._closed

    def check(self, message: object) -> None:
        """Raise `MessageRefused` if ``message`` has a wrong type or is too large (uncounted)."""
        if not isinstance(message, self._accepts):
            raise self._refusal("wrong_type", message)
        if self._max_message_bytes is not None and self._size_of is not None:
            size = self._size_of(message)
            if size > self._max_message_bytes:
                raise self._refusal("too_large", message, size=size)

    async def send(self, message: M) -> None:
        """Enqueue ``message``, waiting while the mailbox is full.

        Raises:
            MessageRefused: The message is of a wrong type, too large, or the mailbox closed.
        """
        await self._post(message, None)

    def send_nowait(self, message: M) -> None:
        """Enqueue ``message`` now.

        Raises:
            MailboxFull: The mailbox is at capacity.
            MessageRefused: The message is of a wrong type, too large, or the mailbox closed.
        """
        self._post_nowait(message, None)

    async def receive(self) -> M:
        """Take the next message, waiting while the mailbox is empty.

        Raises:
            anyio.EndOfStream: The mailbox is closed and empty.
        """
        return (await self._take()).message

    def receive_nowait(self) -> M:
        """Take the next message now.

        Raises:
            anyio.WouldBlock: The mailbox is empty.
            anyio.EndOfStream: The mailbox is closed and empty.
        """
        try:
            envelope = self._receive.receive_nowait()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None
        self._delivered += 1
        return envelope.message

    def __aiter__(self) -> Mailbox[M]:
        return self

    async def __anext__(self) -> M:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Stop accepting messages; queued ones stay receivable, blocked senders are refused."""
        self._closed = True
        self._send.close()

    def discard(self) -> int:
        """Close, drop every queued message (failing its ask) and release the streams.

        Returns:
            How many messages were dropped.
        """
        return self._discard(lambda: ActorStopped(self.name))

    def statistics(self) -> MailboxStatistics:
        """Return a snapshot of the buffer, the waiting tasks and the message counts."""
        stream = self._receive.statistics()
        return MailboxStatistics(
            current_buffer_used=stream.current_buffer_used,
            max_buffer_size=self._capacity,
            tasks_waiting_send=stream.tasks_waiting_send,
            tasks_waiting_receive=stream.tasks_waiting_receive,
            delivered=self._delivered,
            refused=self._refused,
            dropped=self._dropped,
            closed=self.closed,
        )

    def __enter__(self) -> Mailbox[M]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.discard()

    def __repr__(self) -> str:
        return f"<Mailbox {self.name!r} capacity={self._capacity} closed={self.closed}>"

    # -- for the runtime: envelopes carry the reply slot of an ask ------------------------

    async def _post(self, message: M, reply: _Reply | None) -> None:
        self._admit(message)
        try:
            await self._send.send(_Envelope(message, reply))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._refused += 1
            raise self._refusal("closed", message) from None

    def _post_nowait(self, message: M, reply: _Reply | None) -> None:
        self._admit(message)
        try:
            self._send.send_nowait(_Envelope(message, reply))
        except anyio.WouldBlock:
            raise MailboxFull(mailbox=self.name, capacity=self._capacity) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._refused += 1
            raise self._refusal("closed", message) from None

    async def _take(self) -> _Envelope[M]:
        try:
            envelope = await self._receive.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None
        self._delivered += 1
        return envelope

    def _discard(self, error: Callable[[], ActorError]) -> int:
        """Close both ends; queued asks fail with ``error()``, queued tells count as dropped."""
        self.close()
        dropped = 0
        while True:
            try:
                envelope = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            dropped += 1
            if envelope.reply is not None:
                envelope.reply.fail(error())
        self._receive.close()
        self._dropped += dropped
        return dropped

    def _admit(self, message: object) -> None:
        if self._closed:
            self._refused += 1
            raise self._refusal("closed", message)
        try:
            self.check(message)
        except MessageRefused:
            self._refused += 1
            raise

    def _refusal(
        self, reason: RefusalReason, message: object, *, size: int | None = None
    ) -> MessageRefused:
        kind = type(message)
        return MessageRefused(
            reason,
            mailbox=self.name,
            message_type=f"{kind.__module__}.{kind.__qualname__}",
            size=size,
            limit=self._max_message_bytes if size is not None else None,
        )


# ---------------------------------------------------------------------- references


class ActorRef(Generic[M]):
    """A handle on a supervised actor: tell it, ask it, stop it.

    The reference stays valid across restarts: messages still queued when the actor crashes
    are handled by its next incarnation.
    """

    __slots__ = ("_cell",)

    def __init__(self, cell: _Cell[M]) -> None:
        self._cell = cell

    @property
    def name(self) -> str:
        """The actor's name, unique under its supervisor."""
        return self._cell.name

    @property
    def is_alive(self) -> bool:
        """Whether the actor still accepts messages (false once it is stopping or stopped)."""
        return not self._cell.stopping

    async def tell(self, message: M) -> None:
        """Send ``message`` without waiting for it to be handled; waits while the mailbox is full.

        Raises:
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
        """
        await self._cell.mailbox._post(message, None)

    def tell_nowait(self, message: M) -> None:
        """Send ``message`` now.

        Raises:
            MailboxFull: The mailbox is at capacity.
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
        """
        self._cell.mailbox._post_nowait(message, None)

    async def ask(self, request: Ask[R]) -> R:
        """Send ``request`` and wait for the actor's reply, typed by the request's ``Ask[R]``.

        Raises:
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
            ActorCrashed: The actor failed before replying (the failure is the cause).
            ActorStopped: The actor stopped or was interrupted before replying.
        """
        reply = _Reply()
        await self._cell.mailbox._post(cast(M, request), reply)
        return cast(R, await reply.wait())

    async def stop(self) -> None:
        """Stop the actor and wait until it has stopped.

        The message in hand is finished, queued asks fail with `ActorStopped` (queued tells
        count as dropped), then ``on_stop`` runs. Called from the actor itself, it does not
        wait. Stopping a stopped actor does nothing.
        """
        await self._cell.stop()

    def statistics(self) -> MailboxStatistics:
        """Return the statistics of the actor's mailbox."""
        return self._cell.mailbox.statistics()

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "stopped"
        return f"<ActorRef {self.name!r} {state}>"


# ---------------------------------------------------------------------- cells: one actor each


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


# ---------------------------------------------------------------------- supervision

Strategy = Literal["one_for_one", "one_for_all"]
"""Which children restart when one fails: only that one, or all of them."""


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How a supervisor answers a child's failure.

    A failure is answered by a restart while fewer than ``max_restarts`` restarts happened in
    the last ``within`` seconds (anyio's monotonic clock); otherwise the supervisor gives up
    and raises `SupervisionEscalated` to its parent.
    """

    strategy: Strategy = "one_for_one"
    """``one_for_one`` restarts the failed child; ``one_for_all`` restarts every child."""
    max_restarts: int = 3
    """Restarts allowed within the window; ``0`` escalates the first failure."""
    within: float = 5.0
    """Length of the window in seconds."""

    def __post_init__(self) -> None:
        if self.strategy not in ("one_for_one", "one_for_all"):
            raise UsageError(f"unknown restart strategy {self.strategy!r}")
        if self.max_restarts < 0:
            raise UsageError("max_restarts must be >= 0")
        if not self.within > 0:
            raise UsageError("within must be a positive number of seconds")


class Supervisor(_Child):
    """Owns children (actors and supervisors) in a task group and restarts them by its policy.

    Failures travel up, never sideways: a child's exception reaches only its supervisor,
    which restarts or escalates. Cancellation is not a failure: it is never answered by a
    restart and always propagates. Get the root from `open_runtime`, nested ones from
    `spawn_supervisor`.
    """

    def __init__(self, *, name: str, policy: RestartPolicy | None = None) -> None:
        super().__init__(name)
        self.policy = policy if policy is not None else RestartPolicy()
        self.restart_count = 0
        """How many restarts this supervisor performed over its life."""
        self._children: dict[str, _Child] = {}
        self._task_group: TaskGroup | None = None
        self._done = anyio.Event()
        self._restarts: deque[float] = deque()

    @property
    def children(self) -> tuple[str, ...]:
        """Names of the live children, in the order they were spawned."""
        return tuple(self._children)

    def spawn(
        self,
        actor_factory: Callable[[], Actor[M]],
        *,
        name: str | None = None,
        mailbox_capacity: int = 64,
        max_message_bytes: int | None = None,
        size_of: Callable[[M], int] | None = None,
    ) -> ActorRef[M]:
        """Start an actor under this supervisor and return its reference.

        ``actor_factory`` (an actor class or any callable) is called now for the first
        incarnation and again for each restart. The mailbox accepts the actor's
        ``message_types``.

        Raises:
            UsageError: The name is taken, the supervisor is stopped, or the mailbox settings
                are wrong.
        """
        self._check_spawnable(name)
        actor = actor_factory()
        name = name if name is not None else f"{type(actor).__name__}-{next(_anonymous)}"
        self._check_spawnable(name)
        accepts = cast("tuple[type[M], ...]", type(actor).message_types)
        mailbox = Mailbox(
            accepts,
            capacity=mailbox_capacity,
            max_message_bytes=max_message_bytes,
            size_of=size_of,
            name=name,
        )
        cell = _Cell(name, actor_factory, actor, mailbox)
        self._adopt(cell)
        return cell.ref

    def spawn_supervisor(self, *, name: str, policy: RestartPolicy | None = None) -> Supervisor:
        """Start a nested supervisor; when it gives up, this one treats that as a child failure."""
        self._check_spawnable(name)
        child = Supervisor(name=name, policy=policy)
        self._adopt(child)
        return child

    async def stop(self) -> None:
        """Stop every child, newest first, then this supervisor, and wait until it has stopped.

        Called from inside one of its actors, it does not wait for that actor.
        """
        inside = self.runs_in(anyio.get_current_task().id)
        if not self.stopping:
            self.stopping = True
            try:
                for child in reversed(list(self._children.values())):
                    await child.stop()
            finally:
                # Even when cancelled midway, a later stop() must not wait for nothing.
                self._done.set()
                if not self.supervised:
                    self.close()
        if not inside:
            await self.terminated.wait()

    def __repr__(self) -> str:
        return f"<Supervisor {self.name!r} children={len(self._children)}>"

    # -- driven by the parent (or by open_runtime for the root) ----------------------------

    async def run_once(self) -> None:
        if self.stopping:
            return
        self._restarts.clear()
        async with anyio.create_task_group() as task_group:
            self._attach(task_group)
            try:
                await self._done.wait()
            finally:
                self._task_group = None

    def close(self) -> None:
        self.stopping = True
        for child in list(self._children.values()):
            child.close()
        self._children.clear()
        self._done.set()
        self.terminated.set()

    def runs_in(self, task_id: int) -> bool:
        return any(child.runs_in(task_id) for child in self._children.values())

    def _attach(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        for child in list(self._children.values()):
            task_group.start_soon(self._supervise, child, name=f"{self.name}/{child.name}")

    def _check_spawnable(self, name: str | None) -> None:
        if self.stopping:
            raise UsageError(f"supervisor {self.name!r} is stopped")
        if name is not None and name in self._children:
            raise UsageError(f"supervisor {self.name!r} already has a child named {name!r}")

    def _adopt(self, child: _Child) -> None:
        self._children[child.name] = child
        if self._task_group is not None:
            self._task_group.start_soon(self._supervise, child, name=f"{self.name}/{child.name}")

    async def _supervise(self, child: _Child) -> None:
        child.supervised = True
        try:
            while True:
                child.restart_pending = False
                with anyio.CancelScope() as scope:
                    child.scope = scope
                    try:
                        await child.run_once()
                    except Exception as exc:
                        if child.stopping:
                            break
                        self._failed(child, exc)
                        continue
                    finally:
                        child.scope = None
                if child.restart_pending and not child.stopping:
                    continue
                break
            if self._children.get(child.name) is child:
                del self._children[child.name]
            child.close()
        finally:
            child.supervised = False

    def _failed(self, child: _Child, exc: Exception) -> None:
        """Answer a failure: restart (the child, or all) or escalate when the window is full."""
        now = anyio.current_time()
        while self._restarts and self._restarts[0] <= now - self.policy.within:
            self._restarts.popleft()
        if len(self._restarts) >= self.policy.max_restarts:
            raise SupervisionEscalated(
                supervisor=self.name,
                child=child.name,
                max_restarts=self.policy.max_restarts,
                within=self.policy.within,
            ) from exc
        self._restarts.append(now)
        self.restart_count += 1
        if self.policy.strategy == "one_for_all":
            for sibling in self._children.values():
                if sibling is not child and sibling.scope is not None and not sibling.stopping:
                    sibling.restart_pending = True
                    sibling.scope.cancel()


# ---------------------------------------------------------------------- the root


@asynccontextmanager
async def open_runtime(
    *, policy: RestartPolicy | None = None, name: str = "root"
) -> AsyncIterator[Supervisor]:
    """Open an actor runtime and yield its root supervisor.

    Leaving the block normally stops every actor cleanly (newest first, each finishing the
    message in hand). Like a task group, the block is cancelled when the root supervisor gives
    up, and errors leave it as an ``ExceptionGroup`` (catch `SupervisionEscalated` with
    ``except*``). On any exit, asks still pending fail with a typed error.

    Args:
        policy: The root supervisor's restart policy.
        name: The root supervisor's name.
    """
    root = Supervisor(name=name, policy=policy)
    try:
        async with anyio.create_task_group() as task_group:
            root._attach(task_group)
            yield root
            await root.stop()
    finally:
        root.close()
