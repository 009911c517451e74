"""A host that behaves like Claude Code drives a native-subagent analyze_and_fix run from the
files ``telic init claude-code`` wrote, in a fresh project outside this repository.

The scripted host reads ``.mcp.json`` and spawns the server exactly as configured; before each
tool call it runs every matching ``.claude/settings.json`` PreToolUse command through a shell
with Claude Code's stdin JSON (and the PostToolUse ones after a Telic tool), and obeys the
answer. It casts two ``telic-cast`` children at once (fan-out), returns their packets, cites
both in the diagnosis, then fixes the bug inside the node's scope; a write outside it is
denied. The Codex and Cursor kits are driven as far as their files define them: the server
each one configures is spawned and answers. Each kit is tested as ``telic init`` writes it by
default (the resident server, on POSIX, which the hook asks while it listens) and with
``--in-process`` (a server per session, the hook deciding in its own process); the resident
servers a test starts live in a runtime directory of its own and are stopped after it.

Results are read by the Telic 1.0 key names (``id``, ``artifact.body``, ``run.budgets``)
through ``key``/``body_of``, which also accept this branch's older names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client, StdioServerParameters

from telic.demo import (
    Change,
    DemoRepository,
    RunDriver,
    TelicTools,
    close_fix,
    criterion,
    find_demo_repo,
    permissions,
    verification,
)
from telic.ledger import open_ledger
from tests.telic.resident.kit import private_runtime, server_pids

pytestmark = pytest.mark.slow

KITS = [pytest.param([], id="default"), pytest.param(["--in-process"], id="in-process")]


@pytest.fixture
def runtime() -> Iterator[Path]:
    """The resident servers' runtime directory of one test (``private_runtime``)."""
    with private_runtime() as path:
        yield path


TELIC = Path(sys.executable).parent / "telic"
TARGET = "src/pagination.py"
TESTS = f"{sys.executable} -B -m unittest discover -s tests"
EXPLORE = {
    "castType": "explore",
    "enabled": True,
    "ceilingTurns": 8,
    "ceilingTokens": 50_000,
    "readOnly": True,
    "allowedNeedCodes": ["locate", "verify_claim", "diagnose"],
}


def key(record: dict[str, Any], name: str, legacy: str) -> Any:
    """``record[name]`` under its Telic 1.0 name, or under this branch's older one."""
    return record[name] if name in record else record[legacy]


def body_of(envelope: dict[str, Any]) -> dict[str, Any]:
    """A get_artifact result's body: ``artifact.body`` (Telic 1.0) or top-level ``body``."""
    artifact = envelope.get("artifact", {})
    return dict(artifact["body"] if "body" in artifact else envelope["body"])


class ClaudeCodeLike:
    """The parts of Claude Code this test needs: its MCP and hook configuration, obeyed."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.session = "3f0e6a52-claude-code-session"
        settings = json.loads((project / ".claude/settings.json").read_text())
        self.hooks: dict[str, list[dict[str, Any]]] = settings["hooks"]
        self.denied: list[tuple[str, str]] = []

    def server(self) -> StdioServerParameters:
        entry = json.loads((self.project / ".mcp.json").read_text())["mcpServers"]["telic"]
        return StdioServerParameters(
            command=entry["command"], args=entry["args"], env=self.env, cwd=str(self.project)
        )

    def _run_hooks(
        self,
        event: str,
        tool: str,
        tool_input: dict[str, Any],
        agent: str | None = None,
        **extra: Any,
    ) -> list[Any]:
        answers = []
        for group in self.hooks.get(event, []):
            if not re.fullmatch(group.get("matcher", ".*"), tool):
                continue
            for action in group["hooks"]:
                stdin = {
                    "session_id": self.session,
                    "transcript_path": str(self.project / "transcript.jsonl"),
                    "cwd": str(self.project),
                    "hook_event_name": event,
                    **extra,
                }
                if event in ("PreToolUse", "PostToolUse"):
                    stdin |= {"tool_name": tool, "tool_input": tool_input}
                if agent is not None:  # a subagent's own event: Claude Code adds who it is
                    stdin |= {"agent_id": agent, "agent_type": "telic-cast"}
                done = subprocess.run(
                    action["command"],
                    shell=True,  # Claude Code runs a command hook through the shell
                    input=json.dumps(stdin),
                    capture_output=True,
                    text=True,
                    cwd=self.project,
                    env=self.env,
                    timeout=action["timeout"],
                    check=False,
                )
                assert done.returncode == 0, done.stderr
                answers.append(json.loads(done.stdout) if done.stdout.strip() else None)
        return answers

    async def pre(self, tool: str, tool_input: dict[str, Any], agent: str | None = None) -> bool:
        """Run the PreToolUse hooks (of the subagent ``agent``, if given); ``True`` when the
        tool may run."""
        answers = await anyio.to_thread.run_sync(
            self._run_hooks, "PreToolUse", tool, tool_input, agent
        )
        for answer in answers:
            if answer and answer["hookSpecificOutput"]["permissionDecision"] == "deny":
                reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
                self.denied.append((tool, reason))
                return False
        return True

    async def post(self, tool: str, tool_input: dict[str, Any]) -> None:
        await anyio.to_thread.run_sync(self._run_hooks, "PostToolUse", tool, tool_input)

    async def subagent_start(self, agent: str) -> str:
        """Run the SubagentStart hooks (it cannot be blocked); the context they add."""

        def run() -> list[Any]:
            return self._run_hooks("SubagentStart", "telic-cast", {}, agent)

        answers = await anyio.to_thread.run_sync(run)
        return " ".join(a["hookSpecificOutput"]["additionalContext"] for a in answers if a)

    async def subagent_stop(self, agent: str, last_message: str) -> str | None:
        """Run the SubagentStop hooks; the reason the child is kept going, or ``None``."""

        def run() -> list[Any]:
            return self._run_hooks(
                "SubagentStop",
                "telic-cast",
                {},
                agent,
                stop_hook_active=False,
                last_assistant_message=last_message,
            )

        answers = await anyio.to_thread.run_sync(run)
        blocked = [a["reason"] for a in answers if a and a.get("decision") == "block"]
        return blocked[0] if blocked else None

    async def read(self, path: str, agent: str | None = None) -> str | None:
        if not await self.pre("Read", {"file_path": str(self.project / path)}, agent):
            return None
        return (self.project / path).read_text(encoding="utf-8")

    async def write(self, path: str, content: str, agent: str | None = None) -> bool:
        tool_input = {"file_path": str(self.project / path), "content": content}
        if not await self.pre("Write", tool_input, agent):
            return False
        (self.project / path).write_text(content, encoding="utf-8")
        return True

    async def bash(self, command: str) -> str | None:
        if not await self.pre("Bash", {"command": command}):
            return None
        done = await anyio.run_process(command, cwd=self.project, check=False)
        output = (done.stdout + done.stderr).decode()
        return f"$ {command}  (exit {done.returncode})\n{output}"


class HookedTools(TelicTools):
    """Telic's MCP tools, called the way Claude Code calls them: hooks before and after."""

    def __init__(self, client: Client, host: ClaudeCodeLike) -> None:
        super().__init__(client)
        self.host = host

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        name = f"mcp__telic__{tool}"
        assert await self.host.pre(name, args), self.host.denied[-1]
        envelope = await super().attempt(tool, progress, **args)
        await self.host.post(name, args)
        return envelope


async def cast_child(
    tools: TelicTools, host: ClaudeCodeLike, driver: RunDriver, need: str, marker: str
) -> dict[str, Any]:
    """Admit one explore child and start it through Claude Code's ``Agent`` tool with its
    handoff; return its cast (the child works later, in parallel)."""
    admitted = await tools.call(
        "telic_cast",
        run_id=driver.run_id,
        cast_type="explore",
        routing={
            "needCode": need,
            "text": f"Quote the line of paginate that {marker}",
            "expectedEvidence": ["file_state"],
            "acceptance": ["quotes the line verbatim"],
        },
        budget={"maxTurns": 4, "maxTotalTokens": 20_000},
        brief=f"Read {TARGET} and quote the line that {marker}.",
        pointers=[f"repo://{TARGET}"],
    )
    cast = dict(admitted["cast"])
    # Without a handoff, a live run refuses to start a child: it could not be bound to a cast.
    assert not await host.pre("Agent", {"subagent_type": "telic-cast", "prompt": "look around"})
    assert "no_handoff" in host.denied[-1][1]
    spawn = {
        "description": f"Quote the line that {marker}"[:40],
        "subagent_type": "telic-cast",
        "prompt": json.dumps(cast["handoff"]),
    }
    assert await host.pre("Agent", spawn), host.denied[-1]
    agent = "a" + cast["castId"][-16:]
    context = await host.subagent_start(agent)
    assert f"you serve Telic cast {cast['castId']}" in context
    return cast | {"agent": agent}


async def child_returns(
    tools: TelicTools, host: ClaudeCodeLike, driver: RunDriver, cast: dict[str, Any], needle: str
) -> str:
    """The child's work: read only what the handoff points at, return one packet."""
    handoff = cast["handoff"]
    assert set(handoff) <= {"castId", "brief", "pointers", "packetRefs"}
    path = handoff["pointers"][0].removeprefix("repo://")
    agent = cast["agent"]
    # The child is held to its cast: a read-only type, confined to its pointers.
    assert not await host.write(path, "a child may not write", agent)
    assert "denies repository.write" in host.denied[-1][1]
    assert await host.read("README.md", agent) is None
    assert "(layer: cast_pointers; out_of_scope)" in host.denied[-1][1]
    text = await host.read(path, agent)
    assert text is not None
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines, 1) if needle in line)
    await tools.call(
        "telic_cast_progress",
        run_id=driver.run_id,
        cast_id=cast["castId"],
        turns=2,
        tool_calls=1,
        input_tokens=1_500,
        output_tokens=200,
    )
    body = {
        "claim": f"{path} line {number} reads {lines[number - 1].strip()}",
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
    # Prose is not a return: the child is kept going once, with the repair code.
    assert "not_a_packet" in (await host.subagent_stop(agent, "I found it.") or "")
    assert await host.subagent_stop(agent, json.dumps(body)) is None
    returned = await tools.call(
        "telic_return_packet", run_id=driver.run_id, cast_id=cast["castId"], packet=body
    )
    packet = returned["packet"]
    assert packet["verdict"] == "verified"
    return str(packet["packetId"])


async def drive(host: ClaudeCodeLike, repo: DemoRepository) -> dict[str, Any]:
    async with Client(host.server()) as client:
        tools = HookedTools(client, host)
        grants = ["repository.read", "repository.write", "shell.execute", "subagent.spawn"]
        driver = await RunDriver.start(
            tools,
            "analyze_and_fix",
            "paginate returns the wrong items for page 1; find the cause and fix it in src/",
            "Fix the pagination off-by-one inside src/",
            host_name="claude-code",
            native_subagents="available",
            host_capabilities=grants,
            authorization_granted=grants,
            shell_execute_allowlist=[TESTS],
            cast_types=[EXPLORE],
        )
        b = driver.bodies
        b.criteria = [
            criterion("AC-1", "diagnosis", "The root cause is located with direct evidence"),
            criterion("AC-2", "completion", "The failing tests pass after a fix inside src/"),
        ]
        b.verifications = [
            verification("VR-DIAG", "diagnosis", "Read the faulty line"),
            verification("VR-COMP", "completion", "Re-run the tests after the fix"),
        ]
        b.permissions = permissions(read=["**"], write=["src/**"], children=2)
        b.permissions["shell"]["executeAllowlist"] = [TESTS]
        read_perms = permissions(read=["**"], children=2)
        fix_perms = permissions(read=["**"], write=["src/**"])
        fix_perms["shell"]["executeAllowlist"] = [TESTS]
        await driver.ground([TARGET])
        await driver.submit("ProblemFrame", b.frame())
        await driver.submit("TaskContract", b.contract())
        await driver.submit("PromptReview", b.prompt_review())
        diag = b.node(
            "diagnose",
            ["AC-1"],
            ["repository.read"],
            read_perms,
            children=2,
            extra_tools=["subagent.spawn"],
        )
        await driver.submit("WorkPlan", b.plan("plan-01", [diag], depth=1))

        # Diagnosis: no writes yet, whatever the path.
        assert not await host.write(TARGET, "early")
        # Fan-out: both children are admitted before either returns.
        first = await cast_child(tools, host, driver, "locate", "computes the start index")
        second = await cast_child(tools, host, driver, "verify_claim", "slices the items")
        packets = [
            await child_returns(tools, host, driver, first, "start = "),
            await child_returns(tools, host, driver, second, "items["),
        ]
        source = await host.read(TARGET)
        assert source is not None
        faulty = next(line for line in source.splitlines() if "start = " in line)
        observed = f"$ Read {TARGET}\n{faulty.strip()}\n"
        await driver.submit(
            "Evidence", b.evidence("evidence-01", "tool_output", "The start-index line", observed)
        )
        note = (
            f"Located the cause: packet {packets[0]} quotes the start index and packet "
            f"{packets[1]} the slice that uses it."
        )
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
            ["repository.read", "repository.write", "shell.execute"],
            fix_perms,
            "The packets and the code agree on the cause.",
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
        fix_tools = ["repository.read", "repository.write", "shell.execute"]
        fix = b.node("fix", ["AC-2"], fix_tools, fix_perms, calls=10, input_refs=[b.uri("QR-01")])
        await driver.submit("WorkPlan", b.plan("plan-02", [fix]))

        # Execution: outside the node's scope denied, inside allowed.
        assert not await host.write("README.md", "rewritten\n")
        before = (repo.root / TARGET).read_bytes()
        fixed = before.decode().replace("start = page * per_page", "start = (page - 1) * per_page")
        assert await host.write(TARGET, fixed)
        change = Change(TARGET, before, fixed.encode(), _diff(before.decode(), fixed))
        await driver.submit(
            "Evidence", b.evidence("evidence-diff", "diff", f"Diff of {TARGET}", change.diff)
        )
        tested = await host.bash(TESTS)
        assert tested is not None
        assert "(exit 0)" in tested, tested
        await driver.submit(
            "Evidence", b.evidence("evidence-verify", "tool_output", "Tests after the fix", tested)
        )
        actions = [
            b.action("A-1", "repository.write", TARGET, ["evidence-diff"], "Applied the fix."),
            b.action("A-2", "shell.execute", TESTS, ["evidence-verify"], "Re-ran the tests."),
            b.action("A-3", "repository.read", TARGET, ["evidence-verify"], "Read the fix back."),
        ]
        files = [
            {
                "path": TARGET,
                "changeType": "modified",
                "beforeHash": Change.sha(change.before),
                "afterHash": Change.sha(change.after),
                "diffRef": b.uri("evidence-diff"),
            }
        ]
        result = b.result(
            "result-02",
            "plan-02",
            "fix",
            actions=actions,
            evidence=["evidence-diff", "evidence-verify"],
            criteria=["AC-2"],
            files=files,
            note="Fixed the start index.",
        )
        await driver.submit("WorkResult", result)
        await close_fix(
            driver,
            "The root cause is fixed inside src/ and the tests pass",
            "Fixed the off-by-one in paginate inside src/; the tests pass.",
        )
        run = (await tools.call("telic_get_run", run_id=driver.run_id))["run"]
        report = await tools.call(
            "telic_get_artifact", run_id=driver.run_id, artifact_id="report-1"
        )
        digest = (await tools.call("telic_get_digest", run_id=driver.run_id))["digest"]
        verified = await tools.call("telic_verify_run", run_id=driver.run_id)
    return {
        "run": run,
        "packets": packets,
        "report": report,
        "digest": digest,
        "verified": verified,
    }


def _diff(before: str, after: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{TARGET}",
            f"b/{TARGET}",
        )
    )


async def raw_trace(state: Path, root: Path, run_id: str) -> list[Any]:
    """The run's trace as the ledger stores it (event types and summaries unmapped)."""
    async with open_ledger(f"sqlite://{state}", repository_root=root) as ledger:
        return list((await ledger.page_trace(run_id, 0, 500)).events)


def telic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TELIC), *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def _environment(tmp_path: Path, runtime: Path) -> dict[str, str]:
    env = {**os.environ, "TELIC_STATE_DIR": str(tmp_path / "state")}
    env["TELIC_RUNTIME_DIR"] = str(runtime)
    env.pop("TELIC_REPOSITORY_ROOT", None)
    return env


def _resident_servers(runtime: Path) -> int:
    return len(server_pids(runtime)) if runtime.is_dir() else 0


@pytest.mark.parametrize("kit", KITS)
def test_a_claude_code_like_host_completes_a_native_subagent_run_from_the_kit(
    tmp_path: Path, runtime: Path, kit: list[str]
) -> None:
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"  # the host and init start outside the project
    elsewhere.mkdir()
    env = _environment(tmp_path, runtime)
    done = telic(
        "init", "claude-code", "--repository", str(repo.root), *kit, env=env, cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    host = ClaudeCodeLike(repo.root, env)

    outcome = anyio.run(drive, host, repo)

    run = outcome["run"]
    assert run["status"] == "completed"
    assert "budgets" in run or "promptRevisionsRemaining" in run
    assert body_of(outcome["report"])["terminalStatus"] == "completed"
    assert outcome["verified"]["intact"] is True
    denied = [tool for tool, _ in host.denied]
    # During diagnosis; then, per child, a spawn without a handoff, the child's write and its
    # read outside its pointers; then the parent's write outside the node's scope.
    assert denied == ["Write", *(["Agent"] * 2), *(["Write", "Read"] * 2), "Write"]
    assert "README.md" in host.denied[-1][1]
    for packet in outcome["packets"]:
        assert packet in outcome["digest"]
    run_id = key(run, "runId", "runId")
    events = anyio.run(raw_trace, tmp_path / "state", repo.root, run_id)
    consumed = [json.loads(e.decision_summary) for e in events if e.event_type == "packet_consumed"]
    assert sorted(r["packetId"] for r in consumed) == sorted(outcome["packets"])
    assert all(r["cited"] for r in consumed)
    checks = [e.permission_decision for e in events if e.event_type == "permission_checked"]
    assert {c["decision"] for c in checks if c is not None} == {"allow", "deny"}
    shown = telic("report", run_id, env=env, cwd=repo.root)
    assert shown.returncode == 0, shown.stderr
    for packet in outcome["packets"]:  # the report's packet table: both consumed (cited)
        rows = [x for x in shown.stdout.splitlines() if x.startswith("|") and packet in x]
        assert any("| cited " in row for row in rows), rows  # "cited (token)", escaped
        assert not any("not cited" in row or "not observed" in row for row in rows), rows
    verify = telic("verify", run_id, env=env, cwd=repo.root)
    assert verify.returncode == 0, verify.stdout
    resident = not kit and os.name == "posix"
    assert _resident_servers(runtime) == (1 if resident else 0)  # one for every session


@pytest.mark.parametrize("kit", KITS)
@pytest.mark.parametrize("host", ["codex", "cursor"])
def test_the_codex_and_cursor_kits_start_a_server_bound_to_the_project(
    tmp_path: Path, runtime: Path, host: str, kit: list[str]
) -> None:
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "project")
    env = _environment(tmp_path, runtime)
    done = telic("init", host, "--repository", str(repo.root), *kit, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    if host == "codex":
        entry = tomllib.loads((repo.root / ".codex/config.toml").read_text())["mcp_servers"]
        assert "## Telic workflow" in (repo.root / "AGENTS.md").read_text()
    else:
        entry = json.loads((repo.root / ".cursor/mcp.json").read_text())["mcpServers"]
        assert (repo.root / ".cursor/rules/telic-workflow.mdc").is_file()
    server = entry["telic"]

    async def start() -> dict[str, Any]:
        params = StdioServerParameters(
            command=server["command"], args=server["args"], env=env, cwd=str(tmp_path)
        )
        async with Client(params) as client:
            tools = TelicTools(client)
            started = await tools.call(
                "telic_start_run", original_request="Explain paginate", mode="analyze_only"
            )
            return dict(started["run"])

    run = anyio.run(start)
    assert run["repositoryRoot"] == str(repo.root)
    assert _resident_servers(runtime) == (1 if not kit and os.name == "posix" else 0)
