"""Raw JSON-RPC for the tests that talk to ``telic serve`` below the official client.

Hostile-input, broken-ledger and transport tests write lines (or HTTP bodies) themselves; they
share the handshake they open with and the way they spawn the stdio server.
"""

from __future__ import annotations

import subprocess
from typing import Any

from mcp import StdioServerParameters

__all__ = ["INITIALIZED", "initialize", "spawn"]

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
"""The notification a client sends once ``initialize`` is answered."""


def initialize(
    request_id: int | str = 1, *, version: str = "2025-06-18", client: str = "probe"
) -> dict[str, Any]:
    """An ``initialize`` request of protocol ``version`` from a client named ``client``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "0"},
        },
    }


def spawn(params: StdioServerParameters) -> subprocess.Popen[bytes]:
    """Start the stdio server ``params`` describes, with all three pipes."""
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=params.env,
        cwd=params.cwd,
    )
