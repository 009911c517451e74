"""Serving either way: the garbage collector is tuned while serving and restored after; over
HTTP, calls of tools that never notify are answered as JSON, everything else the default way."""

from __future__ import annotations

import gc
from typing import Any

from telic.server._backend import serving_gc
from telic.server._tools import list_tools
from telic.server._transport import QUIET_TOOLS, is_quiet


def test_the_collector_is_restored_after_serving() -> None:
    before = gc.get_threshold()
    with serving_gc():
        gc.freeze()  # what the opened backend does
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def _scope(**headers: str) -> dict[str, Any]:
    sent = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "telic_submit_artifact",
    } | {key.replace("_", "-"): value for key, value in headers.items()}
    raw = [(key.encode(), value.encode()) for key, value in sent.items() if value]
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": raw}


def test_a_stateless_call_of_a_quiet_tool_is_answered_as_json() -> None:
    assert is_quiet(_scope())


def test_grounding_keeps_the_way_that_can_stream_its_progress() -> None:
    assert "telic_ground_context" not in QUIET_TOOLS
    assert not is_quiet(_scope(mcp_name="telic_ground_context"))


def test_handshake_era_requests_and_anything_not_a_quiet_call_keep_the_default_way() -> None:
    assert not is_quiet(_scope(mcp_protocol_version="2025-06-18"))
    assert not is_quiet(_scope(mcp_protocol_version=""))
    assert not is_quiet(_scope(mcp_method="tools/list"))
    assert not is_quiet(_scope(mcp_name=""))
    assert not is_quiet(_scope(accept="application/json"))
    assert not is_quiet(_scope() | {"path": "/runs"})
    assert not is_quiet(_scope() | {"method": "GET"})


def test_every_listed_tool_but_grounding_is_quiet() -> None:
    names = {tool.name for tool in list_tools()}
    assert names - QUIET_TOOLS == {"telic_ground_context"}
