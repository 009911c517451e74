"""Bounded, typed mailboxes on anyio memory object streams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar

import anyio

from ._errors import (
    ActorError,
    ActorStopped,
    MailboxFull,
    MessageRefused,
    RefusalReason,
    UsageError,
)

M = TypeVar("M")


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
