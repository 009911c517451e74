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
from pathlib import Path
from typing import Any

import anyio
import pytest

from telic.cli import DemoRepository, RunDriver, find_demo_repo
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


def cast_through_agent(stand_in: MessagesStandIn, root: Path) -> Any:
    """The cast: admit it with ``telic_cast``, run it with Claude Code's ``Agent`` tool and the
    kit's ``telic-cast`` agent (its own conversation with the stand-in), return its packet."""

    async def cast(tools: ThroughHost, driver: RunDriver) -> str:
        admitted = await tools.call(
            "telic_cast",
            run_id=driver.run_id,
            cast_type="explore",
            routing={
                "needCode": "locate",
                "text": "Locate the line of paginate that computes where a page starts",
                "expectedEvidence": ["file_state"],
                "acceptance": ["quotes the start-index line verbatim"],
            },
            budget={"maxTurns": 4, "maxTotalTokens": 20_000},
            brief=f"Read {TARGET} and quote the line that computes where a page starts.",
            pointers=[f"repo://{TARGET}"],
        )
        handoff = admitted["cast"]["handoff"]
        cast_id = admitted["cast"]["castId"]
        child = Conversation("telic-cast", child_script(handoff, root, CLAUDE_CODE))
        stand_in.subagent(cast_id, child)
        ran = tools.conversation.call(
            "Agent",
            {
                "description": "Locate the faulty line",
                "subagent_type": "telic-cast",
                "prompt": json.dumps(handoff),
            },
        )
        assert not ran.is_error, ran.text
        child.check()
        returned = await tools.call(
            "telic_return_packet", run_id=driver.run_id, cast_id=cast_id, packet=packet_in(ran.text)
        )
        assert returned["packet"]["verdict"] == "verified", returned
        return str(returned["packet"]["packetId"])

    return cast


async def ledger_events(state: Path, root: Path, run_id: str) -> list[Any]:
    """The run's trace as the ledger stores it."""
    async with open_ledger(f"sqlite://{state}", repository_root=root) as ledger:
        return list((await ledger.page_trace(run_id, 0, 500)).events)


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
    outcome = Outcome()
    with MessagesStandIn() as stand_in:
        cast = cast_through_agent(stand_in, repo.root)
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
        ("Claude Code Agent", "allow", "subagent.spawn", "telic-cast"),
        ("Claude Code Read", "allow", "repository.read", TARGET),  # the cast's own Read
        ("Claude Code Read", "allow", "repository.read", TARGET),  # the diagnosis
        ("Claude Code Write", "deny", "repository.write", OUTSIDE),  # outside the fix node
        ("Claude Code Write", "allow", "repository.write", TARGET),
        ("Claude Code Read", "allow", "repository.read", TARGET),  # reading the fix back
    ]
    sealed = [e.decision_summary for e in events if e.event_type == "packet_sealed"]
    assert sealed == [f"Packet {outcome.packet_id} completed/verified: returned"]
    consumed = [json.loads(e.decision_summary) for e in events if e.event_type == "packet_consumed"]
    assert [(c["packetId"], c["cited"]) for c in consumed] == [(outcome.packet_id, True)]
    assert not (repo.root / OUTSIDE).exists()  # the denied write wrote nothing
    assert "start = (page - 1) * per_page" in (repo.root / TARGET).read_text(encoding="utf-8")
