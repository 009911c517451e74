"""The real Claude Code binary completes an analyze_and_fix run from the kit ``telic init
claude-code`` wrote, its model played by a loopback stand-in for the Messages API.

No network and no key: ``ANTHROPIC_BASE_URL`` points Claude Code at ``MessagesStandIn`` on
127.0.0.1, whose script (``script.run_script``) decides each next tool call from the tool
results Claude Code sent back. Claude Code itself connects the project's MCP server, runs the
kit's hooks on every tool call and obeys them, and runs its own ``Agent`` subagent tool with the
kit's ``telic-cast`` agent. The test asserts on the ledger, through ``telic`` and the ledger API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from telic.casting import children_of
from telic.demo import DemoRepository, RunDriver, find_demo_repo
from telic.ledger import open_ledger
from tests.telic.hosts.realhost.anthropic import MessagesStandIn
from tests.telic.hosts.realhost.binaries import claude_code, host_environment, run_host
from tests.telic.hosts.realhost.script import (
    OUTSIDE,
    TARGET,
    HostNames,
    Outcome,
    ThroughHost,
    child_script,
    held_child_script,
    packet_in,
    run_script,
)
from tests.telic.hosts.realhost.standin import Conversation
from tests.telic.resident.kit import private_runtime

pytestmark = pytest.mark.slow

TELIC = Path(sys.executable).parent / "telic"
CLAUDE_CODE = HostNames(
    host="claude-code",
    telic_prefix="mcp__telic__",
    read=lambda path: ("Read", {"file_path": str(path)}),
    write=lambda path, content: ("Write", {"file_path": str(path), "content": content}),
)


@pytest.fixture
def runtime() -> Iterator[Path]:
    """The resident servers' runtime directory of one test (``private_runtime``)."""
    with private_runtime() as path:
        yield path


def telic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TELIC), *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def approve(home: Path, root: Path) -> None:
    """What a user answers once when opening the project in Claude Code: trust the folder
    (only then does ``claude -p`` apply the project's ``permissions``; its hooks run either way)
    and approve the project's MCP server. Claude Code keeps both in ``~/.claude.json``."""
    project = {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["telic"]}
    (home / ".claude.json").write_text(json.dumps({"projects": {str(root): project}}))


OUTSIDE_POINTERS = "README.md"
"""A file the held child may not read: its cast points at ``TARGET`` only."""
CAST_WRITE = "src/cast_notes.py"
"""A file the general-purpose child tries to write: its read-only cast refuses it."""
ROUTING = {
    "needCode": "locate",
    "text": "Locate the line of paginate that computes where a page starts",
    "expectedEvidence": ["file_state"],
    "acceptance": ["quotes the start-index line verbatim"],
}


@dataclass
class Held:
    """What the held cast (two turns, its partial returned) left for the test to check."""

    cast_id: str = ""
    returned: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    verified_cast_id: str = ""


def cast_through_agent(stand_in: MessagesStandIn, root: Path, held: Held) -> Any:
    """Two casts during the diagnosis, each run by Claude Code's ``Agent`` tool in its own
    conversation with the stand-in:

    1. the kit's ``telic-cast`` agent on a cast of two turns pointing at ``TARGET``: it reads
       the file (allowed), reads ``OUTSIDE_POINTERS`` (denied) and is cut off at its third
       call; its partial is returned and the digest read;
    2. Claude Code's ``general-purpose`` agent (which has ``Write``) on the diagnosis cast: its
       write is denied, its read allowed; its verified packet is the one the run cites.
    """

    async def admit(tools: ThroughHost, driver: RunDriver, turns: int) -> tuple[str, Any]:
        admitted = await tools.call(
            "telic_cast",
            run_id=driver.run_id,
            cast_type="explore",
            routing=ROUTING,
            budget={"maxTurns": turns, "maxTotalTokens": 20_000},
            brief=f"Read {TARGET} and quote the line that computes where a page starts.",
            pointers=[f"repo://{TARGET}"],
        )
        return str(admitted["cast"]["castId"]), admitted["cast"]["handoff"]

    def spawn(tools: ThroughHost, agent_type: str, handoff: Any) -> str:
        ran = tools.conversation.call(
            "Agent",
            {
                "description": "Locate the faulty line",
                "subagent_type": agent_type,
                "prompt": json.dumps(handoff),
            },
        )
        assert not ran.is_error, ran.text
        return ran.text

    async def cast(tools: ThroughHost, driver: RunDriver) -> str:
        held.cast_id, handoff = await admit(tools, driver, 2)
        child = Conversation(
            "telic-cast", held_child_script(handoff, root, CLAUDE_CODE, OUTSIDE_POINTERS)
        )
        stand_in.subagent(held.cast_id, child)
        answer = spawn(tools, "telic-cast", handoff)
        child.check()
        held.returned = await tools.call(
            "telic_return_packet",
            run_id=driver.run_id,
            cast_id=held.cast_id,
            packet=packet_in(answer),
        )
        digest = await tools.call("telic_get_digest", run_id=driver.run_id)
        held.digest = json.dumps(digest)

        held.verified_cast_id, handoff = await admit(tools, driver, 4)
        child = Conversation(
            "general-purpose", child_script(handoff, root, CLAUDE_CODE, write_first=CAST_WRITE)
        )
        stand_in.subagent(held.verified_cast_id, child)
        answer = spawn(tools, "general-purpose", handoff)
        child.check()
        returned = await tools.call(
            "telic_return_packet",
            run_id=driver.run_id,
            cast_id=held.verified_cast_id,
            packet=packet_in(answer),
        )
        assert returned["packet"]["verdict"] == "verified", returned
        return str(returned["packet"]["packetId"])

    return cast


async def ledger_events(state: Path, root: Path, run_id: str) -> list[Any]:
    """The run's trace as the ledger stores it."""
    async with open_ledger(f"sqlite://{state}", repository_root=root) as ledger:
        return list((await ledger.page_trace(run_id, 0, 500)).events)


def _kit_max_turns(root: Path) -> int:
    """The ``maxTurns`` of the ``telic-cast`` agent the kit wrote (its front matter)."""
    text = (root / ".claude" / "agents" / "telic-cast.md").read_text(encoding="utf-8")
    return int(
        next(line for line in text.splitlines() if line.startswith("maxTurns:")).split(":")[1]
    )


def test_claude_code_completes_an_analyze_and_fix_run_with_a_cast(
    tmp_path: Path, runtime: Path
) -> None:
    binary = claude_code()
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "project")
    state = tmp_path / "state"
    env = host_environment(tmp_path / "home", state, runtime)
    done = telic("init", "claude-code", "--repository", str(repo.root), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    approve(tmp_path / "home", repo.root)
    kit_turns = _kit_max_turns(repo.root)
    assert kit_turns > 2  # the kit's own cap lies past the held cast's: Telic's cut-off stops it
    outcome, held = Outcome(), Held()
    with MessagesStandIn() as stand_in:
        cast = cast_through_agent(stand_in, repo.root, held)
        main = Conversation("main", run_script(CLAUDE_CODE, repo.root, cast, outcome))
        stand_in.main = main
        env.update(
            ANTHROPIC_BASE_URL=stand_in.url,
            ANTHROPIC_API_KEY="stand-in-key",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",  # no update checks, no telemetry
        )
        ran = run_host(
            [str(binary), "-p", "Fix the pagination bug", "--output-format", "json"],
            cwd=repo.root,
            env=env,
            seconds=90,
            describe=main.transcript,
        )
    if stand_in.errors:
        pytest.fail("\n".join(stand_in.errors))
    main.check()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The subagent was the kit's telic-cast agent: its front matter's tools, and only those.
    assert stand_in.offered("telic-cast")
    assert all(tools == {"Read", "Grep", "Glob"} for tools in stand_in.offered("telic-cast"))

    listed = telic("runs", "--json", env=env, cwd=repo.root)
    assert listed.returncode == 0, listed.stderr
    runs = {run["runId"]: run for run in json.loads(listed.stdout)["runs"]}
    assert runs[outcome.run_id]["status"] == "completed"
    events = anyio.run(ledger_events, state, repo.root, outcome.run_id)
    hook = [
        (e.decision_summary.split(":")[0], d["decision"], d["capability"], d["scope"])
        for e in events
        if (d := e.permission_decision) is not None
        and (e.decision_summary or "").startswith("Claude Code ")
    ]
    assert hook == [
        ("Claude Code Agent", "allow", "subagent.spawn", "telic-cast"),  # the held cast
        ("Claude Code Read", "allow", "repository.read", TARGET),  # inside its pointers
        ("Claude Code Read", "deny", "repository.read", OUTSIDE_POINTERS),  # outside them
        ("Claude Code Read", "deny", "repository.read", TARGET),  # its third call: cut off
        ("Claude Code Agent", "allow", "subagent.spawn", "general-purpose"),
        ("Claude Code Write", "deny", "repository.write", CAST_WRITE),  # a read-only cast
        ("Claude Code Read", "allow", "repository.read", TARGET),  # the cast's own Read
        ("Claude Code Read", "allow", "repository.read", TARGET),  # the diagnosis
        ("Claude Code Write", "deny", "repository.write", OUTSIDE),  # outside the fix node
        ("Claude Code Write", "allow", "repository.write", TARGET),
        ("Claude Code Read", "allow", "repository.read", TARGET),  # reading the fix back
    ]
    reasons = [
        d["rationaleSummary"]
        for e in events
        if (d := e.permission_decision) is not None and d["decision"] == "deny"
    ]
    assert "(layer: cast_pointers; out_of_scope)" in reasons[0], reasons[0]
    assert "(layer: cast_budget; turn_capped)" in reasons[1], reasons[1]
    # Before the diagnosis gate no layer grants a write: the run's phase decides first (the
    # cast's read-only layer never widens what its caller may do).
    assert f"denies repository.write on {CAST_WRITE}" in reasons[2], reasons[2]
    # Each child was bound at its start to the cast its Agent call handed off, and told so.
    children = children_of((e.event_type, e.decision_summary) for e in events)
    bound = {children.cast_of(agent) for agent in children.bound}
    assert bound == {held.cast_id, held.verified_cast_id}
    for name, cast_id in (("telic-cast", held.cast_id), ("general-purpose", held.verified_cast_id)):
        told = [json.dumps(body) for routed, body in stand_in.requests if routed == name]
        assert any(f"you serve Telic cast {cast_id}" in body for body in told), name
    assert all("Write" in tools for tools in stand_in.offered("general-purpose"))
    # The held child's partial: typed by what Telic saw, its three calls counted as turns.
    packet = held.returned["packet"]
    assert (packet["outcome"], packet["stopReason"]) == ("partial", "turn_capped"), packet
    assert packet["counters"]["turns"] == 3, packet
    assert children.spend_of(held.cast_id).turns == 3
    # The MCP digest keeps the contract's lines; the observed spend stands in its marks.
    digest = json.loads(held.digest)
    (mark,) = [m for m in digest["marks"] if m["packetId"] == packet["packetId"]]
    assert (mark["tokensSelfReported"], mark["observedTurns"], mark["observedToolCalls"]) == (
        True,
        3,
        3,
    ), digest
    side_by_side = "tokens self-reported; 3 turns, 3 tool calls observed"
    report = telic("report", outcome.run_id, "--format", "md", env=env, cwd=repo.root)
    assert report.returncode == 0, report.stderr
    assert side_by_side in report.stdout, report.stdout
    assert not (repo.root / CAST_WRITE).exists()  # the child's denied write wrote nothing
    sealed = [e.decision_summary for e in events if e.event_type == "packet_sealed"]
    assert sealed == [
        f"Packet {packet['packetId']} partial/verified: returned",
        f"Packet {outcome.packet_id} completed/verified: returned",
    ]
    consumed = [json.loads(e.decision_summary) for e in events if e.event_type == "packet_consumed"]
    # The run cites the verified packet; the held child's partial was consumed, never cited.
    assert [(c["packetId"], c["cited"]) for c in consumed] == [
        (packet["packetId"], False),
        (outcome.packet_id, True),
    ]
    assert not (repo.root / OUTSIDE).exists()  # the denied write wrote nothing
    assert "start = (page - 1) * per_page" in (repo.root / TARGET).read_text(encoding="utf-8")
