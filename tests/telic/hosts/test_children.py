"""A native child is held to its cast by ``telic hook``: payload tables for bound, unbound and
unknown ``agent_id``s, with and without a live run, in Claude Code's and Codex's payloads.

The payloads are the shapes real Claude Code 2.1.197 sent (``SubagentStart``/``SubagentStop``
and a subagent's own ``PreToolUse`` carry ``agent_id``, ``agent_type`` and the parent's
``session_id``); each test runs the hook as the command does, over the project's SQLite ledger
(and the first also over PostgreSQL, which the hook reads through ``PortalLedger``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from telic.casting import children_of
from telic.hosts import DIALECTS, HookInputError, Verdict, host_hook, read_event
from telic.hosts._children import SCOPES_DIR
from telic.ledger import Ledger, open_ledger
from telic.roles import Service, open_service
from tests.telic.ledger.conftest import postgres_url  # noqa: F401 - the shared fixture

from ..roles.kit import (  # noqa: TID252
    EXPLORE,
    ServiceFlow,
    clock_from,
    fake_grounder,
    good_return,
    ids_from,
)

pytestmark = pytest.mark.anyio

SESSION = "bfb57b30-a9a8-4ee0-94d9-c2c23e3ee1c3"


@asynccontextmanager
async def project(
    tmp_path: Path, url: str | None = None
) -> AsyncIterator[tuple[Service, Ledger, Path, Path]]:
    """A repository with ``src/retry.py`` and a README, its ledger (SQLite unless ``url`` names
    another store) outside it."""
    repo, state = tmp_path / "repo", tmp_path / "state"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "retry.py").write_text("MAX_RETRIES = 5\n")
    (repo / "README.md").write_text("# retry\n")
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


class Host:
    """One host's hook, run as the command runs it, with that host's payloads."""

    def __init__(self, name: str, repo: Path, state: Path, url: str | None = None) -> None:
        self.name, self.repo, self.state = name, repo, state
        self.environ = {"TELIC_STATE_DIR": str(state)}
        if url is not None:  # any other store is named by its URL, as ``telic init`` forwards it
            self.environ["TELIC_DATABASE_URL"] = url

    async def send(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        raw = json.dumps({"session_id": SESSION, "cwd": str(self.repo), **payload}).encode()

        def call() -> str | None:
            return host_hook(
                self.name,
                raw,
                repository_root=str(self.repo),
                environ=self.environ,
            )

        output = await anyio.to_thread.run_sync(call)
        return None if output is None else dict(json.loads(output))

    async def spawn(self, prompt: str) -> dict[str, Any] | None:
        """The parent's ``Agent`` call (its input as Claude Code 2.1.197 sends it)."""
        tool_input = {"description": "Locate the limit", "prompt": prompt}
        return await self.send(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Agent",
                "tool_input": tool_input | {"subagent_type": "telic-cast"},
            }
        )

    async def start(self, agent: str) -> dict[str, Any] | None:
        return await self.send(
            {"hook_event_name": "SubagentStart", "agent_id": agent, "agent_type": "telic-cast"}
        )

    async def call(self, agent: str | None, tool: str, **tool_input: Any) -> dict[str, Any] | None:
        who = {} if agent is None else {"agent_id": agent, "agent_type": "telic-cast"}
        return await self.send(
            {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, **who}
        )

    async def stop(
        self, agent: str, message: str, *, active: bool = False
    ) -> dict[str, Any] | None:
        return await self.send(
            {
                "hook_event_name": "SubagentStop",
                "agent_id": agent,
                "agent_type": "telic-cast",
                "stop_hook_active": active,
                "last_assistant_message": message,
                "background_tasks": [],
            }
        )


def decision(answer: dict[str, Any] | None) -> tuple[str, str] | None:
    """A PreToolUse answer's (decision, reason), in either host's shape."""
    if answer is None:
        return None
    output = answer["hookSpecificOutput"]
    return output["permissionDecision"], output["permissionDecisionReason"]


async def executing(service: Service, **budget: Any) -> tuple[ServiceFlow, Any]:
    """A run executing a node that may cast, and one open explore cast pointing at the file."""
    flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
    await flow.to_execute()
    cast = await flow.cast(budget={"maxTurns": 2, "maxTotalTokens": 20_000, **budget})
    return flow, cast


async def cast_events(ledger: Ledger, run_id: str) -> list[tuple[str, str]]:
    page = await ledger.page_trace(run_id, 0, 1000)
    return [(e.event_type, e.decision_summary) for e in page.events]


# ------------------------------------------------------------------ Claude Code, a live run


@pytest.mark.parametrize(
    ("store", "anyio_backend"),
    [
        pytest.param("sqlite", "asyncio", id="sqlite"),
        pytest.param("postgres", "asyncio", id="postgres", marks=pytest.mark.postgres),
    ],
)
async def test_claude_code_bound_unbound_and_unknown_agent_ids(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    # Over PostgreSQL the hook reads through the async ledger (``PortalLedger``): same table.
    url = None if store == "sqlite" else str(request.getfixturevalue("postgres_url"))
    async with project(tmp_path, url) as (service, ledger, repo, state):
        flow, cast = await executing(service, maxTurns=3)
        host = Host("claude-code", repo, state, url)
        handoff = json.dumps(cast.to_wire()["handoff"])
        read_file, read_other = str(repo / "src/retry.py"), str(repo / "README.md")

        # The parent's Agent call: only with one open cast's handoff.
        denied = decision(await host.spawn("Find the retry limit"))
        assert denied is not None
        assert denied[0] == "deny"
        assert "(layer: cast_binding; no_handoff)" in denied[1]
        allowed = decision(await host.spawn(f"Your handoff: {handoff}"))
        assert allowed is not None
        assert allowed[0] == "allow"
        assert cast.cast_id in allowed[1]
        # One record per spawn call, with the verdict the host got (no second allow beside it).
        traced = await ledger.page_trace(flow.b.run_id, 0, 1000)
        spawns = [
            (d["decision"], d["scope"])
            for e in traced.events
            if (d := e.permission_decision) is not None and d["capability"] == "subagent.spawn"
        ]
        assert spawns == [("deny", "telic-cast"), ("allow", "telic-cast")]

        # SubagentStart binds the child: its context names the cast, budget and pointers.
        started = await host.start("a8d5d22e2da0cc01f")
        assert started is not None
        context = started["hookSpecificOutput"]["additionalContext"]
        assert f"you serve Telic cast {cast.cast_id}" in context
        assert "at most 3" in context
        assert "repo://src/retry.py" in context
        # A second child finds no handoff left: it starts unbound.
        unbound = await host.start("a0000000000000002")
        assert unbound is not None
        assert "serves no open Telic cast" in unbound["hookSpecificOutput"]["additionalContext"]

        table = [
            # (agent, tool, input, decision, a piece of the reason)
            ("a8d5d22e2da0cc01f", "Read", {"file_path": read_file}, "allow", "turn 1 of 3"),
            ("a8d5d22e2da0cc01f", "Read", {"file_path": read_other}, "deny", "cast_pointers"),
            ("a0000000000000002", "Read", {"file_path": read_file}, "deny", "unbound_child"),
            ("a-never-started", "Read", {"file_path": read_file}, "deny", "unbound_child"),
            (
                "a8d5d22e2da0cc01f",
                "Write",
                {"file_path": read_file, "content": "x"},
                "deny",
                "denies repository.write",
            ),
        ]
        for agent, tool, tool_input, expected, piece in table:
            answer = decision(await host.call(agent, tool, **tool_input))
            assert answer is not None, (agent, tool)
            assert answer[0] == expected, (agent, tool, answer)
            assert piece in answer[1], (agent, tool, answer)

        # The bound child made three calls: its budget of 3 turns is spent, it is cut off.
        capped = decision(await host.call("a8d5d22e2da0cc01f", "Read", file_path=read_file))
        assert capped is not None
        assert capped[0] == "deny"
        assert "(stopReason turn_capped)" in capped[1]
        events = await cast_events(ledger, flow.b.run_id)
        children = children_of(events)
        assert children.cast_of("a8d5d22e2da0cc01f") == cast.cast_id
        assert children.cast_of("a0000000000000002") is None
        assert children.spend_of(cast.cast_id).turns == 4  # every call counts, denied or not
        assert cast.cast_id in children.exhausted
        checked = [e for e in events if e[0] == "permission_checked"]
        assert any("cast_pointers" in summary for _, summary in checked)
        page = await ledger.page_trace(flow.b.run_id, 0, 1000)
        decisions = [e.permission_decision for e in page.events if e.permission_decision]
        # A child's decision is traced as the parent's are: repository-relative, with its reason.
        reads = [d for d in decisions if d["capability"] == "repository.read"]
        assert any(d["decision"] == "allow" and d["scope"] == "src/retry.py" for d in reads)
        assert any(
            d["decision"] == "deny"
            and d["scope"] == "README.md"
            and "cast_pointers" in d["rationaleSummary"]
            for d in reads
        )
        # A call denied for its spend, before any layer looked, names its target so too.
        capped_scopes = [d["scope"] for d in reads if "turn_capped" in d["rationaleSummary"]]
        assert capped_scopes == ["src/retry.py"]

        # SubagentStop: prose is kept going once; after that, or with a packet, it may stop.
        kept = await host.stop("a8d5d22e2da0cc01f", "The limit is 5.")
        assert kept is not None
        assert kept["decision"] == "block"
        assert "not_a_packet" in kept["reason"]
        assert "remaining" in kept["reason"]  # exhausted: the packet is a partial
        assert await host.stop("a8d5d22e2da0cc01f", "The limit is 5.", active=True) is None
        assert await host.stop("a0000000000000002", "nothing") is None  # served no cast

        # The cast stayed open (never "completed"); its typed partial carries what Telic saw.
        partial = await service.return_packet(
            flow.b.run_id, cast.cast_id, good_return(remaining=["the callers"])
        )
        assert (partial.outcome, partial.stop_reason) == ("partial", "turn_capped")
        assert (partial.counters.turns, partial.counters.tool_calls) == (4, 4)
        digest = await service.get_digest(flow.b.run_id)
        assert "tokens self-reported; 4 turns, 4 tool calls observed" in digest
        # A call of the child after its cast was sealed is denied: its cast is closed.
        closed = decision(await host.call("a8d5d22e2da0cc01f", "Read", file_path=read_file))
        assert closed is not None
        assert closed[0] == "deny"
        assert "now closed" in closed[1]
        assert (await service.verify_run(flow.b.run_id)).ok


async def test_a_packet_as_last_message_lets_the_child_stop(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow, cast = await executing(service)
        host = Host("claude-code", repo, state)
        await host.spawn(json.dumps(cast.to_wire()["handoff"]))
        await host.start("agent-1")
        assert await host.stop("agent-1", json.dumps(good_return())) is None
        stopped = children_of(await cast_events(ledger, flow.b.run_id)).stopped
        assert stopped == {cast.cast_id: True}


async def test_the_scope_is_recomputed_from_the_ledger_when_its_file_is_gone(
    tmp_path: Path,
) -> None:
    # The binding lives in the ledger; the scope file beside it is only a cache. A second
    # server (or this one after a restart, or another machine) decides the same.
    async with project(tmp_path) as (service, _, repo, state):
        _, cast = await executing(service)
        host = Host("claude-code", repo, state)
        await host.spawn(json.dumps(cast.to_wire()["handoff"]))
        await host.start("agent-1")
        for stored in (state / SCOPES_DIR).iterdir():
            stored.unlink()
        again = decision(await host.call("agent-1", "Read", file_path=str(repo / "README.md")))
        assert again is not None
        assert again[0] == "deny"
        assert "cast_pointers" in again[1]
        assert list((state / SCOPES_DIR).iterdir())  # stored again


# ------------------------------------------------------------------ no live run


@pytest.mark.parametrize("host_name", ["claude-code", "codex"])
async def test_with_no_live_run_the_hook_says_nothing_to_a_child(
    tmp_path: Path, host_name: str
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
        await service.cancel_run(flow.b.run_id, *flow.token())
        host = Host(host_name, repo, state)
        tool = "Read" if host_name == "claude-code" else "Bash"
        tool_input = (
            {"file_path": str(repo / "src/retry.py")} if tool == "Read" else {"command": "ls"}
        )
        assert await host.start("agent-1") is None
        assert await host.call("agent-1", tool, **tool_input) is None  # bound to nothing
        assert await host.call("agent-unknown", tool, **tool_input) is None
        assert await host.stop("agent-1", "prose") is None


# ------------------------------------------------------------------ Codex


async def test_codex_binds_a_starting_child_to_the_only_free_open_cast(tmp_path: Path) -> None:
    async with project(tmp_path) as (service, ledger, repo, state):
        flow, cast = await executing(service)
        host = Host("codex", repo, state)
        # Codex's spawn call reaches no hook, so the start binds the run's only free open cast.
        started = await host.start("019a-thread-1")
        assert started is not None
        assert cast.cast_id in started["hookSpecificOutput"]["additionalContext"]
        second = await host.start("019a-thread-2")  # no free cast left
        assert second is not None
        assert "serves no open" in second["hookSpecificOutput"]["additionalContext"]
        # Codex's hooks see a child's shell and patches only (no reads): the bound child is
        # judged against its cast, the others are refused as unbound.
        table = [
            ("019a-thread-1", {"command": "rm -rf src"}, f"cast {cast.cast_id} denies"),
            ("019a-thread-2", {"command": "git status"}, "unbound_child"),
            ("019a-unknown", {"command": "git status"}, "unbound_child"),
        ]
        for agent, tool_input, piece in table:
            answer = decision(await host.call(agent, "Bash", **tool_input))
            assert answer is not None, (agent, tool_input)
            assert answer[0] == "deny"
            assert piece in answer[1], (agent, answer)
        patch = "*** Begin Patch\n*** Update File: src/retry.py\n*** End Patch\n"
        written = await host.call("019a-thread-1", "apply_patch", command=patch)
        assert written is not None
        assert written["hookSpecificOutput"]["permissionDecision"] == "deny"
        kept = await host.stop("019a-thread-1", "prose")
        assert kept is not None
        assert kept["decision"] == "block"
        assert "not_a_packet" in kept["reason"]
        observed = children_of(await cast_events(ledger, flow.b.run_id)).spend_of(cast.cast_id)
        assert (observed.turns, observed.tool_calls) == (2, 2)


async def test_a_bound_childs_call_is_decided_in_a_fresh_process_once_its_scope_is_stored(
    tmp_path: Path,
) -> None:
    # The hook runs in a fresh process per call: the stored scope decides, as in process.
    async with project(tmp_path) as (service, _, repo, state):
        _, cast = await executing(service)
        host = Host("claude-code", repo, state)
        await host.spawn(json.dumps(cast.to_wire()["handoff"]))
        await host.start("agent-1")
        raw = json.dumps(
            {
                "session_id": SESSION,
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "agent_id": "agent-1",
                "agent_type": "telic-cast",
                "tool_name": "Read",
                "tool_input": {"file_path": str(repo / "src/retry.py")},
            }
        )
        probe = (
            "import json; from telic.hosts import host_hook; "
            f"out = host_hook('claude-code', {raw.encode()!r}, repository_root={str(repo)!r}, "
            f"environ={{'TELIC_STATE_DIR': {str(state)!r}}}); "
            "print(json.loads(out)['hookSpecificOutput']['permissionDecision'])"
        )
        done = await anyio.run_process([sys.executable, "-c", probe], check=True)
    assert done.stdout.decode().strip() == "allow"


@pytest.mark.parametrize("host_name", ["claude-code", "codex"])
def test_the_dialects_read_a_childs_lifecycle_and_answer_it_in_the_hosts_shape(
    host_name: str,
) -> None:
    dialect = DIALECTS[host_name]
    start = read_event(
        dialect,
        b'{"hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "telic-cast"}',
    )
    assert (start.what, start.agent_id, start.agent_type) == ("start", "a1", "telic-cast")
    assert start.spawn_seen is (host_name == "claude-code")  # Codex's spawn reaches no hook
    stop = read_event(
        dialect,
        json.dumps(
            {
                "hook_event_name": "SubagentStop",
                "agent_id": "a1",
                "stop_hook_active": True,
                "last_assistant_message": "{}",
            }
        ).encode(),
    )
    assert (stop.what, stop.stop_active, stop.last_message) == ("stop", True, "{}")
    with pytest.raises(HookInputError, match="SubagentStart has no agent_id"):
        read_event(dialect, b'{"hook_event_name": "SubagentStart"}')
    context = dialect.write("SubagentStart", Verdict("deny", "unbound"))
    assert json.loads(context or "") == {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "unbound"}
    }
    assert dialect.write("SubagentStop", Verdict("allow", "fine")) is None
    blocked = dialect.write("SubagentStop", Verdict("deny", "not_a_packet"))
    assert json.loads(blocked or "") == {"decision": "block", "reason": "not_a_packet"}
