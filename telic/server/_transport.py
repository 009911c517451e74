"""Serve the MCP server over stdio or streamable HTTP until the client leaves or a signal comes.

Protocol bytes go to stdout (stdio) or the socket (HTTP); diagnostics go to stderr. SIGINT and
SIGTERM cancel the serving task group, so the service — and with it the ledger — is closed by
its own ``async with`` on the way out.

Over stdio the event loop itself reads and writes the pipes (non-blocking), so a call costs no
hop to a worker thread on the way in or out; stdin or stdout that is not a pipe or a socket is
served by a reader thread and the SDK's own stdout instead.
"""

from __future__ import annotations

import gc
import hmac
import importlib
import importlib.metadata
import io
import os
import signal
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from telic.server._app import assemble, has_reports, reports_module
from telic.server._config import HttpBinding, ServerConfig, is_loopback
from telic.server._service import Service

if TYPE_CHECKING:
    from telic.ledger import Ledger

__all__ = [
    "Backend",
    "BearerTokenMiddleware",
    "http_app",
    "open_backend",
    "open_default_service",
    "serve",
]

_LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")


class BearerTokenMiddleware:
    """Refuse every HTTP request without ``Authorization: Bearer <token>`` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the header in constant time, then pass the request on."""
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="telic"'),
                        ],
                    }
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": b'{"error":"unauthorized","error_description":"bearer token '
                        b'required"}',
                    }
                )
                return
        await self._app(scope, receive, send)


@dataclass(frozen=True, slots=True)
class Backend:
    """An open service and the ledger under it (reports read the ledger directly)."""

    service: Service
    ledger: Ledger


@asynccontextmanager
async def open_backend(config: ServerConfig) -> AsyncIterator[Backend]:
    """Open the ledger for ``config`` and ``telic.roles.open_service`` over it."""
    from telic.ledger import open_ledger
    from telic.roles import open_service

    root = config.repository_root
    async with (
        open_ledger(config.database_url, repository_root=root) as ledger,
        open_service(
            ledger=ledger,
            repository_root=str(root),
            state_dir=None if config.state_dir is None else str(config.state_dir),
        ) as service,
    ):
        if not os.environ.get("TELIC_OTEL"):
            yield Backend(service, ledger)
            return
        # Only now pay for the telemetry imports: spans go to the configured tracer provider.
        from telic.server._observed import observed
        from telic.telemetry import telemetry_from_env

        observer = telemetry_from_env()
        try:
            yield Backend(observed(service, ledger, observer), ledger)
        finally:
            if observer is not None:
                observer.close()


@asynccontextmanager
async def open_default_service(config: ServerConfig) -> AsyncIterator[Service]:
    """Open ``telic.roles.open_service`` for ``config``."""
    async with open_backend(config) as backend:
        yield backend.service


def _security(binding: HttpBinding, extra: tuple[str, ...]) -> TransportSecuritySettings:
    hosts = list(_LOOPBACK_HOSTS)
    if not is_loopback(binding.host):
        shown = f"[{binding.host}]" if ":" in binding.host else binding.host
        hosts.append(f"{shown}:*")
    hosts.extend(f"{h.strip()}:*" if ":" not in h else h.strip() for h in extra)
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def http_app(server: MCPServer[Any], config: ServerConfig, ledger: Ledger | None = None) -> ASGIApp:
    """Return the ASGI app of ``telic serve --http``: MCP at ``/mcp``, reports at ``/runs``."""
    assert config.http is not None
    app: ASGIApp = server.streamable_http_app(
        host=config.http.host,
        transport_security=_security(config.http, config.allowed_hosts),
    )
    reports = reports_module()
    if reports is not None and ledger is not None:
        runs = reports.reports_app(lambda: ledger, token=None, prefix="")
        app.router.routes.append(Mount("/runs", app=runs))  # type: ignore[attr-defined]
    if config.token:
        app = BearerTokenMiddleware(app, config.token)
    return app


class _StdinLines(anyio.AsyncFile[str]):
    """stdin read by a daemon thread, so a signal can end the server while a read is pending.

    The fallback for a stdin that is not a pipe or a socket (a file, a terminal). anyio's worker
    threads are joined at interpreter exit, and one blocked reading an open pipe would keep the
    process alive after the ledger is closed. A daemon thread reading a private duplicate of the
    descriptor with ``os.read`` holds no interpreter-level buffer lock, so the process can always
    exit.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(io.StringIO())
        self._fd = fd
        self._lines: anyio.abc.ObjectReceiveStream[str] | None = None

    def _start(self) -> anyio.abc.ObjectReceiveStream[str]:
        send, receive = anyio.create_memory_object_stream[str](0)
        token = anyio.lowlevel.current_token()
        fd = self._fd

        def pump() -> None:
            pending = b""
            try:
                while chunk := os.read(fd, 65536):
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        text = line.decode("utf-8", "replace") + "\n"
                        anyio.from_thread.run(send.send, text, token=token)
                if pending:
                    anyio.from_thread.run(
                        send.send, pending.decode("utf-8", "replace"), token=token
                    )
                anyio.from_thread.run_sync(send.close, token=token)
            except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the server is gone or stopping: nobody reads any more

        threading.Thread(target=pump, name="telic-stdin", daemon=True).start()
        return receive

    async def readline(self) -> str:
        """The next line, or ``""`` at end of input."""
        if self._lines is None:
            self._lines = self._start()
        try:
            return await self._lines.receive()
        except anyio.EndOfStream:
            return ""


class _PipeLines(anyio.AsyncFile[str]):
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
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            self._ended = not chunk
            self._buffer += chunk


class _PipeWriter(anyio.AsyncFile[str]):
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


_READ_SIZE: Final = 65_536


def _is_stream(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket, which the event loop can wait on (POSIX only)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def _claimed(fd: int, diversion: int) -> Iterator[int]:
    """A private, non-blocking duplicate of ``fd``, while ``fd`` itself points at ``diversion``.

    Children and stray writes then never touch the wire (as the SDK's own stdio transport
    arranges), and nothing else shares the non-blocking descriptor. On the way out ``fd`` gets
    the wire back, blocking again.
    """
    import fcntl  # POSIX only, as ``_is_stream`` guarantees

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
def _wire_files() -> Iterator[tuple[anyio.AsyncFile[str], anyio.AsyncFile[str] | None]]:
    """stdin and stdout for the SDK's stdio transport.

    Pipes (how every host starts a server) are read and written by the event loop itself;
    anything else falls back to a reader thread for stdin and to the SDK's own stdout, whose
    every write and flush is a hop to a worker thread.
    """
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if not (_is_stream(stdin) and _is_stream(stdout)):
        yield _StdinLines(os.dup(stdin)), None
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        stray = os.dup(sys.stderr.fileno())  # where stray writes to stdout go meanwhile
    except (AttributeError, ValueError, OSError):
        stray = os.open(os.devnull, os.O_WRONLY)
    try:
        with _claimed(stdin, null) as reading, _claimed(stdout, stray) as writing:
            yield _PipeLines(reading), _PipeWriter(writing)
    finally:
        os.close(null)
        os.close(stray)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: ``serve`` owns SIGINT and SIGTERM."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _version() -> str:
    try:
        return importlib.metadata.version("telic")
    except importlib.metadata.PackageNotFoundError:
        return ""


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def _serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # the SDK exposes stdio serving with fixed streams only
    with _wire_files() as (stdin, stdout):
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


async def _serve_http(
    app: ASGIApp, binding: HttpBinding, ready: Callable[[], None], stop: anyio.Event
) -> None:
    config = uvicorn.Config(
        app,
        host=binding.host,
        port=binding.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    web = _Uvicorn(config)
    async with anyio.create_task_group() as tg:

        async def announce() -> None:
            while not web.started:  # noqa: ASYNC110 - uvicorn exposes readiness as a flag only
                await anyio.sleep(0.02)
            ready()

        async def stop_on_request() -> None:
            await stop.wait()
            web.should_exit = True  # uvicorn's own graceful shutdown: lifespan, then sockets

        tg.start_soon(announce)
        tg.start_soon(stop_on_request)
        try:
            await web.serve()
        finally:
            tg.cancel_scope.cancel()


# What the first tool call needs beyond the start-up imports: loaded in a worker thread while
# the server already answers the handshake and the listing.
_BACKEND_MODULES: Final = ("telic.ledger", "telic.roles", "telic.protocol", "telic.server._args")


def _load_backend_modules() -> None:
    for name in _BACKEND_MODULES:
        importlib.import_module(name)


class _OpeningBackend:
    """The backend, opened by a task of its own while the server already serves.

    Tools await ``service()``; the backend closes when ``close()`` is called, in the task that
    opened it (its task groups must be left where they were entered). An error while opening
    fails that task, and with it the server, as it did when the backend opened first.
    """

    def __init__(self, config: ServerConfig) -> None:
        self._config = config
        self._ready = anyio.Event()
        self._closing = anyio.Event()
        self._backend: Backend | None = None

    async def run(self) -> None:
        """Open the backend, serve it until ``close()``, then close it."""
        await anyio.to_thread.run_sync(_load_backend_modules)
        if self._closing.is_set():
            return
        async with open_backend(self._config) as backend:
            self._backend = backend
            gc.freeze()  # what is loaded and open now lives as long as the server: see _serving_gc
            self._ready.set()
            await self._closing.wait()

    def close(self) -> None:
        """Let ``run`` close the backend (or not open it at all)."""
        self._closing.set()

    async def backend(self) -> Backend:
        """The open backend, once it is open."""
        await self._ready.wait()
        assert self._backend is not None
        return self._backend

    async def service(self) -> Service:
        """The open service, once it is open."""
        return (await self.backend()).service

    async def ledger(self) -> Ledger:
        """The open ledger, once it is open."""
        return (await self.backend()).ledger


_YOUNG_COLLECTION: Final = 10_000
"""Net allocations between two young-generation collections while serving (CPython's is 700)."""


@contextmanager
def _serving_gc() -> Iterator[None]:
    """The cyclic garbage collector tuned for a long-lived server, restored on the way out.

    With CPython's defaults a server under load (16 HTTP clients) spent 6-10 % of its time
    collecting, most of it in full collections that walk every object the imports and the open
    backend created, about 0.1 s each, several times a minute. Those objects are frozen once the
    backend is open, so full collections skip them, and young collections run every 10,000 net
    allocations instead of 700: a call allocates thousands of short-lived objects, nearly all
    freed by reference counting, so fewer of them survive into older generations.
    """
    previous = gc.get_threshold()
    gc.set_threshold(_YOUNG_COLLECTION, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()


async def serve(config: ServerConfig) -> None:
    """Serve until stdin closes (stdio) or a signal arrives; the ledger closes on the way out.

    Over stdio the server answers at once: the service opens concurrently, and the first tool
    call waits for it.
    """
    with _serving_gc():
        await _serve_backend(config)


async def _serve_backend(config: ServerConfig) -> None:
    opening = _OpeningBackend(config)
    async with anyio.create_task_group() as backend_group:
        backend_group.start_soon(opening.run)
        try:
            await _serve(config, opening)
        finally:
            opening.close()


async def _serve(config: ServerConfig, opening: _OpeningBackend) -> None:
    reports = opening.ledger if has_reports() else None
    server = assemble(opening.service, version=_version(), ledger=reports, schemas=config.schemas)
    root = config.repository_root
    stop = anyio.Event()
    async with anyio.create_task_group() as tg:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    if config.http is None:
                        tg.cancel_scope.cancel()
                    stop.set()
                    return

        tg.start_soon(on_signal)
        if config.http is None:
            _say(f"Telic MCP ready for {root}")
            await _serve_stdio(server)
        else:
            binding = config.http
            app = http_app(server, config, await opening.ledger())
            await _serve_http(
                app, binding, lambda: _say(f"Telic MCP ready for {root} at {binding.url}"), stop
            )
        tg.cancel_scope.cancel()
