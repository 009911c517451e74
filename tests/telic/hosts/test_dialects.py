"""One decision, four dialects: every host's documented payloads get the ledger's decision, in
the host's documented answer.

The payloads are written as each host's docs show them; the answers are checked against the
JSON Schemas in ``host_answers.json`` (written from the same docs). The expected verdict of each
call is the one ``telic_check_tool_action`` gives for the same capability and target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio.to_thread
import jsonschema
import pytest

from telic.cli._entry import HOSTS_WITH_HOOKS
from telic.hosts import DIALECTS, HOOK_HOSTS, host_hook
from telic.hosts._dialects import TELIC_TOOLS, patch_targets, read_event
from telic.resident._shim import _deny
from telic.server import TOOL_NAMES

from .test_hook import executing_fix, project

pytestmark = pytest.mark.anyio

SCHEMAS = json.loads((Path(__file__).parent / "host_answers.json").read_text())
Payload = dict[str, Any]
Expect = tuple[str, str] | str  # (capability, target) as check_tool_action decides it, or a verdict


def claude(tool: str, **tool_input: Any) -> Payload:
    """Claude Code's PreToolUse stdin (its hooks reference; real 2.1.197 payloads)."""
    return {
        "session_id": "session-1",
        "transcript_path": "/home/u/.claude/projects/p/session-1.jsonl",
        "cwd": "/somewhere/else",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }


def vscode(tool: str, **tool_input: Any) -> Payload:
    """VS Code agent mode's PreToolUse stdin (its hooks reference)."""
    return {
        "timestamp": "2026-12-03T09:00:00.000Z",
        "cwd": "/somewhere/else",
        "sessionId": "session-1",
        "hookEventName": "PreToolUse",
        "transcript_path": "/tmp/transcript.json",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "tool-123",
    }


def codex(tool: str, event: str = "PreToolUse", **tool_input: Any) -> Payload:
    """Codex's hook stdin (its generated input schemas: PreToolUse, PermissionRequest)."""
    return {
        "session_id": "thread-1",
        "transcript_path": None,
        "cwd": "/somewhere/else",
        "hook_event_name": event,
        "model": "gpt-5.1-codex",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call-1",
        "turn_id": "turn-1",
    }


def cursor(event: str, repo: Path, **fields: Any) -> Payload:
    """Cursor's hook stdin (its hooks docs: the common fields, then the event's own)."""
    return {
        "conversation_id": "conversation-1",
        "generation_id": "generation-1",
        "hook_event_name": event,
        "workspace_roots": [str(repo)],
        "cursor_version": "2.1.0",
        **fields,
    }


def patch(*headers: str) -> str:
    body = "\n".join(f"{header}\n@@\n-a\n+b" for header in headers)
    return f"*** Begin Patch\n{body}\n*** End Patch\n"


ALLOW, DENY = "allow", "deny"
TELIC = "telic"  # one of Telic's own tools: allowed, Telic checks it itself


def cases(host: str, repo: Path) -> list[tuple[str, Payload, Expect, str]]:
    """(what, payload, expectation, answer shape) for every kind of call the host can hook."""
    src, readme = f"{repo}/src/retry.py", f"{repo}/README.md"
    if host == "claude-code":
        return [
            ("read", claude("Read", file_path=src), ("repository.read", src), "PreToolUse"),
            ("write", claude("Write", file_path=src), ("repository.write", src), "PreToolUse"),
            ("write", claude("Edit", file_path=readme), ("repository.write", readme), "PreToolUse"),
            (
                "shell",
                claude("Bash", command="git status"),
                ("shell.inspect", "git.status"),
                "PreToolUse",
            ),
            (
                "shell",
                claude("Bash", command="rm -rf /"),
                ("shell.execute", "rm -rf /"),
                "PreToolUse",
            ),
            ("mcp", claude("mcp__telic__telic_get_run", run_id="x"), TELIC, "PreToolUse"),
            ("mcp", claude("mcp__github__create_issue", title="x"), DENY, "PreToolUse"),
            (
                "subagent",
                claude("Agent", subagent_type="telic-cast", prompt="p", description="d"),
                ("subagent.spawn", "telic-cast"),
                "PreToolUse",
            ),
        ]
    if host == "claude-code-in-cursor":  # Cursor runs .claude/settings.json with its tool names
        return [
            (
                "shell",
                claude("Shell", command="rm -rf /"),
                ("shell.execute", "rm -rf /"),
                "PreToolUse",
            ),
            (
                "write",
                claude("StrReplace", file_path=readme),
                ("repository.write", readme),
                "PreToolUse",
            ),
            ("write", claude("Write", file_path=src), ("repository.write", src), "PreToolUse"),
            ("write", claude("Delete", file_path=src), ("repository.delete", src), "PreToolUse"),
            ("mcp", claude("MCP:telic_get_run", run_id="x"), TELIC, "PreToolUse"),
            (
                "subagent",
                claude("Task", subagent_type="telic-cast"),
                ("subagent.spawn", "telic-cast"),
                "PreToolUse",
            ),
        ]
    if host == "vscode":
        return [
            ("read", vscode("readFile", filePath=src), ("repository.read", src), "PreToolUse"),
            ("write", vscode("createFile", filePath=src), ("repository.write", src), "PreToolUse"),
            (
                "write",
                vscode("editFiles", files=[src, readme]),
                ("repository.write", readme),
                "PreToolUse",
            ),
            (
                "shell",
                vscode("runInTerminal", command="rm -rf /"),
                ("shell.execute", "rm -rf /"),
                "PreToolUse",
            ),
            ("mcp", vscode("telic_get_run", run_id="x"), TELIC, "PreToolUse"),
            ("mcp", vscode("create_issue", title="x"), DENY, "PreToolUse"),
            (
                "subagent",
                vscode("runSubagent", agentName="telic-cast"),
                ("subagent.spawn", "telic-cast"),
                "PreToolUse",
            ),
        ]
    if host == "codex":
        return [
            (
                "shell",
                codex("Bash", command="git status"),
                ("shell.inspect", "git.status"),
                "PreToolUse",
            ),
            (
                "shell",
                codex("Bash", command="cat src/retry.py"),
                ("shell.execute", "cat src/retry.py"),
                "PreToolUse",
            ),
            (
                "write",
                codex("apply_patch", command=patch("*** Update File: src/retry.py")),
                ("repository.write", "src/retry.py"),
                "PreToolUse",
            ),
            (
                "write",
                codex(
                    "apply_patch",
                    command=patch("*** Update File: src/retry.py", "*** Add File: README.md"),
                ),
                ("repository.write", "README.md"),
                "PreToolUse",
            ),
            ("mcp", codex("mcp__telic__telic_get_run", run_id="x"), TELIC, "PreToolUse"),
            ("mcp", codex("mcp__github__create_issue", title="x"), DENY, "PreToolUse"),
            (
                "shell",
                codex("Bash", "PermissionRequest", command="rm -rf /"),
                ("shell.execute", "rm -rf /"),
                "PermissionRequest",
            ),
            (
                "write",
                codex(
                    "apply_patch",
                    "PermissionRequest",
                    command=patch("*** Update File: src/retry.py"),
                ),
                ("repository.write", "src/retry.py"),
                "PermissionRequest",
            ),
        ]
    assert host == "cursor"
    mcp_input = json.dumps({"run_id": "x"})
    return [
        (
            "read",
            cursor("beforeReadFile", repo, file_path=src, content="MAX = 5"),
            ("repository.read", src),
            "beforeReadFile",
        ),
        (
            "write",
            cursor("preToolUse", repo, tool_name="Write", tool_input={"file_path": src}),
            ("repository.write", src),
            "permission",
        ),
        (
            "write",
            cursor("preToolUse", repo, tool_name="StrReplace", tool_input={"file_path": readme}),
            ("repository.write", readme),
            "permission",
        ),
        (
            "shell",
            cursor("beforeShellExecution", repo, command="rm -rf /", cwd=str(repo)),
            ("shell.execute", "rm -rf /"),
            "permission",
        ),
        (
            "mcp",
            cursor(
                "beforeMCPExecution",
                repo,
                tool_name="telic_get_run",
                tool_input=mcp_input,
                command="telic",
            ),
            TELIC,
            "permission",
        ),
        (
            "mcp",
            cursor(
                "beforeMCPExecution",
                repo,
                tool_name="create_issue",
                tool_input="{}",
                url="http://x",
            ),
            DENY,
            "permission",
        ),
        (
            "subagent",
            cursor("subagentStart", repo, subagent_type="telic-cast"),
            ("subagent.spawn", "telic-cast"),
            "permission",
        ),
    ]


HOSTS_TESTED = ["claude-code", "claude-code-in-cursor", "vscode", "codex", "cursor"]


def dialect_of(host: str) -> str:
    return "claude-code" if host == "claude-code-in-cursor" else host


def schema(host: str, shape: str) -> dict[str, Any]:
    return SCHEMAS[dialect_of(host) if host != "claude-code-in-cursor" else "claude-code"][shape]


async def decide(host: str, payload: Payload | bytes, repo: Path, state: Path) -> str | None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()

    def call() -> str | None:
        return host_hook(
            dialect_of(host),
            raw,
            repository_root=str(repo),
            environ={"TELIC_STATE_DIR": str(state)},
        )

    return await anyio.to_thread.run_sync(call)


def verdict_of(host: str, shape: str, output: str | None) -> str:
    """The verdict an answer carries, after checking it against the host's documented schema."""
    if output is None:
        assert (host, shape) == ("codex", "PreToolUse"), "only Codex's PreToolUse allow is silent"
        return ALLOW
    answer = json.loads(output)
    jsonschema.validate(answer, schema(host, shape))
    if "permission" in answer:
        return str(answer["permission"])
    specific = answer["hookSpecificOutput"]
    if "decision" in specific:
        return str(specific["decision"]["behavior"])
    return str(specific["permissionDecision"])


@pytest.mark.parametrize("host", HOSTS_TESTED)
async def test_every_hosts_calls_get_the_one_decision_in_the_hosts_answer(
    host: str, tmp_path: Path
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        flow = await executing_fix(service)
        run_id = flow.b.run_id
        seen: set[str] = set()
        for what, payload, expect, shape in cases(host, repo):
            output = await decide(host, payload, repo, state)
            got = verdict_of(host, shape, output)
            if expect == TELIC:
                wanted = ALLOW
            elif isinstance(expect, str):
                wanted = expect
            else:
                wanted = (await service.check_tool_action(run_id, *expect)).verdict
            assert got == wanted, (host, what, payload)
            seen.add(f"{what}:{got}")
    kinds = {entry.split(":")[0] for entry in seen}
    assert kinds >= {"write", "shell", "mcp"}
    assert {"write:allow", "write:deny"} <= seen  # both outcomes were exercised


@pytest.mark.parametrize("host", HOSTS_TESTED)
async def test_with_no_live_run_every_hosts_hook_says_nothing(host: str, tmp_path: Path) -> None:
    async with project(tmp_path) as (_, _, repo, state):
        outputs = [
            await decide(host, payload, repo, state) for _, payload, _, _ in cases(host, repo)
        ]
    assert outputs == [None] * len(outputs)


@pytest.mark.parametrize("host", HOOK_HOSTS)
@pytest.mark.parametrize(
    "raw",
    [b"not json", b"[1, 2]", b'{"tool_input": {}}', b'{"tool_name": "Write", "tool_input": 3}'],
)
async def test_input_a_host_hook_cannot_read_is_a_deny_in_that_hosts_format(
    host: str, raw: bytes, tmp_path: Path
) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        before = len((await ledger.page_trace(flow.b.run_id, 0, 500)).events)
        output = await decide(host, raw, repo, state)
        after = len((await ledger.page_trace(flow.b.run_id, 0, 500)).events)
    shape = {"cursor": "permission"}.get(host, "PreToolUse")
    assert verdict_of(host, shape, output) == DENY
    assert "hook.input" in (output or "")
    assert after == before  # a refusal before any decision changes nothing in the ledger


async def test_a_codex_patch_is_allowed_only_when_every_file_it_touches_is(
    tmp_path: Path,
) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        inside = codex("apply_patch", command=patch("*** Update File: src/retry.py"))
        mixed = codex(
            "apply_patch",
            command=patch("*** Update File: src/retry.py", "*** Delete File: src/old.py"),
        )
        allowed = await decide("codex", inside, repo, state)
        denied = await decide("codex", mixed, repo, state)
        trace = (await ledger.page_trace(flow.b.run_id, 0, 500)).events
    assert allowed is None  # Codex's PreToolUse allow: say nothing
    assert denied is not None
    assert "repository.delete on src/old.py" in denied
    checked = [e.permission_decision for e in trace if e.event_type == "permission_checked"]
    assert [(c["capability"], c["decision"]) for c in checked if c is not None] == [
        ("repository.write", "allow"),
        ("repository.write", "allow"),
        ("repository.delete", "deny"),
    ]


def test_a_codex_patch_names_each_file_and_what_it_does_to_it() -> None:
    body = patch("*** Add File: a.py", "*** Update File: b.py", "*** Delete File: c.py")
    body += "*** Update File: d.py\n*** Move to: e.py\n"
    assert [tuple(m) for m in patch_targets(body)] == [
        ("repository.write", "a.py"),
        ("repository.write", "b.py"),
        ("repository.delete", "c.py"),
        ("repository.write", "d.py"),
        ("repository.write", "e.py"),
    ]
    assert [tuple(m) for m in patch_targets("no headers")] == [("repository.write", None)]


def test_telics_tool_names_are_the_servers_tool_table() -> None:
    assert set(TOOL_NAMES) == TELIC_TOOLS


def test_the_console_script_knows_every_dialect() -> None:
    assert HOSTS_WITH_HOOKS == HOOK_HOSTS == tuple(DIALECTS)


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_a_resident_servers_failure_is_a_deny_in_the_hosts_format(host: str) -> None:
    raw = json.dumps(codex("Bash", command="ls") if host == "codex" else {}).encode()
    output = _deny(host, raw, "the resident server failed")
    shape = {"cursor": "permission"}.get(host, "PreToolUse")
    assert verdict_of(host, shape, output) == DENY


@pytest.mark.parametrize("host", HOOK_HOSTS)
async def test_the_console_command_answers_each_host_with_exit_0(host: str, tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        env = {
            **os.environ,
            "TELIC_STATE_DIR": str(state),
            "TELIC_RUNTIME_DIR": str(tmp_path / "rt"),
        }

        def run() -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "telic",
                    "--repository-root",
                    str(repo),
                    "hook",
                    "--host",
                    host,
                ],
                input=b"garbage",
                capture_output=True,
                env=env,
                check=False,
                timeout=60,
            )

        done = await anyio.to_thread.run_sync(run)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    shape = {"cursor": "permission"}.get(host, "PreToolUse")
    assert verdict_of(host, shape, done.stdout.decode()) == DENY


def test_each_dialect_reads_its_own_documented_event_names() -> None:
    repo = Path("/repo")
    post = codex("mcp__telic__telic_submit_artifact", "PostToolUse", run_id="r")
    assert read_event(DIALECTS["codex"], json.dumps(post).encode()).what == "refresh"
    after = cursor("afterMCPExecution", repo, tool_name="telic_cast", tool_input="{}")
    assert read_event(DIALECTS["cursor"], json.dumps(after).encode()).what == "refresh"
    stop = cursor("stop", repo, status="completed")
    assert read_event(DIALECTS["cursor"], json.dumps(stop).encode()).what == "ignore"
    vs_post = {**vscode("telic_get_run"), "hookEventName": "PostToolUse"}
    assert read_event(DIALECTS["vscode"], json.dumps(vs_post).encode()).what == "refresh"
    bound = read_event(
        DIALECTS["cursor"], json.dumps(cursor("beforeReadFile", repo, file_path="a")).encode()
    )
    assert (bound.session_id, bound.cwd) == ("conversation-1", "/repo")


@pytest.mark.parametrize(
    ("rest", "host"),
    [
        ([], "claude-code"),  # installed kits before this change name it; plain hook is the same
        (["claude-code"], "claude-code"),
        (["codex"], "codex"),
        (["--host", "cursor"], "cursor"),
        (["--host=vscode"], "vscode"),
        (["--json"], None),  # any other spelling goes on to the full command line
        (["codex", "extra"], None),
    ],
)
def test_the_console_script_routes_every_spelling_of_hook(
    rest: list[str], host: str | None
) -> None:
    from telic.cli._entry import _hook_host

    assert _hook_host(rest) == host


def test_an_unknown_hook_host_is_a_usage_error_naming_the_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from telic.cli._entry import hook_command

    assert hook_command("emacs", None) == 2
    assert "hook.host" in capsys.readouterr().err


async def test_codex_asking_before_a_telic_tool_is_answered_allow_even_with_no_live_run(
    tmp_path: Path,
) -> None:
    asking = codex("mcp__telic__telic_start_run", "PermissionRequest", original_request="x")
    other = codex("mcp__github__create_issue", "PermissionRequest", title="x")
    shell = codex("Bash", "PermissionRequest", command="rm -rf /")
    async with project(tmp_path) as (_, _, repo, state):
        no_run = await decide("codex", asking, repo, state)
        others = [await decide("codex", payload, repo, state) for payload in (other, shell)]
    assert verdict_of("codex", "PermissionRequest", no_run) == ALLOW
    assert others == [None, None]  # anything else is Codex's own approval, as before
