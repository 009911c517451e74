"""Over HTTP too, a request whose id is no string and no integer gets one answer (issue 28).

The SDK reads ``{"id": null, "method": …}`` as a notification and answers ``202 Accepted``
with nothing else; ``RequestIdGuard`` answers 400 with a JSON-RPC Invalid Request error and a
null id, and hands every other body on byte for byte, however it was chunked; a client that
leaves mid-body is one calm log line.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.types import Message, Receive, Scope, Send

from telic.ledger import open_ledger
from telic.roles import Service
from telic.server._app import assemble
from telic.server._config import HttpBinding, ServerConfig
from telic.server._transport import RequestIdGuard, http_app

pytestmark = pytest.mark.anyio

BAD_IDS = ["null", "true", "false", "1.5", "1.0", "NaN", "Infinity", "1e400", "[1]", "{}"]


async def _no_service() -> Service:
    raise AssertionError("no tool is called here")


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_a_bad_id_over_http_is_answered_with_one_invalid_request_error(bad: str) -> None:
    config = ServerConfig(
        repository_root=Path("/nonexistent-repo"), http=HttpBinding("127.0.0.1", 8765)
    )
    async with open_ledger("memory://") as ledger:
        app = http_app(assemble(_no_service, schemas="once"), config, ledger)
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765"
        ) as client:
            body = '{"jsonrpc": "2.0", "id": ' + bad + ', "method": "tools/list"}'
            response = await client.post(
                "/mcp",
                content=body.encode(),
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
            )
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: a request id must be a string or an integer",
        },
    }


async def _through(
    chunks: list[Message], path: str = "/mcp"
) -> tuple[list[Message], list[Message]]:
    """Run ``chunks`` through the guard in front of an app that records what it receives."""
    received: list[Message] = []
    sent: list[Message] = []
    queue = list(chunks)

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                return

    async def receive() -> Message:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": path, "headers": []}
    await RequestIdGuard(inner)(scope, receive, send)
    return received, sent


async def test_a_good_request_is_handed_on_byte_for_byte_however_chunked() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).encode()
    chunks: list[Message] = [
        {"type": "http.request", "body": body[:10], "more_body": True},
        {"type": "http.request", "body": body[10:], "more_body": False},
    ]
    received, sent = await _through(chunks)
    assert received == chunks
    assert sent == []


async def test_a_client_that_disconnects_mid_body_is_one_calm_line_and_reaches_no_app(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first: Message = {
        "type": "http.request",
        "body": b'{"jsonrpc": "2.0", "id": nu',
        "more_body": True,
    }
    with caplog.at_level(logging.DEBUG):
        received, sent = await _through([first, {"type": "http.disconnect"}])
    # Nobody is left to answer: the SDK behind would log the disconnect as a traceback.
    assert received == []
    assert sent == []
    assert [(r.name, r.levelno, r.exc_info) for r in caplog.records] == [
        ("telic.server", logging.INFO, None)
    ]
    assert "disconnected before its request body" in caplog.records[0].getMessage()
