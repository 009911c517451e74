"""``telic hook claude-code`` decides a native tool call from the ledger and fails closed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from telic.hosts import host_hook
from telic.hosts._hook import select_run, uuid4_text
from telic.hosts._layers import LAYERS_DIR, SESSIONS_DIR
from telic.ledger import DB_FILE_NAME, DirectLedger, Ledger, LiveRun, PortalLedger, open_ledger
from telic.permissions import Decision, reopens_read
from telic.roles import Service, open_service
from tests.telic.ledger.conftest import postgres_url  # noqa: F401 - the shared fixture

from ..controller.builders import perms  # noqa: TID252
from ..roles.kit import (  # noqa: TID252
    VERIFY_READ,
    ServiceFlow,
    clock_from,
    fake_grounder,
    ids_from,
)

pytestmark = pytest.mark.anyio

WRITE_SRC = perms(read=["**"], write=["src/**"])


STORES = [
    pytest.param("sqlite", "asyncio", id="sqlite"),
    pytest.param("postgres", "asyncio", id="postgres", marks=pytest.mark.postgres),
]
"""Where a decision is shown: SQLite (``DirectLedger``) and PostgreSQL (``PortalLedger``)."""


def store_url(store: str, request: pytest.FixtureRequest) -> str | None:
    """None for the project's SQLite ledger, else a fresh PostgreSQL schema's URL."""
    return None if store == "sqlite" else str(request.getfixturevalue("postgres_url"))


@asynccontextmanager
async def project(
    tmp_path: Path, url: str | None = None
) -> AsyncIterator[tuple[Service, Ledger, Path, Path]]:
    """A repository with ``src/retry.py``, its ledger (SQLite unless ``url`` names another
    store) outside it, and a service."""
    repo, state = tmp_path / "repo", tmp_path / "state"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "retry.py").write_text("MAX_RETRIES = 5\n")
    state.mkdir()
    async with (
        open_ledger(url or f"sqlite://{state}", repository_root=repo) as ledger,
        open_service(
            ledger=ledger,
            repository_root=str(repo),
            state_dir=state,
            clock=clock_from(),
            new_id=ids_from("run"),
            grounder=fake_grounder,
        ) as service,
    ):
        yield service, ledger, repo, state


def event(tool: str, session: str = "session-1", **tool_input: Any) -> bytes:
    """Claude Code's PreToolUse stdin for one tool call."""
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": "/somewhere/else",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    ).encode()


async def hook(
    raw: bytes, repo: Path, state: Path, url: str | None = None
) -> dict[str, Any] | None:
    """Run the hook as the command would, in a worker thread (it starts its own event loop when
    it must load a run through the controller); ``url`` names a store other than SQLite."""
    environ = {"TELIC_STATE_DIR": str(state)}
    if url is not None:
        environ["TELIC_DATABASE_URL"] = url

    def call() -> str | None:
        return host_hook("claude-code", raw, repository_root=str(repo), environ=environ)

    output = await anyio.to_thread.run_sync(call)
    return None if output is None else json.loads(output)["hookSpecificOutput"]


async def executing_fix(
    service: Service, permissions: Any = WRITE_SRC, **start: Any
) -> ServiceFlow:
    flow = await ServiceFlow.start(
        service,
        "fix_only",
        authorization_granted=("repository.read", "repository.write", "subagent.spawn"),
        **start,
    )
    b = flow.b
    b.permissions = permissions
    b.verifications = [VERIFY_READ]
    await flow.ground()
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    await flow.submit(
        "WorkPlan", b.plan(nodes=[b.node(tools=["repository.read", "repository.write"])])
    )
    return flow


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_write_inside_the_node_scope_is_allowed_and_one_outside_it_denied(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    url = store_url(store, request)
    async with project(tmp_path, url) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        assert flow.last.next_action.phase == "agent_4_execute"
        inside = await hook(event("Write", file_path=f"{repo}/src/retry.py"), repo, state, url)
        outside = await hook(event("Edit", file_path=f"{repo}/README.md"), repo, state, url)
        page = await ledger.page_trace(flow.b.run_id, 0, 1000)
    checked = [e.permission_decision for e in page.events if e.event_type == "permission_checked"]
    assert [(d["decision"], d["scope"]) for d in checked if d] == [
        ("allow", "src/retry.py"),
        ("deny", "README.md"),
    ]
    assert inside is not None
    assert inside["permissionDecision"] == "allow"
    assert outside is not None
    assert outside["permissionDecision"] == "deny"
    assert "phase layer" in outside["permissionDecisionReason"]
    assert outside["hookEventName"] == "PreToolUse"


async def test_a_path_outside_the_repository_is_denied_while_a_run_is_live(
    tmp_path: Path,
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        answer = await hook(event("Read", file_path="/etc/passwd"), repo, state)
    assert answer is not None
    assert answer["permissionDecision"] == "deny"
    assert "path_escape" in answer["permissionDecisionReason"]


async def test_the_hook_decides_exactly_as_telic_check_tool_action(tmp_path: Path) -> None:
    cases = [
        ("Write", {"file_path": "src/retry.py"}, "repository.write", "src/retry.py"),
        ("Edit", {"file_path": "docs/x.md"}, "repository.write", "docs/x.md"),
        ("Read", {"file_path": "src/retry.py"}, "repository.read", "src/retry.py"),
        ("Bash", {"command": "git status"}, "shell.inspect", "git.status"),
        ("Bash", {"command": "rm -rf /"}, "shell.execute", "rm -rf /"),
        ("WebFetch", {"url": "https://example.com/x"}, "network.read", "https://example.com/x"),
        ("Task", {"subagent_type": "telic-cast"}, "subagent.spawn", "telic-cast"),
    ]
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        run_id = flow.b.run_id
        for tool, tool_input, capability, target in cases:
            answer = await hook(event(tool, **tool_input), repo, state)
            expected = await service.check_tool_action(run_id, capability, target)
            assert answer is not None
            assert answer["permissionDecision"] == expected.verdict, (tool, tool_input)
            assert expected.reason in answer["permissionDecisionReason"]
        trace = (await ledger.page_trace(run_id, 0, 500)).events
    # telic_check_tool_action records a decision once: the hook's record of the very same
    # decision is that record, so each case leaves exactly one.
    checks = [e for e in trace if e.event_type == "permission_checked"]
    assert len(checks) == len(cases)
    for (_, _, capability, _), record in zip(cases, checks, strict=True):
        assert record.permission_decision is not None
        assert record.permission_decision["capability"] == capability


PROTECTED_CASES = [
    ("Write", {"file_path": ".git/config"}, ".git/config"),
    ("Edit", {"file_path": ".git/hooks/pre-commit"}, ".git/hooks/pre-commit"),
    ("Write", {"file_path": ".github/workflows/ci.yml"}, ".github/workflows/ci.yml"),
    ("Write", {"file_path": ".env"}, ".env"),
    ("Edit", {"file_path": "src/.env.local"}, "src/.env.local"),
    ("Write", {"file_path": "src/retry.py"}, "src/retry.py"),
    ("Read", {"file_path": ".env"}, ".env"),
]


@pytest.mark.parametrize(
    ("granted", "allowed"),
    [
        pytest.param((), {"src/retry.py", ".env"}, id="without-a-grant"),
        pytest.param(
            (".github/workflows/ci.yml", ".env", "src/.env.local"),
            {"src/retry.py", ".env", ".github/workflows/ci.yml", "src/.env.local"},
            id="with-a-grant",
        ),
    ],
)
async def test_the_hook_decides_protected_paths_exactly_as_telic_check_tool_action(
    tmp_path: Path, granted: tuple[str, ...], allowed: set[str]
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        flow = await executing_fix(
            service, perms(read=["**"], write=["**"]), protected_paths_granted=granted
        )
        run_id = flow.b.run_id
        decided: dict[tuple[str, str], str] = {}
        for tool, tool_input, target in PROTECTED_CASES:
            capability = "repository.read" if tool == "Read" else "repository.write"
            path = {"file_path": f"{repo}/{tool_input['file_path']}"}
            answer = await hook(event(tool, **path), repo, state)
            expected = await service.check_tool_action(run_id, capability, target)
            assert answer is not None
            assert answer["permissionDecision"] == expected.verdict, (tool, target)
            assert expected.reason in answer["permissionDecisionReason"]
            decided[(tool, target)] = expected.verdict
    # Reads are never protected; writes reach a protected path only through the user's grant.
    assert {target for (_, target), verdict in decided.items() if verdict == "allow"} == allowed
    assert decided[("Read", ".env")] == "allow"
    denied = [verdict for (tool, target), verdict in decided.items() if target.startswith(".git/")]
    assert denied == ["deny", "deny"]


async def test_a_snapshot_without_the_protected_grants_is_recomputed(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(
            service, perms(read=["**"], write=["**"]), protected_paths_granted=(".env",)
        )
        first = await hook(event("Write", file_path=f"{repo}/.env"), repo, state)
        (snapshot,) = (state / LAYERS_DIR).iterdir()
        document = json.loads(snapshot.read_text())
        # A snapshot as the first format wrote it: the layers alone, no grants.
        document["format"] = "telic.hook-layers/1"
        del document["protectedGranted"]
        snapshot.write_text(json.dumps(document))
        second = await hook(event("Write", file_path=f"{repo}/.env"), repo, state)
        rewritten = json.loads(snapshot.read_text())
    assert first is not None
    assert second is not None
    assert (first["permissionDecision"], second["permissionDecision"]) == ("allow", "allow")
    assert rewritten["protectedGranted"] == [".env"]


async def test_the_chain_stays_valid_after_hook_decisions(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        for path in ("src/retry.py", "README.md", "/etc/hosts"):
            await hook(event("Write", file_path=path), repo, state)
        await hook(event("TodoWrite", todos=[]), repo, state)
        await flow.submit("Evidence", flow.b.evidence())
        report = await ledger.verify_run(flow.b.run_id)
    assert report.ok, report.first_broken
    assert report.records_checked > 10


async def test_an_unmapped_tool_is_denied_and_recorded_as_refused(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        answer = await hook(event("mcp__github__create_issue", title="x"), repo, state)
        trace = (await ledger.page_trace(flow.b.run_id, 0, 500)).events
    assert answer is not None
    assert answer["permissionDecision"] == "deny"
    assert "cannot map the tool mcp__github__create_issue" in answer["permissionDecisionReason"]
    assert trace[-1].event_type == "tool_action_refused"


async def test_with_no_live_run_the_hook_says_nothing(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        before = await hook(event("Write", file_path="src/retry.py"), repo, state)
        flow = await ServiceFlow.start(service)
        await service.cancel_run(flow.b.run_id, *flow.token())
        after = await hook(event("Write", file_path="src/retry.py"), repo, state)
        garbage = await hook(b"not json", repo, state)
    assert (before, after, garbage) == (None, None, None)


async def test_with_no_ledger_at_all_the_hook_says_nothing_and_creates_none(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    assert await hook(event("Write", file_path="a"), tmp_path, state) is None
    assert list(state.iterdir()) == []


async def test_unreadable_input_is_denied_while_a_run_is_live(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await ServiceFlow.start(service)
        answers = [await hook(raw, repo, state) for raw in (b"{", b"[]", b'{"tool_name": 3}')]
    for answer in answers:
        assert answer is not None
        assert answer["permissionDecision"] == "deny"
        assert "hook.input" in answer["permissionDecisionReason"]


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_several_live_runs_need_the_session_to_name_one(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    url = store_url(store, request)
    async with project(tmp_path, url) as (service, _, repo, state):
        first = await executing_fix(service)
        await ServiceFlow.start(service)
        unbound = await hook(event("Read", file_path="src/retry.py"), repo, state, url)
        named = event("mcp__telic__telic_get_run", run_id=first.b.run_id)
        telic = await hook(named, repo, state, url)
        bound = await hook(event("Write", file_path="src/retry.py"), repo, state, url)
        other = event("Write", session="session-2", file_path="src/x.py")
        other = await hook(other, repo, state, url)
    assert unbound is not None
    assert unbound["permissionDecision"] == "deny"
    assert "2 live Telic runs" in unbound["permissionDecisionReason"]
    assert telic is not None
    assert telic["permissionDecision"] == "allow"
    assert bound is not None
    assert bound["permissionDecision"] == "allow"
    assert first.b.run_id in bound["permissionDecisionReason"]
    assert other is not None
    assert other["permissionDecision"] == "deny"
    assert len(list((state / SESSIONS_DIR).iterdir())) == 1


def test_the_session_binding_wins_and_the_only_live_run_is_taken_otherwise() -> None:
    a, b = (LiveRun(name, "fix_only", "agent_4_execute", 5, 9, 1, 1) for name in ("a", "b"))
    assert select_run([a, b], "b") is b
    assert select_run([a], None) is a
    assert select_run([a], "gone") is a
    assert isinstance(select_run([a, b], "gone"), str)


async def test_a_stale_layer_snapshot_is_ignored_and_rewritten(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        flow = await ServiceFlow.start(
            service,
            "fix_only",
            authorization_granted=("repository.read", "repository.write", "subagent.spawn"),
        )
        await flow.ground()
        grounding = await hook(event("Write", file_path="src/retry.py"), repo, state)
        (snapshot,) = (state / LAYERS_DIR).iterdir()
        first = json.loads(snapshot.read_text())
        b = flow.b
        b.permissions = WRITE_SRC
        b.verifications = [VERIFY_READ]
        for kind, body in (
            ("ProblemFrame", b.frame()),
            ("TaskContract", b.contract()),
            ("PromptReview", b.prompt_review()),
            ("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read", "repository.write"])])),
        ):
            await flow.submit(kind, body)
        executing = await hook(event("Write", file_path="src/retry.py"), repo, state)
        second = json.loads(snapshot.read_text())
    assert grounding is not None
    assert grounding["permissionDecision"] == "deny"
    assert executing is not None
    assert executing["permissionDecision"] == "allow"
    assert first["key"] != second["key"]


async def test_a_failure_to_decide_while_a_run_is_live_is_a_deny(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        flow = await executing_fix(service)
        await hook(event("Read", file_path="src/retry.py"), repo, state)
        for snapshot in (state / LAYERS_DIR).iterdir():
            snapshot.unlink()
        with sqlite3.connect(state / "ledger.sqlite3") as db:  # a run the controller cannot load
            db.execute("UPDATE runs SET phase = 'no_such_phase' WHERE run_id = ?", (flow.b.run_id,))
        answer = await hook(event("Read", file_path="src/retry.py"), repo, state)
    assert answer is not None
    assert answer["permissionDecision"] == "deny"
    assert "could not decide" in answer["permissionDecisionReason"]


async def test_a_snapshot_that_cannot_be_stored_does_not_stop_the_decision(
    tmp_path: Path,
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        (state / LAYERS_DIR).write_text("a file where the folder should be")
        answer = await hook(event("Write", file_path="src/retry.py"), repo, state)
    assert answer is not None
    assert answer["permissionDecision"] == "allow"


async def test_a_ledger_that_cannot_be_read_is_a_deny(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "ledger.sqlite3").write_bytes(b"this is not a database" * 100)
    answer = await hook(event("Write", file_path="a"), tmp_path, state)
    assert answer is not None
    assert answer["permissionDecision"] == "deny"
    assert "could not read" in answer["permissionDecisionReason"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_portal_ledger_reads_what_the_direct_ledger_reads(tmp_path: Path) -> None:
    # The hook's two handles on one SQLite file: any other store is read as the portal reads it.
    async with project(tmp_path) as (service, _, repo, state):
        flow = await executing_fix(service)
        await hook(event("Write", file_path="src/retry.py"), repo, state)
        run_id = flow.b.run_id

        def read(ledger: DirectLedger | PortalLedger) -> tuple[Any, ...]:
            return (
                ledger.live_runs(str(repo)),
                ledger.run_key(run_id),
                ledger.run_key("run-none"),
                ledger.events_of(run_id, ["permission_checked", "artifact_accepted"]),
            )

        def both() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
            with (
                DirectLedger(state / DB_FILE_NAME) as direct,
                PortalLedger(f"sqlite://{state}", repo) as portal,
            ):
                return read(direct), read(portal)

        direct, portal = await anyio.to_thread.run_sync(both)
    assert direct == portal
    live, key, missing, events = direct
    assert [run.run_id for run in live] == [run_id]
    assert key is not None
    assert key[0] == live[0].version
    assert missing is None
    assert "permission_checked" in [kind for kind, *_ in events]


async def test_the_console_command_answers_on_stdout_with_exit_0(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        env = {**os.environ, "TELIC_STATE_DIR": str(state)}
        command = [sys.executable, "-m", "telic", "--repository-root", str(repo), "hook"]

        def run(host: str) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(
                [*command, host],
                input=event("Write", file_path=f"{repo}/README.md"),
                capture_output=True,
                env=env,
                check=False,
            )

        done = await anyio.to_thread.run_sync(run, "claude-code")
        unknown = await anyio.to_thread.run_sync(run, "emacs")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert unknown.returncode == 2
    assert b"hook.host" in unknown.stderr


@pytest.mark.parametrize("random", [bytes(16), b"\xff" * 16, bytes(range(16))])
def test_an_event_id_is_the_version_4_uuid_of_its_random_bytes(random: bytes) -> None:
    text = uuid4_text(random)
    assert text == str(uuid.UUID(bytes=random, version=4))
    assert uuid.UUID(text).version == 4


def test_an_event_id_needs_exactly_sixteen_random_bytes() -> None:
    with pytest.raises(ValueError, match="exactly 16 bytes"):
        uuid4_text(bytes(15))


async def test_a_secret_in_the_hosts_command_is_redacted_in_the_trace_and_the_reason(
    tmp_path: Path,
) -> None:
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    command = f'curl -H "Authorization: token {token}" https://api.github.com/user'
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        answer = await hook(event("Bash", command=command), repo, state)
        trace = (await ledger.page_trace(flow.b.run_id, 0, 500)).events
    assert answer is not None
    assert answer["permissionDecision"] == "deny"
    assert token not in answer["permissionDecisionReason"]
    assert "[redacted:" in answer["permissionDecisionReason"]
    recorded = [e for e in trace if e.event_type == "permission_checked"][-1]
    assert recorded.permission_decision is not None
    scope = recorded.permission_decision["scope"]
    assert token not in scope
    assert scope.startswith("curl -H ")
    assert "[redacted:" in scope
    assert token not in recorded.decision_summary


async def planning_fix(service: Service) -> ServiceFlow:
    """A fix_only run in agent_3_plan, whose phase layer grants no repository.read."""
    flow = await ServiceFlow.start(
        service,
        "fix_only",
        authorization_granted=("repository.read", "repository.write", "subagent.spawn"),
    )
    b = flow.b
    b.permissions = WRITE_SRC
    b.verifications = [VERIFY_READ]
    await flow.ground()
    await flow.submit("ProblemFrame", b.frame())
    await flow.submit("TaskContract", b.contract())
    await flow.submit("PromptReview", b.prompt_review())
    return flow


async def test_a_read_inside_the_grant_is_allowed_while_planning(tmp_path: Path) -> None:
    (tmp_path / "repo" / "config").mkdir(parents=True)
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await planning_fix(service)
        run_id = flow.b.run_id
        assert flow.last.next_action.phase == "agent_3_plan"
        # The phase alone would refuse it: telic_check_tool_action (1.0) still says so.
        strict = await service.check_tool_action(run_id, "repository.read", "src/retry.py")
        read = await hook(event("Read", file_path=f"{repo}/src/retry.py"), repo, state)
        grep = await hook(event("Grep", pattern="MAX"), repo, state)
        env = await hook(event("Read", file_path=f"{repo}/.env"), repo, state)
        key = await hook(event("Read", file_path=f"{repo}/config/id_rsa"), repo, state)
        outside = await hook(event("Read", file_path="/etc/passwd"), repo, state)
        write = await hook(event("Write", file_path=f"{repo}/src/retry.py"), repo, state)
        trace = (await ledger.page_trace(run_id, 0, 500)).events
    assert strict.verdict == "deny"
    assert strict.deciding_layer == "phase"
    assert read is not None
    assert grep is not None
    assert (read["permissionDecision"], grep["permissionDecision"]) == ("allow", "allow")
    assert "open in every phase before the audit" in read["permissionDecisionReason"]
    # Protected and secret-like paths stay with the phase layer; nothing else widens.
    for refused in (env, key, write):
        assert refused is not None
        assert refused["permissionDecision"] == "deny"
        assert "phase layer" in refused["permissionDecisionReason"]
    assert outside is not None
    assert "path_escape" in outside["permissionDecisionReason"]
    recorded = [e.permission_decision for e in trace if e.event_type == "permission_checked"]
    # telic_check_tool_action's deny first, then the hook's two allows, recorded as such.
    assert [r["decision"] for r in recorded if r is not None][:3] == ["deny", "allow", "allow"]


def _phase_denial(scope: str, capability: str = "repository.read") -> Decision:
    return Decision(False, capability, scope, "phase", "not granted", "not_granted")


@pytest.mark.parametrize(
    ("phase", "decision", "reopened"),
    [
        ("context_grounding", _phase_denial("src/a.py"), True),
        ("agent_1_frame", _phase_denial("src/a.py"), True),
        ("agent_3_plan", _phase_denial("src/a.py"), True),
        ("agent_3_review", _phase_denial("src/a.py"), True),
        ("agent_5_audit", _phase_denial("src/a.py"), False),
        ("agent_5_report", _phase_denial("src/a.py"), False),
        ("agent_3_plan", _phase_denial(".git/config"), False),
        ("agent_3_plan", _phase_denial("deploy/prod.pem"), False),
        ("agent_3_plan", _phase_denial("src/a.py", "repository.write"), False),
        ("agent_3_plan", Decision(False, "repository.read", "a", "mode", "-", "x"), False),
        ("agent_3_plan", Decision(False, "repository.read", None, None, "-", "path_escape"), False),
    ],
)
def test_only_a_read_the_phase_alone_refused_before_the_audit_reopens(
    phase: str, decision: Decision, reopened: bool
) -> None:
    assert reopens_read(phase, decision) is reopened


async def test_claude_codes_agent_tool_asks_for_subagent_spawn(tmp_path: Path) -> None:
    # Claude Code 2.1 names its subagent tool Agent (Task is its alias, resolved before hooks).
    async with project(tmp_path) as (service, _, repo, state):
        flow = await executing_fix(service)
        expected = await service.check_tool_action(flow.b.run_id, "subagent.spawn", "telic-cast")
        agent = await hook(event("Agent", subagent_type="telic-cast", prompt="p"), repo, state)
        task = await hook(event("Task", subagent_type="telic-cast", prompt="p"), repo, state)
    assert agent is not None
    assert task is not None
    assert agent["permissionDecision"] == task["permissionDecision"] == expected.verdict
    assert "subagent.spawn on telic-cast" in agent["permissionDecisionReason"]
