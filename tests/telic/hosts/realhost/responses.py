"""A loopback stand-in for the OpenAI Responses API, as Codex calls it.

Codex, given a model provider with ``base_url = "http://127.0.0.1:PORT/v1"`` and
``wire_api = "responses"``, sends ``POST /v1/responses`` with ``"stream": true``, the tools it
offers (``function`` tools, and ``namespace`` tools grouping others: an MCP server's tools come
as the namespace ``mcp__<server>``) and the whole conversation as ``input`` items. Tool results
come back as ``function_call_output`` items keyed by ``call_id``. The answer is the documented
event stream: ``response.created``, ``response.output_item.added`` and
``response.output_item.done`` for the one output item (a ``function_call`` with ``call_id``,
``name``, ``arguments`` as a JSON string and, for a namespaced tool, its ``namespace``; a
``custom_tool_call`` with a raw ``input`` for a freeform tool such as ``apply_patch``, whose
move carries it as ``{"input": ...}``; or an assistant ``message`` with ``output_text``), then
``response.completed`` with the usage.

A move's tool name ``namespace/name`` (``mcp__telic/telic_start_run``) is a namespaced tool.
Requests whose messages carry a registered subagent's marker (or whose ``agent_message`` is
addressed to it) go to that subagent's conversation; a request offering ``exec_command`` to the
main one; others get a short text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.telic.hosts.realhost.standin import Move, Returned, StandInServer

__all__ = ["ResponsesStandIn"]

JSON = dict[str, Any]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [item.get("text", "") for item in content or [] if isinstance(item, dict)]
    return "".join(parts)


class ResponsesStandIn(StandInServer):
    """The Responses API stand-in."""

    ENDPOINT = "/responses"

    def marker_text(self, body: JSON) -> str:
        """The text of every message item, whatever its role, and the recipient of every
        ``agent_message`` (Codex's second subagent tools deliver the task that way, its payload
        encrypted for the real backend: the subagent is told by its task name, the marker)."""
        texts = []
        for item in body.get("input") or []:
            if item.get("type") == "message":
                texts.append(_text_of(item.get("content")))
            elif item.get("type") == "agent_message":
                texts.append(f"recipient {item.get('recipient')}")
        return "\n".join(texts)

    def _custom(self, body: JSON) -> set[str]:
        """The freeform (``custom``) tools offered, called with a raw ``input`` string."""
        return {str(t["name"]) for t in body.get("tools") or [] if t.get("type") == "custom"}

    def main_request(self, body: JSON) -> bool:
        return "exec_command" in self.offered_in(body)

    def offered_in(self, body: JSON) -> set[str]:
        names: set[str] = set()
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace":
                names |= {f"{tool['name']}/{inner['name']}" for inner in tool.get("tools", [])}
            elif "name" in tool:
                names.add(str(tool["name"]))
        return names

    def results(self, body: JSON) -> dict[str, Returned]:
        found: dict[str, Returned] = {}
        for item in body.get("input") or []:
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                if isinstance(output, dict):  # {"content": ..., "success": ...}
                    text = _text_of(output.get("content"))
                    failed = output.get("success") is False
                else:
                    text, failed = _text_of(output), False
                found[item["call_id"]] = Returned(text, failed)
        return found

    def events(self, move: Move, body: JSON) -> Iterator[tuple[str, JSON]]:
        response = f"resp_{move.call_id}"
        if move.tool is None:
            item: JSON = {
                "type": "message",
                "id": f"msg_{move.call_id}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": move.text, "annotations": []}],
            }
        elif move.tool in self._custom(body):
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{move.call_id}",
                "call_id": move.call_id,
                "name": move.tool,
                "input": move.arguments["input"],
                "status": "completed",
            }
        else:
            namespace, _, name = move.tool.rpartition("/")
            item = {
                "type": "function_call",
                "id": f"fc_{move.call_id}",
                "call_id": move.call_id,
                "name": name,
                "arguments": json.dumps(move.arguments),
                "status": "completed",
            }
            if namespace:
                item["namespace"] = namespace
        yield "response.created", {"type": "response.created", "response": {"id": response}}
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": item,
            },
        )
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": item,
            },
        )
        yield (
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    "id": response,
                    "usage": {
                        "input_tokens": 10,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 10,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 20,
                    },
                },
            },
        )
