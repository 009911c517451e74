"""Over a real ``telic serve`` subprocess and the official MCP client (stdio)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.demo import MODES, DemoRepository, TelicTools, drive_mode, stdio_parameters
from telic.server import TOOL_NAMES, WORKFLOW_INSTRUCTIONS
from tests.telic.server.raw import INITIALIZED, initialize, spawn
from tests.telic.server.wire import WireHost

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).with_name("tools.snapshot.json")
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"


def _listing(tools: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True),
            "inputSchema": t.input_schema,
            "outputSchema": t.output_schema,
        }
        for t in tools.tools
    ]


async def test_the_tool_list_and_input_schemas_match_the_snapshot(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(30):
        async with Client(stdio_parameters(repo.root, state)) as client:
            listing = _listing(await client.list_tools())
    if os.environ.get("TELIC_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(listing, indent=2, sort_keys=True) + "\n")
    assert [t["name"] for t in listing] == list(TOOL_NAMES)
    assert listing == json.loads(SNAPSHOT.read_text())


@pytest.mark.parametrize("mode", MODES)
async def test_a_full_run_completes_in_every_mode(
    mode: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = WireHost(client)  # checks every result against Telic 1.0's shapes
            driver = await drive_mode(tools, mode, repo, request=REQUEST, goal="Fix paginate")
            await tools.read_path(driver.run_id, REQUEST, mode)
            assert tools.problems == []
            assert driver.action["kind"] == "terminal"
            assert driver.action["status"] == "completed"
            verified = await tools.call("telic_verify_run", run_id=driver.run_id)
            assert verified["intact"] is True
            trace = await tools.call("telic_get_trace", run_id=driver.run_id, limit=500)
            assert trace["events"][0]["eventType"] == "run_started"
            report = await client.read_resource(f"telic://runs/{driver.run_id}/report.md")
            assert driver.run_id in report.contents[0].text  # type: ignore[union-attr]
    if mode in ("fix_only", "analyze_and_fix"):
        assert repo.run_tests()[0] == 0


@pytest.mark.parametrize("schemas", ["once", "full"])
async def test_a_session_gets_each_schema_once_unless_told_to_send_it_in_full(
    schemas: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        params = stdio_parameters(repo.root, state, env={"TELIC_SCHEMAS": schemas})
        async with Client(params) as client:
            tools = TelicTools(client)
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
            again = await tools.call("telic_get_next_action", run_id=run_id)
            resource = await client.read_resource("telic://schemas/ProblemFrame")
            refused = await tools.attempt(
                "telic_submit_artifact",
                run_id=run_id,
                action_id=grounded["nextAction"]["id"],
                expected_run_version=2,
                artifact_type="ProblemFrame",
                body={"id": "frame-1", "runId": run_id, "schemaVersion": "1.0"},
            )
    first = grounded["nextAction"]["requiredOutputSchema"]
    full = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
    assert full["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert refused["code"] == "schema_violation"
    # A structural refusal names the full schema's resource and carries the failing parts only.
    assert refused["requiredOutputSchema"]["$ref"] == "telic://schemas/ProblemFrame"
    assert "goal" in refused["requiredOutputSchema"]["x-telic-failing"]
    later = again["nextAction"]["requiredOutputSchema"]
    if schemas == "full":
        assert first == later == full
    else:  # drafted: the ProblemFrame text is withheld; grounding is Telic's step, so the
        # start points at the clarification's schema (its draft comes with the framing)
        asking = started["nextAction"]["additionalOutputSchemas"]["ClarificationRequest"]
        assert asking == {"$ref": "telic://schemas/ClarificationRequest"}
        assert first == later == {"$ref": "telic://schemas/ProblemFrame"}


def _is_error_envelope(envelope: dict[str, Any]) -> bool:
    return (
        envelope["ok"] is False
        and isinstance(envelope["error"], str)
        and len(envelope["error"]) <= 800
        and not any(c in envelope["error"] for c in "\r\n\t")
        and isinstance(envelope["code"], str)
    )


async def test_errors_come_back_as_envelopes_and_the_server_keeps_serving(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = TelicTools(client)
            started = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            run_id = started["run"]["runId"]
            action_id = started["nextAction"]["id"]
            stale = await tools.attempt(
                "telic_ground_context", run_id=run_id, action_id=action_id, expected_run_version=7
            )
            assert _is_error_envelope(stale)
            assert stale["code"] == "stale_token"
            foreign = await tools.attempt(
                "telic_ground_context",
                run_id=run_id,
                action_id=f"action:{run_id}:9",
                expected_run_version=1,
            )
            assert _is_error_envelope(foreign)
            assert foreign["code"] == "stale_token"
            grounded = await tools.call(
                "telic_ground_context", run_id=run_id, action_id=action_id, expected_run_version=1
            )
            token = {"action_id": grounded["nextAction"]["id"], "expected_run_version": 2}
            owned = await tools.attempt(
                "telic_submit_artifact",
                run_id=run_id,
                artifact_type="ContextManifest",
                body={"id": "x", "runId": run_id},
                **token,
            )
            assert _is_error_envelope(owned)
            malformed = await tools.attempt(
                "telic_submit_artifact",
                run_id=run_id,
                artifact_type="ProblemFrame",
                body_json="{not json",
                **token,
            )
            assert _is_error_envelope(malformed)
            invalid = await tools.attempt(
                "telic_submit_artifact",
                run_id=run_id,
                artifact_type="ProblemFrame",
                body={"id": "frame-1", "runId": run_id, "schemaVersion": "1.0"},
                **token,
            )
            assert _is_error_envelope(invalid)
            assert invalid["code"] == "schema_violation"
            assert 0 < len(invalid["issues"]) <= 32
            wrong_types = await tools.attempt(
                "telic_get_trace", run_id=run_id, limit="ten", after_sequence=-1
            )
            assert wrong_types["code"] == "invalid_arguments"
            assert {i["path"] for i in wrong_types["issues"]} == {"limit", "after_sequence"}
            missing = await tools.attempt("telic_get_run", run_id="no-such-run")
            assert missing["code"] == "not_found"
            both = await tools.attempt(
                "telic_submit_artifact",
                run_id=run_id,
                artifact_type="ProblemFrame",
                body={},
                body_json="{}",
                **token,
            )
            assert both["code"] == "invalid_arguments"
            after = await tools.call("telic_get_run", run_id=run_id)
            assert after["run"]["version"] == 2
            listed = await tools.call("telic_list_runs")
            assert [r["runId"] for r in listed["runs"]] == [run_id]


async def test_grounding_reports_progress_and_the_prompt_has_the_instructions(
    repo: DemoRepository, state: Path
) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    with anyio.fail_after(30):
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = TelicTools(client)
            started = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            await tools.call(
                "telic_ground_context",
                progress,
                run_id=started["run"]["runId"],
                action_id=started["nextAction"]["id"],
                expected_run_version=1,
            )
            prompt = await client.get_prompt(
                "telic_workflow", {"original_request": REQUEST, "mode": "analyze_and_fix"}
            )
    assert seen, "grounding sent no progress notification"
    done = [progress for progress, _ in seen]
    assert done == sorted(set(done)), "progress must strictly increase"
    assert {total for _, total in seen} == {3.0}
    assert done[-1] == 3.0
    (message,) = prompt.messages
    assert message.role == "user"
    assert WORKFLOW_INSTRUCTIONS in message.content.text  # type: ignore[union-attr]
    assert json.dumps(REQUEST) in message.content.text  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "eof"])
def test_the_server_shuts_down_cleanly_on_a_signal_or_end_of_input(
    how: str, repo: DemoRepository, state: Path
) -> None:
    import signal

    params = stdio_parameters(repo.root, state)
    with spawn(params) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write((json.dumps(initialize()) + "\n").encode())
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert reply["result"]["serverInfo"]["name"] == "telic"
        assert process.stderr is not None
        ready = process.stderr.readline()  # printed once the ledger and the service are open
        if how != "eof":
            process.send_signal(getattr(signal, how))
            process.wait(timeout=15)  # with stdin still open: the signal alone ends it
        out, err = process.communicate(timeout=15)  # closes stdin: end of input
    assert process.returncode == 0, err
    assert out == b"", "nothing but protocol on stdout"
    assert ready.startswith(b"Telic MCP ready for"), ready + err


def test_a_broken_ledger_is_named_once_every_call_gets_its_code_and_serve_exits_one(
    repo: DemoRepository, tmp_path: Path
) -> None:

    state = tmp_path / "broken-state"
    state.mkdir(mode=0o700)
    (state / "ledger.sqlite3").write_bytes(b"not a database at all" * 100)
    params = stdio_parameters(repo.root, state)
    messages = [
        initialize(),
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "telic_list_runs"}},
    ]
    with spawn(params) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        call = json.loads(process.stdout.readline())
        out, err = process.communicate(timeout=30)
    assert call["id"] == 2
    assert call["result"]["isError"] is True
    envelope = call["result"]["structuredContent"]
    assert envelope["code"] == "ledger_error"
    assert "is not an SQLite database" in envelope["error"]
    assert process.returncode == 1
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("telic: the ledger file ")
    assert lines[0].endswith("(ledger_error)")


@pytest.mark.parametrize("where", ["under-a-file", "a-file"])
def test_an_unusable_state_directory_answers_every_call_with_a_typed_error(
    repo: DemoRepository, tmp_path: Path, where: str
) -> None:
    # Issue 28: a state directory that could not be created answered `initialize`, then the
    # server died on the first tool call with nothing answered.
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory should be\n")
    state = blocker / "state" if where == "under-a-file" else blocker
    params = stdio_parameters(repo.root, state)
    calls = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "telic_list_runs"}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "telic_get_run", "arguments": {"run_id": "run-1"}},
        },
    ]
    with spawn(params) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        wire = [initialize(), INITIALIZED, *calls]
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in wire))
        process.stdin.flush()
        replies = [json.loads(process.stdout.readline()) for _ in range(3)]
        out, err = process.communicate(timeout=30)
    assert sorted(r["id"] for r in replies) == [1, 2, 3]  # calls run concurrently
    for reply in (r for r in replies if r["id"] != 1):
        assert reply["result"]["isError"] is True
        envelope = reply["result"]["structuredContent"]
        assert envelope["code"] in ("ledger_error", "context_security")
        assert "state directory" in envelope["error"]
    assert process.returncode == 1
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err.decode()
