"""Serve the MCP server over stdio or streamable HTTP until the client leaves or a signal comes.

Protocol bytes go to stdout (stdio) or the socket (HTTP); diagnostics go to stderr. SIGINT and
SIGTERM cancel the serving task group, so the service — and with it the ledger — is closed by
its own ``async with`` on the way out.

Over stdio the event loop itself reads and writes the pipes (``_stdio``). While serving either
way, the cyclic garbage collector is tuned for a long-lived process.
"""

from __future__ import annotations

import hmac
import logging
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from telic.server._app import assemble
from telic.server._backend import (
    OpeningBackend,
    has_reports,
    reports_module,
    say,
    server_version,
    serving_gc,
)
from telic.server._config import DEFAULT_READ_TIMEOUT, HttpBinding, ServerConfig, is_loopback
from telic.server._deadline import read_deadline_protocol
from telic.server._events import BoundedEventStore
from telic.server._rebinding import HostOriginGuard
from telic.server._stdio import bad_request_id, serve_stdio

if TYPE_CHECKING:
    from telic.ledger import Ledger


_LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_UNAUTHORIZED_BODY: Final = b'{"error":"unauthorized","error_description":"bearer token required"}'


async def _answer(send: Send, status: int, body: bytes, header: tuple[bytes, bytes]) -> None:
    """Answer a request with ``status`` and the JSON ``body``, without passing it on."""
    headers = [(b"content-type", b"application/json"), header]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


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
                challenge = (b"www-authenticate", b'Bearer realm="telic"')
                await _answer(send, 401, _UNAUTHORIZED_BODY, challenge)
                return
        await self._app(scope, receive, send)


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


_MCP_PATH: Final = "/mcp"
SSE_RETRY_MS: Final = 1000
"""The ``retry`` an SSE stream's priming event suggests: reconnect after one second."""


_log: Final = logging.getLogger("telic.server")
_INSPECTED_BODY: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Bodies up to the SDK's own limit are looked at whole; a longer one is refused by the SDK."""
_BAD_ID_BODY: Final = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
    b'"message":"Invalid Request: a request id must be a string or an integer"}}'
)


class RequestIdGuard:
    """Answer a POST to ``/mcp`` whose request id is no string and no integer, per JSON-RPC 2.0.

    The SDK reads such a message (``"id": null``, ``true``, ``1.5``, ``NaN``, …) as a
    notification: it answers ``202 Accepted`` and never replies. This reads the body (up to the
    SDK's own body limit; past it the SDK refuses the request), answers 400 with an Invalid
    Request error and a null id when ``telic.server._stdio.bad_request_id`` says so, and
    otherwise hands the very same body on. A client that disconnects while sending is not
    handed on: there is no one to answer, so it is one info line on the ``telic.server`` log
    and no traceback.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route one request or lifespan."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != _MCP_PATH:
            await self._app(scope, receive, send)
            return
        read: list[Message] = []
        size, more = 0, True
        while more and size <= _INSPECTED_BODY:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break  # a disconnect: hand it on as it came
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
        if read and read[-1]["type"] != "http.request":
            # The client left mid-body: nobody is there to answer, and the SDK would log the
            # disconnect as a traceback ("Error handling POST request"). One calm line instead.
            _log.info("A client disconnected before its request body to %s arrived", _MCP_PATH)
            return
        if not more and read and read[-1]["type"] == "http.request":
            body = b"".join(m.get("body", b"") for m in read)
            if bad_request_id(body.decode("utf-8", "replace")):
                length = (b"content-length", str(len(_BAD_ID_BODY)).encode())
                await _answer(send, 400, _BAD_ID_BODY, length)
                return
        pending = iter(read)

        async def replay() -> Message:
            return next(pending, None) or await receive()

        await self._app(scope, replay, send)


def http_app(server: Server[Any], config: ServerConfig, ledger: Ledger | None = None) -> ASGIApp:
    """Return the ASGI app of ``telic serve --http``: MCP at ``/mcp``, reports at ``/runs``.

    One Host/Origin policy guards every route, then the bearer token (when set).
    """
    assert config.http is not None
    security = _security(config.http, config.allowed_hosts)
    starlette = server.streamable_http_app(
        host=config.http.host,
        transport_security=security,
        event_store=BoundedEventStore(),
        retry_interval=SSE_RETRY_MS,
    )
    reports = reports_module()
    if reports is not None and ledger is not None:
        runs = reports.reports_app(lambda: ledger, token=None, prefix="")
        starlette.router.routes.append(Mount("/runs", app=runs))
        starlette.router.routes.append(reports.root_redirect("/runs/"))
        if config.reports_mirror is not None:
            mirror = reports.mirror_app(config.reports_mirror)
            starlette.router.routes.append(Mount("/reports", app=mirror))
    app: ASGIApp = RequestIdGuard(starlette)
    if config.token:
        app = BearerTokenMiddleware(app, config.token)
    # Outermost: every route (the reports at /runs too) gets the MCP app's Host/Origin policy.
    return HostOriginGuard(app, security)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: ``serve`` owns SIGINT and SIGTERM."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_http(
    app: ASGIApp,
    binding: HttpBinding,
    ready: Callable[[], None],
    stop: anyio.Event,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
) -> None:
    config = uvicorn.Config(
        app,
        host=binding.host,
        port=binding.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        # h11 with deadlines on each request's headers and body (uvicorn has none of its own)
        http=read_deadline_protocol(read_timeout),
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


async def serve(config: ServerConfig) -> None:
    """Serve until stdin closes (stdio) or a signal arrives; the ledger closes on the way out.

    Over stdio the server answers at once: the service opens concurrently, and the first tool
    call waits for it.
    """
    root = config.repository_root
    # Over stdio the handshake is answered while the backend opens; "ready" means it is open.
    # HTTP announces once it listens.
    if config.http is None:
        opening = OpeningBackend(config, lambda: say(f"Telic MCP ready for {root}"))
    else:
        opening = OpeningBackend(config)
    with serving_gc():
        async with anyio.create_task_group() as backend_group:
            backend_group.start_soon(opening.run)
            try:
                await _serve(config, opening)
            finally:
                opening.close()
    if opening.failure is not None:
        raise opening.failure.with_traceback(None)


async def _serve(config: ServerConfig, opening: OpeningBackend) -> None:
    reports = opening.ledger if has_reports() else None
    server = assemble(
        opening.service, version=server_version(), ledger=reports, schemas=config.schemas
    )
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
            await serve_stdio(server)
        else:
            binding = config.http
            app = http_app(server, config, await opening.ledger())
            runs = f" (runs at {binding.url.removesuffix('/mcp')}/runs)" if reports else ""
            await _serve_http(
                app,
                binding,
                lambda: say(f"Telic MCP ready for {root} at {binding.url}{runs}"),
                stop,
                config.read_timeout,
            )
        tg.cancel_scope.cancel()
