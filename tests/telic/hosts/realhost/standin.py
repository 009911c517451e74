"""Loopback stand-ins for a host's model API, played by a script.

A real host binary (Claude Code, Codex) talks to its model over HTTP. Pointed at one of these
servers on 127.0.0.1, it gets each next tool call from a *script*: ordinary blocking Python
running in a thread of its own, which calls ``conversation.call(tool, arguments)`` and gets back
what the host returned for that call (the text and whether it was an error), exactly as the
host sent it in its next request. So the script reads the tool results Telic returned through
the host (ids, versions, the ``nextAction``) and decides the next call from them.

One ``Conversation`` is one agent's thread of requests: the host's main agent, or one of its
subagents. The wire format (Anthropic Messages or OpenAI Responses) is the server's business;
the script never sees it.
"""

from __future__ import annotations

import json
import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["Conversation", "Move", "Returned", "ScriptFailed", "StandInServer"]

JSON = dict[str, Any]
WAIT = 90.0  # seconds a side waits for the other before the test fails


class ScriptFailed(AssertionError):
    """The script raised, or a side waited past ``WAIT``: the message says which and why."""


@dataclass(frozen=True)
class Move:
    """The model's next turn: a tool call, or (``tool`` None) a final text answer."""

    call_id: str
    tool: str | None
    arguments: JSON = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Returned:
    """What the host sent back for one tool call."""

    text: str
    is_error: bool

    def envelope(self) -> JSON:
        """The Telic envelope (a JSON object) the text ends with, after any lines the host
        put before it (Codex: the call's wall time)."""
        value = json.loads(self.text[self.text.index("{") :])
        assert isinstance(value, dict), self.text
        return value


class Conversation:
    """One agent's side of the exchange: a script in a thread, the host's requests on the other.

    ``next_move(results)`` is called by the HTTP server for each request of this agent, with the
    tool results that request carries by call id; it hands them to the waiting script and
    returns the script's next move. A repeated request (the host retrying) gets the same move.
    """

    def __init__(self, name: str, script: Callable[[Conversation], str]) -> None:
        self.name = name
        self._script = script
        self._moves: queue.Queue[Move | BaseException] = queue.Queue()
        self._results: queue.Queue[Returned] = queue.Queue()
        self._lock = threading.Lock()
        self._last: Move | None = None
        self._count = 0
        self._thread: threading.Thread | None = None
        self.calls: list[tuple[str, JSON, Returned]] = []
        self.finished = threading.Event()
        self.failure: BaseException | None = None
        self.latest: dict[str, Any] = {}
        """The latest request of this agent, whole (what the last result came in)."""

    # ------------------------------------------------------------------ script side

    def call(self, tool: str, arguments: JSON) -> Returned:
        """Make one tool call through the host; block until the host sends its result."""
        self._count += 1
        move = Move(f"call_{self.name}_{self._count}", tool, arguments)
        self._moves.put(move)
        try:
            returned = self._results.get(timeout=WAIT)
        except queue.Empty:
            raise ScriptFailed(f"{self.name}: no result for {tool} within {WAIT} s") from None
        self.calls.append((tool, arguments, returned))
        return returned

    def _run(self) -> None:
        try:
            text = self._script(self)
        except BaseException as error:  # handed to the server and to the test
            self.failure = error
            self._moves.put(error)
        else:
            self._moves.put(Move(f"end_{self.name}", None, text=text))
        finally:
            self.finished.set()

    # ------------------------------------------------------------------ server side

    def next_move(self, results: dict[str, Returned]) -> Move:
        """The move answering one request of this agent (starting the script on the first)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name=self.name)
                self._thread.start()
            elif self._last is not None and self._last.tool is not None:
                if self._last.call_id not in results:
                    return self._last  # a retry of the request that asked for this move
                self._results.put(results[self._last.call_id])
            elif self._last is not None:
                return self._last  # the script has ended; the host asked again
            try:
                move = self._moves.get(timeout=WAIT)
            except queue.Empty:
                raise ScriptFailed(f"{self.name}: the script made no move in {WAIT} s") from None
            if isinstance(move, BaseException):
                detail = "".join(traceback.format_exception(move))
                raise ScriptFailed(f"{self.name}: the script failed\n{detail}")
            self._last = move
            return move

    def transcript(self) -> str:
        """Each call so far with the start of its result: what a failing test shows."""
        lines = [f"{self.name}:"]
        for tool, arguments, returned in self.calls:
            mark = "ERROR " if returned.is_error else ""
            lines.append(f"  {tool} {json.dumps(arguments)[:160]} -> {mark}{returned.text[:300]}")
        return "\n".join(lines)

    def check(self) -> None:
        """Raise what the script raised, if it did; fail if it never finished."""
        if self.failure is not None:
            raise ScriptFailed(f"{self.name}: the script failed") from self.failure
        if not self.finished.is_set():
            moves = [tool for tool, _, _ in self.calls]
            raise ScriptFailed(f"{self.name}: the script did not finish; its calls: {moves}")


class StandInServer:
    """A loopback HTTP server answering one model API from ``Conversation`` scripts.

    A subclass names its endpoint (``ENDPOINT``, the end of the POST path) and supplies what is
    wire-specific: which conversation a request belongs to (``main_request``; subagents are
    told by their marker), the tool results it carries (``results``), the tool names it offers
    (``offered_in``), and the streamed answer (``events``). ``adjust`` may put a host-specific
    move first (waiting for a server). Use as a context manager; ``url`` is the base URL.
    """

    ENDPOINT = ""

    def __init__(self) -> None:
        self.main: Conversation | None = None
        """The main agent's conversation; set it before the host starts."""
        self._subagents: dict[str, Conversation] = {}
        self._lock = threading.Lock()
        self.requests: list[tuple[str | None, JSON]] = []
        """Every model request, with the name of the conversation it went to (None: aside)."""
        self.errors: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ wire-specific

    def marker_text(self, body: JSON) -> str:
        """The text of the request in which a subagent's marker is looked for."""
        raise NotImplementedError

    def main_request(self, body: JSON) -> bool:
        """Whether the request is the main agent's (not a subagent's, not a side request)."""
        raise NotImplementedError

    def results(self, body: JSON) -> dict[str, Returned]:
        """The tool results the request carries, by call id."""
        raise NotImplementedError

    def offered_in(self, body: JSON) -> set[str]:
        """The names of the tools the request offers."""
        raise NotImplementedError

    def events(self, move: Move, body: JSON) -> Iterator[tuple[str, JSON]]:
        """The streamed answer carrying ``move``: (event name, data) pairs."""
        raise NotImplementedError

    def adjust(self, move: Move, body: JSON) -> Move:
        """The move to send for ``move`` (the same, unless the host must do something first)."""
        return move

    def error_body(self, message: str) -> JSON:
        """An error answer in the API's shape."""
        return {"error": {"type": "invalid_request_error", "message": message}}

    # ------------------------------------------------------------------ common

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def subagent(self, marker: str, conversation: Conversation) -> None:
        """Route requests whose ``marker_text`` contains ``marker`` to ``conversation``."""
        with self._lock:
            self._subagents[marker] = conversation

    def offered(self, name: str) -> list[set[str]]:
        """The tool names offered in each request routed to the conversation ``name``."""
        return [self.offered_in(body) for routed, body in self.requests if routed == name]

    def route(self, body: JSON) -> Conversation | None:
        """The conversation a request belongs to; None for the host's side requests."""
        first = self.marker_text(body)
        with self._lock:
            for marker, conversation in self._subagents.items():
                if marker in first:
                    return conversation
        return self.main if self.main_request(body) else None

    def answer(self, body: JSON) -> Move:
        """The move answering one request (a short text for a side request)."""
        conversation = self.route(body)
        self.requests.append((conversation.name if conversation else None, body))
        if conversation is None:
            return Move("aside", None, text="OK")
        conversation.latest = body
        return self.adjust(conversation.next_move(self.results(body)), body)

    def __enter__(self) -> Self:
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
                self._json(404, {})  # model lists and the like: none here

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith(stand_in.ENDPOINT):
                    self._json(404, {})  # token counting and the like: nothing to decide
                    return
                try:
                    move = stand_in.answer(body)
                except ScriptFailed as failure:
                    stand_in.errors.append(str(failure))
                    self._json(400, stand_in.error_body(str(failure)))
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event, data in stand_in.events(move, body):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler
