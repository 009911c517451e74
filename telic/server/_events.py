"""A bounded in-memory event store: SSE streams of ``telic serve --http`` can be resumed.

With an event store the SDK primes each SSE stream with an event id (and a ``retry`` hint), and
a client that lost the stream reconnects with ``Last-Event-ID`` to get what it missed (MCP's
streamable HTTP transport, SEP-1699). This store keeps the most recent ``max_events`` events
of all streams in memory, oldest dropped first: resuming works while the missed events are
still held, and a client that comes back later than that gets nothing replayed (the SDK then
answers as for an unknown event id). Nothing is written to disk: a restarted server resumes
nothing, which MCP allows.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

from telic._errors import UsageError

DEFAULT_MAX_EVENTS: Final = 1024
"""Events held at once, across all streams."""


class BoundedEventStore(EventStore):
    """The last ``max_events`` SSE events of all streams, for ``Last-Event-ID`` replay."""

    def __init__(self, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        """Hold at most ``max_events`` events.

        Raises:
            UsageError: rule ``event_store.bound`` — ``max_events`` is below 1.
        """
        if max_events < 1:
            raise UsageError("event_store.bound: an event store holds at least one event")
        self._max = max_events
        # A per-process prefix: an id from an earlier server process never names an event here.
        self._prefix = secrets.token_hex(4)
        self._next = 0
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()

    @property
    def held(self) -> int:
        """How many events the store holds (not ``__len__``: the SDK tests a store's truth)."""
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Keep one event (``None``: a stream's priming event) and return its new id."""
        self._next += 1
        event_id = f"{self._prefix}-{self._next}"
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._max:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream stored after it; return that stream.

        ``None`` when the id is unknown (never issued here, or already dropped).
        """
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        later = False
        missed: list[EventMessage] = []
        for event_id, (stream, message) in self._events.items():
            if later and stream == stream_id and message is not None:
                missed.append(EventMessage(message, event_id))
            later = later or event_id == last_event_id
        for event in missed:  # collected first: sending may store new events
            await send_callback(event)
        return stream_id
