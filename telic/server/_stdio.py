"""Serve MCP over stdio: the pipes read and written by the event loop itself.

Pipes (how every host starts a server) are read and written without a hop to a worker thread
on the way in or out: a private non-blocking duplicate of each descriptor serves the wire while
the process's own stdin and stdout point elsewhere, so children and stray writes never touch
it. stdin or stdout that is not a pipe or a socket (a file, a terminal) is served by a daemon
reader thread and the SDK's own stdout instead.
"""

from __future__ import annotations

import contextvars
import io
import json
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Protocol

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

_READ_SIZE: Final = 65_536
"""Bytes asked of the pipe per read."""


class PipeLines(anyio.AsyncFile[str]):
    """Lines of a non-blocking pipe, read by the event loop itself.

    No thread and no hop per message: the loop reads what the pipe holds and waits for it to
    become readable only when it is empty. Cancelling the wait (a signal) ends the server.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(io.StringIO())
        self._fd = fd
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no newline
        self._ended = False

    async def readline(self) -> str:
        """The next line, or ``""`` at end of input."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0 or self._ended:
                size = end + 1 if end >= 0 else len(self._buffer)
                line = bytes(self._buffer[:size])
                del self._buffer[:size]
                self._scanned = 0
                return line.decode("utf-8", "replace")
            self._scanned = len(self._buffer)
            chunk = await self._chunk()
            self._ended = not chunk
            self._buffer += chunk

    async def _chunk(self) -> bytes:
        """What the pipe holds next (``b""``: end of input), once it holds something."""
        while True:
            try:
                return os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)


class StdinLines(PipeLines):
    """stdin read by a daemon thread, so a signal can end the server while a read is pending.

    The fallback for a stdin that is not a pipe or a socket (a file, a terminal). anyio's worker
    threads are joined at interpreter exit, and one blocked reading an open pipe would keep the
    process alive after the ledger is closed. A daemon thread reading a private duplicate of the
    descriptor with ``os.read`` holds no interpreter-level buffer lock, so the process can always
    exit.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self._chunks: anyio.abc.ObjectReceiveStream[bytes] | None = None

    async def _chunk(self) -> bytes:
        if self._chunks is None:
            self._chunks = self._start()
        try:
            return await self._chunks.receive()
        except anyio.EndOfStream:
            return b""

    def _start(self) -> anyio.abc.ObjectReceiveStream[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](0)
        token = anyio.lowlevel.current_token()
        fd = self._fd

        def pump() -> None:
            try:
                while chunk := os.read(fd, _READ_SIZE):
                    anyio.from_thread.run(send.send, chunk, token=token)
                anyio.from_thread.run_sync(send.close, token=token)
            except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the server is gone or stopping: nobody reads any more

        threading.Thread(target=pump, name="telic-stdin", daemon=True).start()
        return receive


class PipeWriter(anyio.AsyncFile[str]):
    """A non-blocking pipe written by the event loop itself; it waits only while the pipe is full.

    Each message is written whole before the next: the SDK's writer awaits one at a time.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(io.StringIO())
        self._fd = fd

    async def write(self, b: str) -> int:
        """Write all of ``b``, encoded as UTF-8."""
        data = memoryview(b.encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            data = data[written:]
        return len(b)

    async def flush(self) -> None:
        """Nothing is buffered: every write went to the pipe."""


def is_stream(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket, which the event loop can wait on (POSIX only)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def claimed(fd: int, diversion: int) -> Iterator[int]:
    """A private, non-blocking duplicate of ``fd``, while ``fd`` itself points at ``diversion``.

    Children and stray writes then never touch the wire (as the SDK's own stdio transport
    arranges), and nothing else shares the non-blocking descriptor. On the way out ``fd`` gets
    the wire back, blocking again.
    """
    import fcntl  # POSIX only, as ``is_stream`` guarantees

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        os.dup2(diversion, fd)
        os.set_blocking(private, False)
        yield private
    finally:
        os.set_blocking(private, True)
        os.dup2(private, fd)
        os.close(private)


@contextmanager
def wire_files() -> Iterator[tuple[anyio.AsyncFile[str], anyio.AsyncFile[str] | None]]:
    """stdin and stdout for the SDK's stdio transport.

    Pipes (how every host starts a server) are read and written by the event loop itself;
    anything else falls back to a reader thread for stdin and to the SDK's own stdout, whose
    every write and flush is a hop to a worker thread.
    """
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if not (is_stream(stdin) and is_stream(stdout)):
        yield StdinLines(os.dup(stdin)), None
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        stray = os.dup(sys.stderr.fileno())  # where stray writes to stdout go meanwhile
    except (AttributeError, ValueError, OSError):
        stray = os.open(os.devnull, os.O_WRONLY)
    try:
        with claimed(stdin, null) as reading, claimed(stdout, stray) as writing:
            yield PipeLines(reading), PipeWriter(writing)
    finally:
        os.close(null)
        os.close(stray)


_BAD_ID: Final = '"telic: a request id must be a string or an integer"\n'
"""What ``RequestIds`` hands the transport instead of a request whose id is unusable: a JSON
string, which the transport refuses as no message, so ``error_reply`` answers it."""


def _usable_id(value: object) -> bool:
    # MCP's ids are strings or integers; bool is an int to Python but not to JSON-RPC.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def bad_request_id(line: str) -> bool:
    """Whether ``line`` is a request (or notification) carrying an ``id`` that is no string and
    no integer: ``null``, ``true``, ``1.5``, ``NaN``, ``Infinity``, ``1e400``, an array, ….

    The SDK reads such a message as a notification (it ignores the id it cannot type) and never
    answers it; JSON-RPC 2.0 wants an error. A line that is no JSON at all is left to the
    transport, which answers it with a parse error.
    """
    if "\\" not in line and ('"id"' not in line or '"method"' not in line):
        return False  # neither key, and no escape that could spell one
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(message, dict)
        and "method" in message
        and "id" in message
        and not (_usable_id(message["id"]))
    )


class RequestIds(anyio.AsyncFile[str]):
    """A line source whose requests with an unusable id are replaced by a line the transport
    refuses, so each is answered once, with an Invalid Request error and a null id."""

    def __init__(self, lines: anyio.AsyncFile[str]) -> None:
        super().__init__(io.StringIO())
        self._lines = lines

    async def readline(self) -> str:
        """The next line, or ``""`` at end of input."""
        line = await self._lines.readline()
        return _BAD_ID if bad_request_id(line) else line


def error_reply(problem: Exception) -> JSONRPCError:
    """The JSON-RPC answer to a line that is not a message: -32700 or -32600, ``id`` null.

    A line that is not JSON at all (garbage, a lone surrogate escape, nesting past the parser's
    limit) is a parse error; JSON that is no JSON-RPC message is an invalid request. The id
    cannot be known from the line the transport refused, so it is null, as JSON-RPC 2.0 says.
    """
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    kinds = {e["type"] for e in errors}
    if any(e.get("input") == _BAD_ID.strip()[1:-1] for e in errors):
        error = ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: a request id must be a string or an integer",
        )
    elif kinds and kinds != {"json_invalid"}:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC message")
    else:
        error = ErrorData(code=PARSE_ERROR, message="Parse error")
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)


class _Reads(Protocol):
    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class _Sends(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


class AnsweredReads:
    """The transport's read stream, with every unreadable line answered instead of dropped.

    The SDK's stdio transport turns a line it cannot validate into an ``Exception`` item on
    the read stream, and its dispatcher only logs those: the client never hears back and waits
    for its timeout. This wrapper (the SDK's read-stream protocol: ``receive``, iteration,
    ``aclose``, ``last_context``) sends ``error_reply`` for such an item through the
    transport's own write stream, so answers never interleave, and passes messages on.
    """

    def __init__(self, inner: _Reads, write: _Sends) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (what the dispatcher restores)."""
        context = getattr(self._inner, "last_context", None)  # the protocol's documented way
        return context if isinstance(context, contextvars.Context) else None

    async def receive(self) -> SessionMessage | Exception:
        """The next message; unreadable lines are answered on the way."""
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._write.send(SessionMessage(error_reply(item)))

    def __aiter__(self) -> AnsweredReads:
        """Iterate over the messages."""
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        """The next message, until the client closes its end."""
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweredReads:
        """Enter: nothing to open."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Leave: close the underlying stream."""
        await self.aclose()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin.

    A line that is no JSON-RPC message, and a request whose id is no string and no integer, is
    answered with an error (see ``AnsweredReads`` and ``RequestIds``).
    """
    with wire_files() as (stdin, stdout):
        await serve_lines(server, stdin, stdout)


async def serve_lines(
    server: Server[Any], stdin: anyio.AsyncFile[str], stdout: anyio.AsyncFile[str] | None
) -> None:
    """Serve one MCP session over newline-delimited JSON-RPC read from ``stdin``.

    The stdio framing and its hostile-input handling, for any line source: this process's
    pipes (``serve_stdio``) or a resident server's socket connection (``PipeLines`` and
    ``PipeWriter`` over the socket's descriptor).
    """
    async with stdio_server(stdin=RequestIds(stdin), stdout=stdout) as (read_stream, write_stream):
        await server.run(
            AnsweredReads(read_stream, write_stream),
            write_stream,
            server.create_initialization_options(),
        )
