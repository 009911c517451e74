"""``telic_replay_run`` and both dialects of ``telic_check_tool_action``, black-box over MCP on
stdio and on streamable HTTP (a real ``telic serve`` subprocess each time).

The expected shapes are the original Telic's (its HEAD, after 1.0), held here as data: a replay
is ``{ok, report: {runId, topology, steps, traceHighlights}}`` with one step per stored artifact;
a broker check in the original's dialect answers ``decision: {allowed, reasonCode, summary,
permissionDecision}`` and records ``broker_decision``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.demo import (
    DemoRepository,
    TelicTools,
    drive_mode,
    http_client,
    http_server,
    stdio_parameters,
)
from telic.protocol import canonical_json

pytestmark = pytest.mark.anyio

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"
STEP_KEYS = {"sequence", "phase", "artifactRef", "artifactType", "digestStatus"}
REPORT_KEYS = {"runId", "topology", "steps", "traceHighlights"}
BROKER_KEYS = {"allowed", "reasonCode", "summary", "permissionDecision"}
OUR_KEYS = {"capability", "scope", "decidingLayer", "reason", "code"}
PROTOCOL_ONLY_PHASES = {"context_discovery", "agent_3_quality_review", "user_report"}

Connect = Callable[[DemoRepository, Path], AbstractAsyncContextManager[TelicTools]]


@pytest.fixture
def anyio_backend() -> str:
    """The HTTP server side is asyncio (uvicorn); both transports' clients run on asyncio."""
    return "asyncio"


@asynccontextmanager
async def _stdio(repo: DemoRepository, state: Path) -> AsyncIterator[TelicTools]:
    async with Client(stdio_parameters(repo.root, state)) as client:
        yield TelicTools(client)


@asynccontextmanager
async def _http(repo: DemoRepository, state: Path) -> AsyncIterator[TelicTools]:
    async with (
        http_server(repo.root, state, token="t0ken") as url,
        http_client(url, "t0ken") as client,
    ):
        yield TelicTools(client)


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest) -> Connect:
    """Each test runs once over stdio and once over streamable HTTP."""
    return _stdio if request.param == "stdio" else _http


def _database(state: Path) -> Path:
    (found,) = state.rglob("ledger.sqlite3")
    return found


def _sql(state: Path, statement: str, params: tuple[Any, ...]) -> None:
    """Change the store behind the server's back (as someone with the file could)."""
    connection = sqlite3.connect(_database(state))
    try:
        assert connection.execute(statement, params).rowcount == 1
        connection.commit()
    finally:
        connection.close()


async def _finished(tools: TelicTools, repo: DemoRepository) -> str:
    driver = await drive_mode(tools, "analyze_only", repo, request=REQUEST, goal="Find it")
    assert driver.action["status"] == "completed"
    return driver.run_id


async def test_a_finished_run_replays_one_ok_step_per_artifact_in_trace_order(
    connect: Connect, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(120):
        async with connect(repo, state) as tools:
            run_id = await _finished(tools, repo)
            artifacts = (await tools.call("telic_get_run", run_id=run_id))["artifacts"]
            before = await tools.call("telic_verify_run", run_id=run_id)
            replayed = await tools.call("telic_replay_run", run_id=run_id)
            again = await tools.call("telic_replay_run", run_id=run_id)
            after = await tools.call("telic_verify_run", run_id=run_id)
    assert set(replayed) == {"ok", "report"}
    report = replayed["report"]
    assert set(report) >= REPORT_KEYS
    assert "degraded" not in report
    assert "reason" not in report
    assert (report["runId"], report["topology"], report["traceHighlights"]) == (
        run_id,
        "standard",
        [],
    )
    steps = report["steps"]
    assert all(set(step) == STEP_KEYS for step in steps)
    assert sorted(s["artifactRef"] for s in steps) == sorted(
        f"artifact://{run_id}/{a['id']}" for a in artifacts
    )
    assert {s["digestStatus"] for s in steps} == {"ok"}
    assert [s["sequence"] for s in steps] == sorted(s["sequence"] for s in steps)
    types = [s["artifactType"] for s in steps]
    assert types[:2] == ["UserMessage", "RunEnvelope"]
    assert types[-1] == "UserReport"
    by_type = {s["artifactType"]: s["phase"] for s in steps}
    # Internal phase names, as the original's replay gives them.
    assert by_type["QualityReview"] == "agent_3_review"
    assert by_type["UserReport"] == "agent_5_report"
    assert by_type["ContextManifest"] == "context_grounding"
    assert not {s["phase"] for s in steps} & PROTOCOL_ONLY_PHASES
    assert report["chain"]["intact"] is True
    # Read-only and idempotent: nothing recorded, the same answer twice.
    assert again == replayed
    assert after["recordsChecked"] == before["recordsChecked"]


async def test_a_tampered_run_replays_with_each_artifact_named_mismatch_or_missing(
    connect: Connect, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(120):
        async with connect(repo, state) as tools:
            run_id = await _finished(tools, repo)
            listed = (await tools.call("telic_get_run", run_id=run_id))["artifacts"]
            artifacts = {a["type"]: a for a in listed}
            frame, plan, report_meta = (
                artifacts["ProblemFrame"],
                artifacts["WorkPlan"],
                artifacts["UserReport"],
            )
            stored = await tools.call("telic_get_artifact", run_id=run_id, artifact_id=frame["id"])
            body = stored["artifact"]["body"]
            changed = {**body, "goal": body["goal"] + "!"}
            _sql(
                state,
                "UPDATE blobs SET data = ? WHERE sha256 = ?",
                (canonical_json(changed), frame["sha256"]),
            )
            _sql(
                state,
                "UPDATE artifacts SET producer = ? WHERE run_id = ? AND artifact_id = ?",
                ("user", run_id, plan["id"]),
            )
            _sql(state, "DELETE FROM blobs WHERE sha256 = ?", (report_meta["sha256"],))
            replayed = await tools.call("telic_replay_run", run_id=run_id)
            refused = await tools.attempt(
                "telic_get_artifact", run_id=run_id, artifact_id=frame["id"]
            )
    report = replayed["report"]
    status = {s["artifactType"]: s["digestStatus"] for s in report["steps"]}
    assert status.pop("ProblemFrame") == "mismatch"  # the body no longer matches its digest
    assert status.pop("WorkPlan") == "mismatch"  # the row no longer matches its record hash
    assert status.pop("UserReport") == "missing"  # the body is gone
    assert set(status.values()) == {"ok"}
    assert len(report["steps"]) == len(listed)
    chain = report["chain"]
    assert chain["intact"] is False
    assert chain["firstBroken"]["id"] == frame["id"]  # the earliest broken record
    assert refused["ok"] is False
    assert "integrity check failed" in refused["error"]


async def test_replay_of_an_unknown_run_is_the_originals_not_found_error(
    connect: Connect, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with connect(repo, state) as tools:
            refused = await tools.attempt("telic_replay_run", run_id="no-such-run")
    assert refused["ok"] is False
    assert refused["error"] == "Run not found: no-such-run"


async def test_the_originals_dialect_gets_the_hooks_read_widening_while_framing(
    connect: Connect, repo: DemoRepository, state: Path
) -> None:
    """While framing the phase grants no read: our dialect (a 1.0 tool's three layers) denies
    it, the original's (what a host's hook asks) lets the user's grant decide, as the hook
    does; a secret-like path is never widened."""
    with anyio.fail_after(90):
        async with connect(repo, state) as tools:
            started = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            run_id = started["run"]["runId"]
            grounded = await tools.call(
                "telic_ground_context",
                run_id=run_id,
                action_id=started["nextAction"]["id"],
                expected_run_version=1,
            )
            token = {"action_id": grounded["nextAction"]["id"], "expected_run_version": 2}
            read = {"run_id": run_id, "capability": "repository.read"}
            theirs = await tools.call(
                "telic_check_tool_action", target="src/pagination.py", **read, **token
            )
            ours = await tools.call("telic_check_tool_action", target="src/pagination.py", **read)
            secret = await tools.call("telic_check_tool_action", target=".env", **read, **token)
    assert grounded["nextAction"]["phase"] == "agent_1_frame"
    assert theirs["decision"]["allowed"] is True
    assert theirs["decision"]["summary"] == "Allowed by all 2 policies."
    assert ours["decision"]["allowed"] is False
    assert ours["decision"]["decidingLayer"] == "phase"
    assert secret["decision"]["allowed"] is False


async def test_the_broker_check_answers_both_dialects_and_traces_each_by_its_name(
    connect: Connect, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(90):
        async with connect(repo, state) as tools:
            started = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            run_id = started["run"]["runId"]
            token = {"action_id": started["nextAction"]["id"], "expected_run_version": 1}
            allow = await tools.call(
                "telic_check_tool_action",
                run_id=run_id,
                capability="repository.read",
                target="src/pagination.py",
                **token,
            )
            deny = await tools.call(
                "telic_check_tool_action",
                run_id=run_id,
                capability="repository.write",
                target="src/pagination.py",
                **token,
            )
            # The original's target is optional: a scoped grant then cannot match.
            untargeted = await tools.call(
                "telic_check_tool_action", run_id=run_id, capability="repository.read", **token
            )
            ours = await tools.call(
                "telic_check_tool_action",
                run_id=run_id,
                capability="repository.write",
                target="src/other.py",
            )
            stale = await tools.attempt(
                "telic_check_tool_action",
                run_id=run_id,
                action_id=token["action_id"],
                expected_run_version=0,
                capability="repository.read",
            )
            foreign = await tools.attempt(
                "telic_check_tool_action",
                run_id=run_id,
                action_id=f"action:{run_id}:7",
                expected_run_version=1,
                capability="repository.read",
            )
            half = await tools.client.call_tool(
                "telic_check_tool_action",
                {"run_id": run_id, "action_id": token["action_id"], "capability": "shell.inspect"},
            )
            negative = await tools.client.call_tool(
                "telic_check_tool_action",
                {
                    **token,
                    "run_id": run_id,
                    "expected_run_version": -1,
                    "capability": "shell.inspect",
                },
            )
            trace = (await tools.call("telic_get_trace", run_id=run_id, limit=500))["events"]
            envelope = next(
                a["id"]
                for a in (await tools.call("telic_get_run", run_id=run_id))["artifacts"]
                if a["type"] == "RunEnvelope"
            )
            replayed = await tools.call("telic_replay_run", run_id=run_id)
    policy = f"artifact://{run_id}/{envelope}"
    assert allow["decision"] == {
        "allowed": True,
        "reasonCode": "allowed",
        "summary": "Allowed by all 3 policies.",
        "permissionDecision": {
            "decision": "allow",
            "capability": "repository.read",
            "scope": "src/pagination.py",
            "policyRefs": [policy],
            "rationaleSummary": "Allowed by all 3 policies.",
        },
        "capability": "repository.read",
        "scope": "src/pagination.py",
        "decidingLayer": None,
        "reason": "allowed by every layer (mode, authorization, phase)",
        "code": "allowed",
    }
    denied = deny["decision"]
    assert set(denied) == BROKER_KEYS | OUR_KEYS
    assert (denied["allowed"], denied["reasonCode"]) == (False, "policy_denied")
    assert denied["summary"] == (
        "Denied by permission intersection: intent_mode:analyze_only, run_envelope, "
        "phase_permissions."
    )
    assert denied["permissionDecision"]["decision"] == "deny"
    assert denied["permissionDecision"]["rationaleSummary"] == denied["summary"]
    assert (untargeted["decision"]["allowed"], untargeted["decision"]["code"]) == (
        False,
        "target_required",
    )
    assert untargeted["decision"]["permissionDecision"]["scope"] == "unknown"
    # Our dialect: the same decision, both shapes in the answer.
    assert set(ours["decision"]) == BROKER_KEYS | OUR_KEYS
    assert ours["decision"]["allowed"] is False
    # Stale and foreign tokens: tool errors in the original's words, nothing recorded.
    assert stale["ok"] is False
    assert stale["code"] == "stale_token"
    assert stale["error"] == "Stale run version 0; current version is 1"
    assert foreign["error"] == "Stale or foreign action_id; reload the next action"
    assert half.is_error
    assert negative.is_error
    checks = [e for e in trace if e["actor"] == "host"]
    assert [e["eventType"] for e in checks] == [
        "broker_decision",
        "broker_decision",
        "broker_decision",
        "permission_checked",
    ]
    broker_allow, broker_deny = checks[0], checks[1]
    assert broker_allow["rationaleSummary"] == "Broker allowed repository.read."
    assert broker_deny["rationaleSummary"] == "Broker denied repository.write: policy_denied."
    assert broker_allow["inputRefs"] == [policy]
    assert broker_allow["outputRefs"] == []
    assert broker_allow["permissionDecision"] == allow["decision"]["permissionDecision"]
    assert checks[3]["permissionDecision"]["policyRefs"] == []  # ours, as before
    # The denials are the replay's highlights, in trace order.
    assert replayed["report"]["traceHighlights"] == [
        "Broker denied repository.write: policy_denied.",
        "Broker denied repository.read: policy_denied.",
        checks[3]["rationaleSummary"],
    ]
