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
from collections.abc import Iterator
from typing import Any

from tests.telic.hosts.realhost.standin import Move, Returned, StandInServer

__all__ = ["MessagesStandIn"]

JSON = dict[str, Any]
WAIT_FOR_MCP = "WaitForMcpServers"
"""Claude Code's tool for waiting on MCP servers still connecting (offered until they are)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") for block in content or [] if isinstance(block, dict)]
    return "".join(parts)


class MessagesStandIn(StandInServer):
    """The Messages API stand-in."""

    ENDPOINT = "/v1/messages"

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    def marker_text(self, body: JSON) -> str:
        """The first user message: the subagent's task (the ``Agent`` call's prompt)."""
        for message in body.get("messages") or []:
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    def main_request(self, body: JSON) -> bool:
        return "Agent" in self.offered_in(body)

    def offered_in(self, body: JSON) -> set[str]:
        return {str(tool.get("name")) for tool in body.get("tools") or []}

    def results(self, body: JSON) -> dict[str, Returned]:
        found: dict[str, Returned] = {}
        for message in body.get("messages") or []:
            content = message.get("content") if message.get("role") == "user" else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = Returned(
                        _text_of(block.get("content")), bool(block.get("is_error"))
                    )
        return found

    def adjust(self, move: Move, body: JSON) -> Move:
        offered = self.offered_in(body)
        if (
            move.tool is not None
            and move.tool.startswith("mcp__")
            and move.tool not in offered
            and WAIT_FOR_MCP in offered
        ):
            # The MCP server is still connecting: wait for it, then ask again (the
            # conversation repeats its move, as the next request holds no result for it).
            self.waits += 1
            return Move(f"wait_{self.waits}", WAIT_FOR_MCP, {})
        return move

    def error_body(self, message: str) -> JSON:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}

    def events(self, move: Move, body: JSON) -> Iterator[tuple[str, JSON]]:
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{move.call_id}",
                    "type": "message",
                    "role": "assistant",
                    "model": str(body.get("model", "stand-in")),
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
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": start,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn" if move.tool is None else "tool_use"},
                "usage": {"output_tokens": 10},
            },
        )
        yield "message_stop", {"type": "message_stop"}
