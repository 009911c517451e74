"""Read deadlines of ``telic serve --http``: a request must arrive in time, or its connection
is closed.

uvicorn (on h11, the protocol ``_transport`` runs it with) bounds only the idle time between
two requests (``timeout_keep_alive``); it has no deadline for the request itself, so a client
that sends its headers or its body a byte at a time, or nothing at all after connecting, holds
a connection (and, mid-body, a task of the app) forever. ``read_deadline_protocol`` gives the
h11 protocol two deadlines of ``seconds`` each:

* the headers: from the connection's start, or the end of the previous response, until the
  request's headers are complete. Past it the connection is closed, after a bare ``408
  Request Timeout`` when part of a request had arrived (an idle keep-alive connection is just
  closed, as uvicorn's own keep-alive timeout does);
* the body: from the end of the headers until the body is complete. Past it the request is
  answered ``408`` (unless the app already answered) and the connection closed; the app sees
  the client disconnect.

Each is one warning line on uvicorn's error log, never a traceback.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Protocol

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from telic.server._config import DEFAULT_READ_TIMEOUT

_TIMED_OUT: Final = (
    b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
)


class _Timer(Protocol):
    def cancel(self) -> None: ...


class _ReadDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline on reading each request's headers and body."""

    read_timeout: ClassVar[float] = DEFAULT_READ_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: _Timer | None = None
        self._reading: object = None

    def connection_made(self, transport: Any) -> None:
        """Start the headers' deadline as the connection opens."""
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does, then move the deadline to what is awaited now."""
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        """After a response the next request's headers are awaited: a fresh deadline."""
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        """Nothing is awaited on a closed connection."""
        self._disarm()
        super().connection_lost(exc)

    def _watch(self) -> None:
        state = self.conn.their_state
        if state is not h11.IDLE and state is not h11.SEND_BODY:
            self._disarm()  # the request is read (or the connection is ending)
        elif state is not self._reading:
            self._disarm()
            self._reading = state
            self._deadline = self.loop.call_later(self.read_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._reading = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        seconds = f"{self.read_timeout:g} s"
        cycle = self.cycle
        if self.conn.their_state is h11.SEND_BODY and cycle is not None:
            self.logger.warning(
                "Closed a connection whose request body did not arrive within %s (408).", seconds
            )
            if not cycle.response_started:
                self.transport.write(_TIMED_OUT)
            cycle.disconnected = True  # the app's receive says http.disconnect; its sends drop
            cycle.message_event.set()
        elif self.conn.trailing_data[0]:
            self.logger.warning(
                "Closed a connection whose request headers did not arrive within %s (408).",
                seconds,
            )
            self.transport.write(_TIMED_OUT)
        self.transport.close()


def read_deadline_protocol(seconds: float) -> type[H11Protocol]:
    """The h11 protocol class for ``uvicorn.Config(http=...)`` with read deadlines of
    ``seconds`` on each request's headers and on its body."""
    return type("ReadDeadlineProtocol", (_ReadDeadline,), {"read_timeout": float(seconds)})
