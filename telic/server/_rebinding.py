"""One Host/Origin policy in front of every HTTP route (DNS-rebinding protection).

A web page whose name is rebound to 127.0.0.1 can make a browser send requests to a local
server; the browser still sends the page's own name as ``Host`` (and its origin as ``Origin``).
The SDK's session managers check both for ``/mcp`` only, so ``HostOriginGuard`` applies the same
``TransportSecuritySettings`` — through the SDK's public ``TransportSecurityMiddleware`` — to
every request before any route sees it: ``/mcp``, ``/runs`` and whatever is mounted later.
A foreign ``Host`` is answered 421, a foreign ``Origin`` 403, and the app behind is not called.

The SDK matches a ``host:*`` pattern by prefix (``127.0.0.1:`` then anything), so the guard first
requires each header to be well formed — a host name or bracketed IPv6 address with at most a
numeric port, an origin ``http(s)://`` such a host — and refuses any other spelling
(``127.0.0.1:80.evil.example``) the same way.
"""

from __future__ import annotations

import re
from typing import Final

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

_HOST: Final = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?"
_HOST_HEADER: Final = re.compile(_HOST)
_ORIGIN_HEADER: Final = re.compile(rf"https?://{_HOST}")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def malformed(scope: Scope) -> Response | None:
    """421 for a ``Host`` header that is no ``host[:port]``, 403 for such an ``Origin``."""
    host = _header(scope, b"host")
    if host is not None and not _HOST_HEADER.fullmatch(host):
        return Response("Invalid Host header", status_code=421)
    origin = _header(scope, b"origin")
    if origin is not None and not _ORIGIN_HEADER.fullmatch(origin):
        return Response("Invalid Origin header", status_code=403)
    return None


class HostOriginGuard:
    """Refuse every HTTP request whose ``Host`` or ``Origin`` the settings do not allow."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self._app = app
        self._check = TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the headers of an HTTP request, then pass it (or a lifespan) on."""
        if scope["type"] == "http":
            # is_post=False: only Host and Origin here; the MCP routes check Content-Type.
            refusal = malformed(scope) or await self._check.validate_request(
                Request(scope), is_post=False
            )
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)
