"""The scripted model of a whole analyze_and_fix run, played through a real host binary.

It is ``telic.cli._host.drive_mode`` (the bodies of ``telic.cli._bodies``), with every tool
call made *through the host*: Telic's MCP tools under the host's names for them, the host's
own file tools for the native work, and the host's own subagent tool for the cast. Each call
waits for the result the host sends back in its next model request, so ids, versions and the
next action come from what Telic returned through the host, never from a side channel.

Native work, in the demo repository (the pagination off-by-one):

- diagnosis: read ``src/pagination.py`` (the hook allows it), find the faulty line;
- fix: write a new file outside the fix node's scope (the hook denies it: nothing is written),
  then write the fixed ``src/pagination.py`` (inside ``src/**``: allowed), then read it back.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from telic.cli import RunDriver, TelicTools
from telic.cli._host import Change, TelicCallError, drive_mode
from tests.telic.hosts.realhost.standin import Conversation, Returned

__all__ = [
    "EXPLORE",
    "OUTSIDE",
    "TARGET",
    "HostNames",
    "HostWorkspace",
    "Outcome",
    "ThroughHost",
    "child_script",
    "packet_in",
    "run_script",
]

JSON = dict[str, Any]
TARGET = "src/pagination.py"
OUTSIDE = "NOTES.md"
BUGGY = "start = page * per_page"
FIXED = "start = (page - 1) * per_page"
REQUEST = "paginate returns the wrong items for page 1; find the cause and fix it in src/"
GOAL = "Fix the pagination off-by-one inside src/"
EXPLORE = {
    "castType": "explore",
    "enabled": True,
    "ceilingTurns": 8,
    "ceilingTokens": 50_000,
    "readOnly": True,
    "allowedNeedCodes": ["locate", "verify_claim", "diagnose"],
}
GRANTS = ["repository.read", "repository.write", "subagent.spawn"]


@dataclass(frozen=True)
class HostNames:
    """How one host names things: its MCP tool names, its native tools and their arguments."""

    host: str
    telic_prefix: str
    read: Callable[[Path], tuple[str, JSON]]
    write: Callable[[Path, str], tuple[str, JSON]]


class ThroughHost(TelicTools):
    """Telic's tools, each called by the model through the host (``conversation``)."""

    def __init__(self, conversation: Conversation, names: HostNames) -> None:
        self.conversation = conversation
        self.names = names

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> JSON:
        returned = self.conversation.call(self.names.telic_prefix + tool, args)
        try:
            envelope = returned.envelope()
        except ValueError:
            raise TelicCallError(tool, {"code": "host", "error": returned.text}) from None
        return envelope


def packet_in(text: str) -> JSON:
    """The JSON object a cast subagent answered with, inside whatever the host wrapped it in."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    assert match is not None, f"no packet in the subagent's answer: {text!r}"
    value = json.loads(match.group(0))
    assert isinstance(value, dict)
    return value


def child_script(handoff: JSON, root: Path, names: HostNames) -> Callable[[Conversation], str]:
    """The cast subagent's script: read what the handoff points at, answer with one packet."""

    def script(child: Conversation) -> str:
        path = handoff["pointers"][0].removeprefix("repo://")
        tool, arguments = names.read(root / path)
        returned = child.call(tool, arguments)
        assert not returned.is_error, returned.text
        lines = (root / path).read_text(encoding="utf-8").splitlines()
        number = next(i for i, line in enumerate(lines, 1) if "start = " in line)
        assert lines[number - 1].strip() in returned.text  # what the host's Read showed
        packet = {
            "claim": "paginate computes the start index as page * per_page, treating its "
            "1-based page as 0-based",
            "evidence": [
                {
                    "kind": "file_state",
                    "source": f"repo://{path}",
                    "locator": f"line {number}",
                    "quote": lines[number - 1].strip(),
                }
            ],
            "completed": [0],
        }
        return json.dumps(packet)

    return script


@dataclass
class HostWorkspace:
    """The native work of the run, done with the host's own file tools."""

    conversation: Conversation
    root: Path
    names: HostNames
    refused: list[Returned] = field(default_factory=list)

    def _call(self, tool_and_arguments: tuple[str, JSON]) -> Returned:
        return self.conversation.call(*tool_and_arguments)

    def diagnose(self) -> str:
        shown = self._call(self.names.read(self.root / TARGET))
        assert not shown.is_error, shown.text
        faulty = next(line for line in shown.text.splitlines() if BUGGY in line)
        return f"$ read {TARGET}\n{faulty.strip()}\n"

    def apply_fix(self) -> Change:
        outside = self._call(self.names.write(self.root / OUTSIDE, "Notes on the fix.\n"))
        assert outside.is_error, outside.text  # outside the fix node's scope: refused
        self.refused.append(outside)
        before = (self.root / TARGET).read_bytes()
        text = before.decode()
        fixed = text.replace(BUGGY, FIXED)
        written = self._call(self.names.write(self.root / TARGET, fixed))
        assert not written.is_error, written.text
        diff = "".join(
            difflib.unified_diff(
                text.splitlines(keepends=True),
                fixed.splitlines(keepends=True),
                f"a/{TARGET}",
                f"b/{TARGET}",
            )
        )
        return Change(TARGET, before, fixed.encode(), diff)

    def verify(self) -> str:
        shown = self._call(self.names.read(self.root / TARGET))
        assert not shown.is_error, shown.text
        assert FIXED in shown.text, shown.text
        return f"$ read {TARGET}\n{FIXED}\n"


@dataclass
class Outcome:
    """What the scripted run saw: its id and the packet its cast returned."""

    run_id: str = ""
    packet_id: str = ""
    packet: JSON = field(default_factory=dict)


def run_script(
    names: HostNames,
    root: Path,
    cast: Callable[[ThroughHost, RunDriver], Awaitable[str]] | None,
    outcome: Outcome,
) -> Callable[[Conversation], str]:
    """The main agent's script: a complete analyze_and_fix run, casting once when ``cast``."""

    def script(conversation: Conversation) -> str:
        tools = ThroughHost(conversation, names)
        workspace = HostWorkspace(conversation, root, names)

        async def cast_once(driver: RunDriver) -> str:
            assert cast is not None
            outcome.run_id = driver.run_id
            outcome.packet_id = await cast(tools, driver)
            return outcome.packet_id

        async def drive() -> RunDriver:
            return await drive_mode(
                tools,
                "analyze_and_fix",
                workspace,
                request=REQUEST,
                goal=GOAL,
                active_paths=[TARGET],
                cast=cast_once if cast is not None else None,
                start={
                    "host_name": names.host,
                    "native_subagents": "available" if cast is not None else "unavailable",
                    "host_capabilities": GRANTS,
                    "authorization_granted": GRANTS,
                    "cast_types": [EXPLORE],
                },
            )

        driver = anyio.run(drive)
        outcome.run_id = driver.run_id
        return f"Run {driver.run_id} is {driver.action.get('kind', 'done')}."

    return script
