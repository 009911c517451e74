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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Conversation", "Move", "Returned", "ScriptFailed"]

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
        """The text as a Telic envelope (a JSON object)."""
        value = json.loads(self.text)
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
