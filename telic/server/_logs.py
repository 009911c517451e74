"""Server log lines for the clients that asked for them with ``logging/setLevel``.

A client of the handshake-era protocol sets a level; from then on every record of the
``telic`` loggers at or above it reaches that client as a ``notifications/message`` (and still
goes wherever the process logs). Records travel through a small buffer drained by one task of
the server's lifespan, so logging never waits for a client: when the buffer is full, or a record
is logged off the event loop's thread, the client simply does not get that line.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

_LEVELS: Final[tuple[tuple[int, types.LoggingLevel], ...]] = (
    (70, "emergency"),
    (60, "alert"),
    (logging.CRITICAL, "critical"),
    (logging.ERROR, "error"),
    (logging.WARNING, "warning"),
    (25, "notice"),
    (logging.INFO, "info"),
    (logging.DEBUG, "debug"),
)
_NUMBERS: Final = {name: number for number, name in _LEVELS}
_BUFFER: Final = 64


def mcp_level(levelno: int) -> types.LoggingLevel:
    """The MCP level of a Python log level: the highest one at or below it."""
    return next((name for number, name in _LEVELS if levelno >= number), "debug")


class _Forward(logging.Handler):
    def __init__(self, logs: ClientLogs) -> None:
        super().__init__()
        self._logs = logs

    def emit(self, record: logging.LogRecord) -> None:
        self._logs.offer(record.levelno, record.name, self.format(record))


class ClientLogs:
    """Which clients want log lines at which level, and the task that sends them."""

    def __init__(self, logger: str = "telic") -> None:
        self._logger = logging.getLogger(logger)
        self._subscribers: dict[int, tuple[Any, int]] = {}
        self._send: MemoryObjectSendStream[tuple[int, str, str]] | None = None
        self._thread: int | None = None

    def subscribe(self, key: object | None, session: Any, level: types.LoggingLevel) -> None:
        """Send ``session`` every record at ``level`` or above (``key``: its MCP session)."""
        number = _NUMBERS[level]
        self._subscribers[id(key) if key is not None else id(session)] = (session, number)
        if self._logger.getEffectiveLevel() > number:
            self._logger.setLevel(number)  # a record below the logger's level is never made

    def offer(self, levelno: int, name: str, text: str) -> None:
        """Queue one record for the subscribers, if any wants it and there is room."""
        if self._send is None or threading.get_ident() != self._thread:
            return
        if not any(levelno >= number for _, number in self._subscribers.values()):
            return
        with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
            self._send.send_nowait((levelno, name, text))

    async def _drain(self, receive: MemoryObjectReceiveStream[tuple[int, str, str]]) -> None:
        async for levelno, name, text in receive:
            for key, (session, number) in list(self._subscribers.items()):
                if levelno < number:
                    continue
                notification = types.LoggingMessageNotification(
                    params=types.LoggingMessageNotificationParams(
                        level=mcp_level(levelno), logger=name, data=text
                    )
                )
                try:
                    await session.send_notification(notification)
                except Exception:  # a client that went away gets no more lines
                    self._subscribers.pop(key, None)

    @asynccontextmanager
    async def forwarding(self) -> AsyncIterator[None]:
        """Forward records to the subscribers while the server serves."""
        handler = _Forward(self)
        send, receive = anyio.create_memory_object_stream[tuple[int, str, str]](_BUFFER)
        self._send, self._thread = send, threading.get_ident()
        self._logger.addHandler(handler)
        try:
            async with send, receive, anyio.create_task_group() as tg:
                tg.start_soon(self._drain, receive)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._logger.removeHandler(handler)
            self._send = self._thread = None
