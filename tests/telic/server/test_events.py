"""The HTTP event store replays what a reconnecting client missed, within its bound."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCNotification

from telic._errors import UsageError
from telic.demo import DemoRepository, http_server
from telic.server._events import BoundedEventStore
from telic.server._transport import SSE_RETRY_MS
from tests.telic.server.raw import initialize

pytestmark = pytest.mark.anyio


def _note(n: int) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


class _Received:
    def __init__(self) -> None:
        self.events: list[EventMessage] = []

    async def __call__(self, event: EventMessage) -> None:
        self.events.append(event)


async def test_a_reconnecting_client_gets_its_streams_later_events_only() -> None:
    store = BoundedEventStore()
    priming = await store.store_event("stream-a", None)
    first = await store.store_event("stream-a", _note(1))
    await store.store_event("stream-b", _note(99))
    second = await store.store_event("stream-a", _note(2))
    received = _Received()
    assert await store.replay_events_after(priming, received) == "stream-a"
    assert [(e.event_id, e.message) for e in received.events] == [
        (first, _note(1)),
        (second, _note(2)),
    ]


async def test_nothing_is_replayed_after_the_last_event() -> None:
    store = BoundedEventStore()
    last = await store.store_event("stream-a", _note(1))
    received = _Received()
    assert await store.replay_events_after(last, received) == "stream-a"
    assert received.events == []


async def test_an_unknown_or_foreign_event_id_replays_nothing() -> None:
    store, other = BoundedEventStore(), BoundedEventStore()
    foreign = await other.store_event("stream-a", _note(1))
    await store.store_event("stream-a", _note(1))
    received = _Received()
    assert await store.replay_events_after(foreign, received) is None
    assert await store.replay_events_after("no-such-id", received) is None
    assert received.events == []


async def test_the_store_keeps_only_the_latest_events() -> None:
    store = BoundedEventStore(max_events=2)
    dropped = await store.store_event("stream-a", None)
    kept = await store.store_event("stream-a", _note(1))
    newest = await store.store_event("stream-a", _note(2))
    assert store.held == 2
    received = _Received()
    assert await store.replay_events_after(dropped, received) is None
    assert await store.replay_events_after(kept, received) == "stream-a"
    assert [e.event_id for e in received.events] == [newest]


def test_an_empty_store_is_still_a_store() -> None:
    # The SDK enables resumability with `if event_store:`; an empty store must not read as none.
    assert BoundedEventStore()


def test_a_store_must_hold_at_least_one_event() -> None:
    with pytest.raises(UsageError, match=r"event_store\.bound"):
        BoundedEventStore(max_events=0)


HANDSHAKE = initialize(version="2025-11-25")
SSE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _events(text: str) -> list[dict[str, str]]:
    """The SSE events of a response body, each as its field → value."""
    events = []
    for block in text.replace("\r\n", "\n").strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        events.append(fields)
    return events


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_2025_11_25_session_is_primed_and_can_resume_a_stream(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with http_server(repo.root, state) as url, httpx2.AsyncClient() as http:
            opened = await http.post(url, json=HANDSHAKE, headers=SSE)
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=ready, headers=SSE | session)
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            answered = _events((await http.post(url, json=ping, headers=SSE | session)).text)
            priming, response = answered[0], answered[-1]
            assert priming["data"] == ""
            assert priming["retry"] == str(SSE_RETRY_MS)
            assert json.loads(response["data"])["id"] == 2
            resume = SSE | session | {"last-event-id": priming["id"]}
            text = ""
            # The resumed GET stream stays open for later events: read until the first one.
            async with http.stream("GET", url, headers=resume) as resumed:
                async for chunk in resumed.aiter_text():
                    text += chunk
                    if "\n\n" in text.replace("\r\n", "\n"):
                        break
    replayed = _events(text)
    assert [event["id"] for event in replayed] == [response["id"]]
    assert json.loads(replayed[0]["data"])["id"] == 2
