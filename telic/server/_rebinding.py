"""One Host/Origin policy in front of every HTTP route (DNS-rebinding protection).

A web page whose name is rebound to 127.0.0.1 can make a browser send requests to a local
server; the browser still sends the page's own name as ``Host`` (and its origin as ``Origin``).
The SDK's session managers check both for ``/mcp`` only, so ``HostOriginGuard`` applies the same
``TransportSecuritySettings`` — through the SDK's public ``TransportSecurityMiddleware`` — to
every request before any route sees it: ``/mcp``, ``/runs`` and whatever is mounted later.
A foreign ``Host`` is answered 421, a foreign ``Origin`` 403, and the app behind is not called.
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostOriginGuard"]


class HostOriginGuard:
    """Refuse every HTTP request whose ``Host`` or ``Origin`` the settings do not allow."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self._app = app
        self._check = TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the headers of an HTTP request, then pass it (or a lifespan) on."""
        if scope["type"] == "http":
            # is_post=False: only Host and Origin here; the MCP routes check Content-Type.
            refusal = await self._check.validate_request(Request(scope), is_post=False)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)
