"""The real Codex binary completes an analyze_and_fix run from the kit ``telic init codex``
wrote, its model played by a loopback stand-in for the Responses API.

No network and no key: the test's ``CODEX_HOME`` holds a user config whose model provider is
``ResponsesStandIn`` on 127.0.0.1 (``wire_api = "responses"``, a dummy key in ``env_key``) and
which marks the project trusted, so Codex reads the kit's ``.codex/`` (the MCP server, the hooks,
the ``telic-cast`` agent). The model is a stand-in slug described by a one-model catalog made
from Codex's own (``codex debug models``): plain function tools, the freeform ``apply_patch``,
and no tool search (which would hide the MCP tools behind a search). Codex reads files through
its shell (``exec_command``), so the fix node allows exactly the ``cat`` the script runs; it
edits with ``apply_patch``, which the kit's hook decides per file. The cast runs through Codex's
own subagent tools (``--enable multi_agent_v2``: ``spawn_agent`` with the kit's ``telic-cast``
agent type, then ``wait_agent``). The hook needs no trust prompt (``--dangerously-bypass-hook-
trust``, for automation that vetted its hooks) and Codex waits for Telic's server before the
first turn (``mcp_servers.telic.required``).
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
from telic.hosts._texts import AGENT_TEXT
from telic.ledger import open_ledger
from tests.telic.hosts.realhost.binaries import codex, host_environment, run_host
from tests.telic.hosts.realhost.responses import ResponsesStandIn
from tests.telic.hosts.realhost.script import (
    OUTSIDE,
    TARGET,
    HostNames,
    Outcome,
    ThroughHost,
    cast_packet,
    child_script,
    packet_in,
    run_script,
)
from tests.telic.hosts.realhost.standin import Conversation, Returned
from tests.telic.resident.kit import private_runtime

pytestmark = pytest.mark.slow

TELIC = Path(sys.executable).parent / "telic"
MODEL = "telic-stand-in"
READ = f"cat {TARGET}"


def _patch(path: Path, content: str) -> str:
    """An ``apply_patch`` patch that gives ``path`` (relative to the project) ``content``."""
    relative = f"{path.parent.name}/{path.name}" if path.parent.name == "src" else path.name
    if not path.exists():
        added = "".join(f"+{line}\n" for line in content.splitlines())
        return f"*** Begin Patch\n*** Add File: {relative}\n{added}*** End Patch\n"
    old = path.read_text(encoding="utf-8").splitlines()
    new = content.splitlines()
    hunk = [f"-{a}\n+{b}\n" for a, b in zip(old, new, strict=True) if a != b]
    return f"*** Begin Patch\n*** Update File: {relative}\n@@\n{''.join(hunk)}*** End Patch\n"


def _text_of_content(content: Any) -> str:
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _refused(returned: Returned) -> bool:
    """Codex marks no tool result as an error: a hook's refusal is in the text."""
    return returned.is_error or returned.text.startswith("Command blocked by PreToolUse hook")


CODEX = HostNames(
    host="codex",
    telic_prefix="mcp__telic/",
    read=lambda path: ("exec_command", {"cmd": READ}),
    write=lambda path, content: ("apply_patch", {"input": _patch(path, content)}),
    refused=_refused,
    shell=(READ,),
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


def codex_home(home: Path, binary: Path, env: dict[str, str], url: str, root: Path) -> None:
    """The user's Codex config: the stand-in as the model provider, the project trusted, and
    a catalog describing the stand-in's model (one of Codex's own plain-tool models, renamed)."""
    home.mkdir()
    listed = subprocess.run(
        [str(binary), "debug", "models"],
        env={**env, "CODEX_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    models = json.loads(listed.stdout)["models"]
    plain = next(
        m for m in models if m.get("tool_mode") is None and m["apply_patch_tool_type"] == "freeform"
    )
    catalog = {**plain, "slug": MODEL, "display_name": MODEL, "supports_search_tool": False}
    (home / "catalog.json").write_text(json.dumps({"models": [catalog]}), encoding="utf-8")
    (home / "config.toml").write_text(
        f'model = "{MODEL}"\n'
        "check_for_update_on_startup = false\n"
        'model_provider = "stand-in"\n'
        f"model_catalog_json = {json.dumps(str(home / 'catalog.json'))}\n"
        "[model_providers.stand-in]\n"
        'name = "Loopback stand-in"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "STAND_IN_API_KEY"\n'
        f"[projects.{json.dumps(str(root))}]\n"
        'trust_level = "trusted"\n',
        encoding="utf-8",
    )


@dataclass
class Held:
    """What the held cast (one turn, its partial returned) left for the test to check."""

    cast_id: str = ""
    returned: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    verified_cast_id: str = ""


def held_shell_script(handoff: Any, root: Path) -> Any:
    """A Codex cast subagent held to a one-turn budget: its first shell read is refused by the
    run's layers (no shell during the diagnosis) and counted; its second is cut off by its
    budget; it answers with a typed partial."""

    def script(child: Conversation) -> str:
        first = child.call(*CODEX.read(root / TARGET))
        assert _refused(first), first.text
        assert f"cast {handoff['castId']} denies shell.execute" in first.text, first.text
        capped = child.call(*CODEX.read(root / TARGET))
        assert _refused(capped), capped.text
        assert "(layer: cast_budget; turn_capped)" in capped.text, capped.text
        remaining = ["read the start-index line once the shell is allowed"]
        return json.dumps(cast_packet(root, TARGET, remaining=remaining))

    return script


def cast_through_spawn_agent(stand_in: ResponsesStandIn, root: Path, held: Held) -> Any:
    """Two casts during the diagnosis, each a Codex subagent of the kit's ``telic-cast`` type
    (``spawn_agent`` with a task name, the stand-in's marker for it), waited for
    (``wait_agent``), the packet taken from its final answer, which Codex hands the parent as
    an agent message: first a cast of one turn whose child is cut off (its partial returned,
    the digest read), then the diagnosis cast whose verified packet the run cites. Codex
    delivers the task to the subagent encrypted for the real backend, so the child's script has
    the handoff from the test, not from the wire."""

    async def admit(tools: ThroughHost, driver: RunDriver, turns: int) -> tuple[str, Any]:
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
            budget={"maxTurns": turns, "maxTotalTokens": 20_000},
            brief=f"Read {TARGET} and quote the line that computes where a page starts.",
            pointers=[f"repo://{TARGET}"],
        )
        return str(admitted["cast"]["castId"]), admitted["cast"]["handoff"]

    def run_child(tools: ThroughHost, cast_id: str, handoff: Any, child: Conversation) -> str:
        task = "cast_" + cast_id.rsplit("-", 1)[-1]
        stand_in.subagent(f"recipient /root/{task}", child)
        conversation = tools.conversation
        spawned = conversation.call(
            "collaboration/spawn_agent",
            {
                "task_name": task,
                "agent_type": "telic-cast",
                "message": "Run this Telic cast; answer with one packet.\n" + json.dumps(handoff),
            },
        )
        assert not _refused(spawned), spawned.text
        waited = conversation.call("collaboration/wait_agent", {"timeout_ms": 60_000})
        assert '"timed_out":false' in waited.text, waited.text
        # The subagent's answer reaches the parent as an agent message in its next request.
        answers = [
            _text_of_content(item.get("content"))
            for item in conversation.latest.get("input", [])
            if item.get("type") == "agent_message" and item.get("author") == f"/root/{task}"
        ]
        assert answers, "the subagent's answer did not reach the parent"
        child.check()
        return answers[-1]

    async def cast(tools: ThroughHost, driver: RunDriver) -> str:
        held.cast_id, handoff = await admit(tools, driver, 1)
        child = Conversation("held-cast", held_shell_script(handoff, root))
        answer = run_child(tools, held.cast_id, handoff, child)
        held.returned = await tools.call(
            "telic_return_packet",
            run_id=driver.run_id,
            cast_id=held.cast_id,
            packet=packet_in(answer),
        )
        held.digest = json.dumps(await tools.call("telic_get_digest", run_id=driver.run_id))

        held.verified_cast_id, handoff = await admit(tools, driver, 4)
        child = Conversation("telic-cast", child_script(handoff, root, CODEX))
        answer = run_child(tools, held.verified_cast_id, handoff, child)
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


def test_codex_completes_an_analyze_and_fix_run_with_a_cast(tmp_path: Path, runtime: Path) -> None:
    binary = codex()
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "project")
    state = tmp_path / "state"
    env = host_environment(tmp_path / "home", state, runtime)
    done = telic("init", "codex", "--repository", str(repo.root), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    outcome, held = Outcome(), Held()
    with ResponsesStandIn() as stand_in:
        cast = cast_through_spawn_agent(stand_in, repo.root, held)
        main = Conversation("main", run_script(CODEX, repo.root, cast, outcome))
        stand_in.main = main
        codex_home(tmp_path / "codex", binary, env, stand_in.url, repo.root)
        env.update(CODEX_HOME=str(tmp_path / "codex"), STAND_IN_API_KEY="stand-in-key")
        ran = run_host(
            [
                str(binary),
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "--dangerously-bypass-hook-trust",
                # Codex's second subagent tools: spawn_agent takes the kit's custom agent type.
                "--enable",
                "multi_agent_v2",
                "Fix the pagination bug",
            ],
            cwd=repo.root,
            env=env,
            seconds=90,
            describe=main.transcript,
        )
    if stand_in.errors:
        pytest.fail("\n".join(stand_in.errors))
    main.check()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # Each subagent was the kit's telic-cast agent: its instructions open its requests.
    opening = AGENT_TEXT.splitlines()[0]
    for child in ("held-cast", "telic-cast"):
        routed = [body for name, body in stand_in.requests if name == child]
        assert routed, child
        assert all(opening in stand_in.marker_text(body) for body in routed), child

    listed = telic("runs", "--json", env=env, cwd=repo.root)
    assert listed.returncode == 0, listed.stderr
    runs = {run["runId"]: run for run in json.loads(listed.stdout)["runs"]}
    assert runs[outcome.run_id]["status"] == "completed"
    events = anyio.run(ledger_events, state, repo.root, outcome.run_id)
    hook = [
        (e.decision_summary.split(":")[0], d["decision"], d["capability"], d["scope"])
        for e in events
        if (d := e.permission_decision) is not None
        and (e.decision_summary or "").startswith("Codex ")
    ]
    assert hook == [
        ("Codex Bash", "deny", "shell.execute", READ),  # the held child's read: no shell yet
        ("Codex Bash", "deny", "shell.execute", READ),  # its second call: cut off
        ("Codex Bash", "deny", "shell.execute", READ),  # the cast's read, in the diagnosis
        ("Codex apply_patch", "deny", "repository.write", OUTSIDE),  # outside the fix node
        ("Codex apply_patch", "allow", "repository.write", TARGET),
        ("Codex Bash", "allow", "shell.execute", READ),  # reading the fix back
    ]
    # Codex's spawn reaches no hook; each child was bound at its start to the run's only free
    # open cast, and its shell commands were judged against that cast and counted.
    children = children_of((e.event_type, e.decision_summary) for e in events)
    assert {children.cast_of(agent) for agent in children.bound} == {
        held.cast_id,
        held.verified_cast_id,
    }
    assert children.spend_of(held.cast_id).turns == 2
    assert children.spend_of(held.verified_cast_id).turns == 1
    packet = held.returned["packet"]
    assert (packet["outcome"], packet["stopReason"]) == ("partial", "turn_capped"), packet
    assert packet["counters"]["turns"] == 2, packet
    # The MCP digest keeps the contract's lines; the observed spend stands in its marks.
    digest = json.loads(held.digest)
    (mark,) = [m for m in digest["marks"] if m["packetId"] == packet["packetId"]]
    assert (mark["tokensSelfReported"], mark["observedTurns"], mark["observedToolCalls"]) == (
        True,
        2,
        2,
    ), digest
    side_by_side = "tokens self-reported; 2 turns, 2 tool calls observed"
    report = telic("report", outcome.run_id, "--format", "md", env=env, cwd=repo.root)
    assert report.returncode == 0, report.stderr
    assert side_by_side in report.stdout, report.stdout
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
    assert not (repo.root / OUTSIDE).exists()  # the denied patch wrote nothing
    assert "start = (page - 1) * per_page" in (repo.root / TARGET).read_text(encoding="utf-8")
