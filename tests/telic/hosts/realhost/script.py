"""The scripted model of a whole analyze_and_fix run, played through a real host binary.

It follows ``telic.demo._host``'s analyze_and_fix run (the bodies of ``telic.demo._bodies``),
with a cast during the diagnosis and every tool call made *through the host*: Telic's MCP
tools under the host's names for them, the host's own file tools for the native work, and the
host's own subagent tool for the cast. Each call waits for the result the host sends back in
its next model request, so ids, versions and the next action come from what Telic returned
through the host, never from a side channel.

Native work, in the demo repository (the pagination off-by-one):

- diagnosis: read ``src/pagination.py`` (the hook allows it), find the faulty line;
- fix: write a new file outside the fix node's scope (the hook denies it: nothing is written),
  then write the fixed ``src/pagination.py`` (inside ``src/**``: allowed), then read it back.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from telic.demo import (
    Change,
    RunDriver,
    TelicCallError,
    TelicTools,
    close_fix,
    criterion,
    permissions,
    verification,
)
from tests.telic.hosts.realhost.standin import Conversation, Returned

__all__ = [
    "EXPLORE",
    "OUTSIDE",
    "TARGET",
    "HostNames",
    "HostWorkspace",
    "Outcome",
    "ThroughHost",
    "cast_packet",
    "child_script",
    "drive",
    "held_child_script",
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
    refused: Callable[[Returned], bool] = lambda returned: returned.is_error
    """Whether the host refused a call (its hook denied it)."""
    shell: tuple[str, ...] = ()
    """The exact shell commands the host's reads run as (Codex reads through its shell). The
    fix node allows ``shell.execute`` on exactly these; the diagnosis cannot (Telic counts a
    shell command as a possible mutation, which no node may hold before the diagnosis gate),
    so such a host takes its diagnosis from the cast's packet instead of reading itself."""


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
    """The packet (a JSON object with a ``claim``) a cast subagent answered with, inside
    whatever the host wrapped its answer in (text around it, or a JSON string in a JSON
    status, as Codex's ``wait_agent`` returns it)."""

    def find(value: Any) -> JSON | None:
        if isinstance(value, dict):
            if "claim" in value:
                return value
            value = list(value.values())
        if isinstance(value, list):
            for inner in value:
                if (found := find(inner)) is not None:
                    return found
        if isinstance(value, str) and "{" in value:
            try:
                return find(json.loads(value[value.index("{") : value.rindex("}") + 1]))
            except ValueError:
                return None
        return None

    packet = find(text)
    assert packet is not None, f"no packet in the subagent's answer: {text!r}"
    return packet


def cast_packet(root: Path, path: str, **extra: Any) -> JSON:
    """The packet a cast child answers with: the start-index line of ``path``, quoted."""
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, 1) if "start = " in line)
    return {
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
        **extra,
    }


def _pointed(handoff: JSON) -> str:
    return str(handoff["pointers"][0]).removeprefix("repo://")


def child_script(
    handoff: JSON, root: Path, names: HostNames, *, write_first: str | None = None
) -> Callable[[Conversation], str]:
    """The cast subagent's script: read what the handoff points at, answer with one packet.

    With ``write_first`` (a repository path) the child first tries to write that file, which
    its read-only cast refuses. Through a host that reads with its shell (Codex) the read is
    refused during the diagnosis (see ``HostNames.shell``); the packet's quote is then the
    test's own, which Telic still checks against the file when the packet is returned."""

    def script(child: Conversation) -> str:
        path = _pointed(handoff)
        if write_first is not None:
            written = child.call(*names.write(root / write_first, "Notes of the cast.\n"))
            assert names.refused(written), written.text  # a read-only cast: refused
        returned = child.call(*names.read(root / path))
        packet = cast_packet(root, path)
        if names.shell:  # a shell read, which the diagnosis cannot grant: refused
            assert names.refused(returned), returned.text
        else:
            assert not names.refused(returned), returned.text
            assert packet["evidence"][0]["quote"] in returned.text, returned.text
        return json.dumps(packet)

    return script


def held_child_script(
    handoff: JSON, root: Path, names: HostNames, outside: str
) -> Callable[[Conversation], str]:
    """A cast subagent held to a two-turn budget: it reads the pointed file (allowed), reads
    ``outside`` its pointers (refused), tries a third call (refused: its budget is spent) and
    answers with a typed partial, its ``remaining`` naming what it did not get to."""

    def script(child: Conversation) -> str:
        path = _pointed(handoff)
        inside = child.call(*names.read(root / path))
        assert not names.refused(inside), inside.text
        beyond = child.call(*names.read(root / outside))
        assert names.refused(beyond), beyond.text
        assert "cast_pointers" in beyond.text, beyond.text
        capped = child.call(*names.read(root / path))
        assert names.refused(capped), capped.text
        assert "turn_capped" in capped.text, capped.text
        remaining = ["check the callers of paginate for the same off-by-one"]
        return json.dumps(cast_packet(root, path, remaining=remaining))

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
        assert self.names.refused(outside), outside.text  # outside the fix node: refused
        self.refused.append(outside)
        before = (self.root / TARGET).read_bytes()
        text = before.decode()
        fixed = text.replace(BUGGY, FIXED)
        written = self._call(self.names.write(self.root / TARGET, fixed))
        assert not self.names.refused(written), written.text
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


def _with_shell(perms: JSON, commands: Sequence[str]) -> JSON:
    perms["shell"]["executeAllowlist"] = list(commands)
    return perms


async def drive(
    tools: ThroughHost,
    workspace: HostWorkspace,
    cast: Callable[[ThroughHost, RunDriver], Awaitable[str]],
    outcome: Outcome,
) -> RunDriver:
    """A complete analyze_and_fix run with one cast during the diagnosis, as
    ``telic.demo._host`` drives it, with the host's shell reads allowed where it has them."""
    names = tools.names
    shell = list(names.shell)
    grants = [*GRANTS, *(["shell.execute"] if shell else [])]
    driver = await RunDriver.start(
        tools,
        "analyze_and_fix",
        REQUEST,
        GOAL,
        host_name=names.host,
        native_subagents="available",
        host_capabilities=grants,
        authorization_granted=grants,
        shell_execute_allowlist=shell,
        cast_types=[EXPLORE],
    )
    outcome.run_id = driver.run_id
    b = driver.bodies
    b.criteria = [
        criterion("AC-1", "diagnosis", "The root cause is located with direct evidence"),
        criterion("AC-2", "completion", "The failing tests pass after a fix inside src/"),
    ]
    b.verifications = [
        verification("VR-DIAG", "diagnosis", "Read the faulty line"),
        verification("VR-COMP", "completion", "Read the fix back"),
    ]
    b.permissions = _with_shell(permissions(read=["**"], write=["src/**"], children=2), shell)
    read_perms = permissions(read=["**"], children=2)
    fix_perms = _with_shell(permissions(read=["**"], write=["src/**"]), shell)
    reading = ["repository.read", *(["shell.execute"] if shell else [])]
    await driver.ground([TARGET])
    await driver.submit("ProblemFrame", b.frame())
    await driver.submit("TaskContract", b.contract())
    await driver.submit("PromptReview", b.prompt_review())
    diag = b.node(
        "diagnose",
        ["AC-1"],
        ["repository.read"],
        read_perms,
        children=2,  # a host may cast twice: a child held to its budget, then the diagnosis
        extra_tools=["subagent.spawn"],
    )
    await driver.submit("WorkPlan", b.plan("plan-01", [diag], depth=1))

    outcome.packet_id = await cast(tools, driver)
    if shell:
        observed = f"The cast's packet {outcome.packet_id} quotes the start-index line.\n"
    else:
        observed = workspace.diagnose()
    await driver.submit(
        "Evidence", b.evidence("evidence-01", "tool_output", "The start-index line", observed)
    )
    note = f"Located the cause; the cast's packet {outcome.packet_id} quotes the faulty line."
    read = b.action("A-1", "repository.read", TARGET, ["evidence-01"], note)
    await driver.submit(
        "WorkResult",
        b.result(
            "result-01",
            "plan-01",
            "diagnose",
            actions=[read],
            evidence=["evidence-01"],
            criteria=["AC-1"],
            note=note,
        ),
    )
    gate = b.diagnosis_gate(
        "evidence-01",
        ["repository.read", "repository.write", *reading[1:]],
        fix_perms,
        "The packet and the code agree on the cause.",
    )
    diag_ok = ("AC-1", ["evidence-01"])
    await driver.submit(
        "QualityReview",
        b.quality_review(
            "QR-01",
            "plan-01",
            ["result-01"],
            "proceed_to_fix",
            [diag_ok],
            [("VR-DIAG", ["evidence-01"])],
            gate=gate,
        ),
    )
    fix_tools = ["repository.read", "repository.write", *reading[1:]]
    fix = b.node("fix", ["AC-2"], fix_tools, fix_perms, calls=10, input_refs=[b.uri("QR-01")])
    await driver.submit("WorkPlan", b.plan("plan-02", [fix]))

    change = workspace.apply_fix()  # a write outside the node (denied), then the fix
    await driver.submit(
        "Evidence", b.evidence("evidence-diff", "diff", f"Diff of {TARGET}", change.diff)
    )
    await driver.submit(
        "Evidence",
        b.evidence("evidence-verify", "tool_output", "The fix, read back", workspace.verify()),
    )
    actions = [
        b.action("A-1", "repository.write", TARGET, ["evidence-diff"], "Applied the fix."),
        b.action("A-2", "repository.read", TARGET, ["evidence-verify"], "Read the fix back."),
    ]
    for command in shell:
        note = "Read the fix back through the shell."
        actions.append(b.action("A-3", "shell.execute", command, ["evidence-verify"], note))
    files = [
        {
            "path": TARGET,
            "changeType": "modified",
            "beforeHash": Change.sha(change.before),
            "afterHash": Change.sha(change.after),
            "diffRef": b.uri("evidence-diff"),
        }
    ]
    both = ["evidence-diff", "evidence-verify"]
    await driver.submit(
        "WorkResult",
        b.result(
            "result-02",
            "plan-02",
            "fix",
            actions=actions,
            evidence=both,
            criteria=["AC-2"],
            files=files,
            note="Fixed the start index.",
        ),
    )
    await close_fix(
        driver,
        "The root cause is fixed inside src/ and the fix reads back",
        "Fixed the off-by-one in paginate inside src/.",
    )
    return driver


def run_script(
    names: HostNames,
    root: Path,
    cast: Callable[[ThroughHost, RunDriver], Awaitable[str]],
    outcome: Outcome,
) -> Callable[[Conversation], str]:
    """The main agent's script: ``drive`` through the host, then a closing answer."""

    def script(conversation: Conversation) -> str:
        tools = ThroughHost(conversation, names)
        workspace = HostWorkspace(conversation, root, names)
        driver = anyio.run(drive, tools, workspace, cast, outcome)
        return f"Run {driver.run_id} finished."

    return script
