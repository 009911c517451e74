"""A loopback stand-in for the Anthropic Messages API, as Claude Code calls it.

Claude Code (``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``, any non-empty key) sends
``POST /v1/messages`` with the whole conversation, the tools it offers and ``"stream": true``.
The answer is the documented event stream: ``message_start``; per content block
``content_block_start`` (a ``text`` block, or a ``tool_use`` block with its id and name), a
``content_block_delta`` (``text_delta``, or ``input_json_delta`` holding the arguments) and
``content_block_stop``; then ``message_delta`` with ``stop_reason`` ``tool_use`` or ``end_turn``
and ``message_stop``. Tool results come back in later requests as ``tool_result`` blocks keyed by
``tool_use_id`` (looked up in every user message, not only the last).

Requests are routed to a ``Conversation``: the one registered for a subagent when its first user
message carries that subagent's marker, the main one when the request offers the ``Agent`` tool
(only the main agent has it), and anything else (Claude Code's own side requests, such as a
title for the session) gets a short text answer. A call of an MCP tool not yet offered, while
Claude Code offers ``WaitForMcpServers``, is preceded by a call of that tool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.telic.hosts.realhost.standin import Conversation, Move, Returned, ScriptFailed

__all__ = ["MessagesStandIn"]

JSON = dict[str, Any]
WAIT_FOR_MCP = "WaitForMcpServers"
"""Claude Code's tool for waiting on MCP servers still connecting (offered until they are)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") for block in content or [] if isinstance(block, dict)]
    return "".join(parts)


def tool_results(body: JSON) -> dict[str, Returned]:
    """Every ``tool_result`` block of the request's user messages, by ``tool_use_id``.

    All of them, not only the last message's: Claude Code may append a user message of its
    own (a hook's added context, a reminder) after the one holding the results."""
    found: dict[str, Returned] = {}
    for message in body.get("messages") or []:
        content = message.get("content") if message.get("role") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[block["tool_use_id"]] = Returned(
                    _text_of(block.get("content")), bool(block.get("is_error"))
                )
    return found


def _first_user_text(body: JSON) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _events(move: Move, model: str) -> Iterator[tuple[str, JSON]]:
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{move.call_id}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    if move.tool is None:
        start: JSON = {"type": "text", "text": ""}
        delta: JSON = {"type": "text_delta", "text": move.text}
    else:
        start = {"type": "tool_use", "id": move.call_id, "name": move.tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(move.arguments)}
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    stop = "end_turn" if move.tool is None else "tool_use"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class MessagesStandIn:
    """The stand-in server; ``url`` is its base URL. Use as a context manager."""

    def __init__(self) -> None:
        self.main: Conversation | None = None
        """The main agent's conversation; set it before the host starts."""
        self._subagents: dict[str, Conversation] = {}
        self._lock = threading.Lock()
        self.requests: list[tuple[str | None, JSON]] = []
        """Every Messages request, with the name of the conversation it went to (None: aside)."""
        self.errors: list[str] = []
        self.waits = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def subagent(self, marker: str, conversation: Conversation) -> None:
        """Route requests whose first user message contains ``marker`` to ``conversation``."""
        with self._lock:
            self._subagents[marker] = conversation

    def offered(self, name: str) -> list[set[str]]:
        """The tool names offered in each request routed to the conversation ``name``."""
        return [
            {tool.get("name") for tool in body.get("tools") or []}
            for routed, body in self.requests
            if routed == name
        ]

    def route(self, body: JSON) -> Conversation | None:
        first = _first_user_text(body)
        with self._lock:
            for marker, conversation in self._subagents.items():
                if marker in first:
                    return conversation
        offered = {tool.get("name") for tool in body.get("tools") or []}
        return self.main if "Agent" in offered else None

    def __enter__(self) -> MessagesStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reports what matters."""

            def _json(self, status: int, value: JSON) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._json(200, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._json(200, {})  # token counting and the like: nothing to decide
                    return
                conversation = stand_in.route(body)
                stand_in.requests.append((conversation.name if conversation else None, body))
                try:
                    move = (
                        Move("aside", None, text="OK")
                        if conversation is None
                        else conversation.next_move(tool_results(body))
                    )
                except ScriptFailed as failure:
                    stand_in.errors.append(str(failure))
                    self._json(
                        400,
                        {
                            "type": "error",
                            "error": {"type": "invalid_request_error", "message": str(failure)},
                        },
                    )
                    return
                offered = {tool.get("name") for tool in body.get("tools") or []}
                if (
                    move.tool is not None
                    and move.tool.startswith("mcp__")
                    and move.tool not in offered
                    and WAIT_FOR_MCP in offered
                ):
                    # The MCP server is still connecting: wait for it, then ask again (the
                    # conversation repeats its move, as the request holds no result for it).
                    stand_in.waits += 1
                    move = Move(f"wait_{stand_in.waits}", WAIT_FOR_MCP, {})
                model = str(body.get("model", "stand-in"))
                if not body.get("stream"):
                    self._json(200, _message(move, model))
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event, data in _events(move, model):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _message(move: Move, model: str) -> JSON:
    """The same move as one non-streamed message."""
    if move.tool is None:
        block: JSON = {"type": "text", "text": move.text}
    else:
        block = {"type": "tool_use", "id": move.call_id, "name": move.tool, "input": move.arguments}
    return {
        "id": f"msg_{move.call_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "end_turn" if move.tool is None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
