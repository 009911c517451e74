"""The server as an MCP citizen: spec error codes, refused extra arguments, completions, logging.

Driven in process through the official client, on both backends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from telic.demo import DemoRepository, TelicTools
from telic.ledger import open_ledger
from telic.protocol import ACTION_ROLES, Mode
from telic.roles import open_service
from telic.server import build_server
from telic.server._logs import ClientLogs

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


@asynccontextmanager
async def _client(repo: DemoRepository, state: Path, **options: Any) -> AsyncIterator[Client]:
    async with (
        open_ledger("memory://") as ledger,
        open_service(ledger=ledger, repository_root=repo.root, state_dir=state) as service,
        Client(build_server(service, ledger=ledger), mode="legacy", **options) as client,
    ):
        yield client


async def test_unknown_tools_prompts_and_resources_are_invalid_params_without_a_traceback(
    repo: DemoRepository, state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with _client(repo, state) as client:
        refusals = []
        for call in (
            client.call_tool("telic_no_such_tool", {}),
            client.get_prompt("no_such_prompt", {}),
            client.get_prompt("telic_workflow", {"original_request": "x", "mode": "yolo"}),
            client.read_resource("telic://nowhere/at/all"),
            client.read_resource("telic://runs/no-such-run/report.md"),
        ):
            with pytest.raises(MCPError) as refused:
                await call
            refusals.append(refused.value)
    assert [r.error.code for r in refusals] == [types.INVALID_PARAMS] * 5
    assert "telic_no_such_tool" in str(refusals[0])
    assert "no-such-run" in str(refusals[4])
    assert [r.error.data for r in refusals[3:]] == [  # SEP-2164: the error names the URI
        {"uri": "telic://nowhere/at/all"},
        {"uri": "telic://runs/no-such-run/report.md"},
    ]
    assert not [r for r in caplog.records if r.exc_info], "a client mistake logged a traceback"


async def test_an_unknown_argument_is_refused_by_name_and_changes_nothing(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        tools = TelicTools(client)
        refused = await tools.attempt(
            "telic_start_run", original_request=REQUEST, mode="plan_only", transcript=["hi"]
        )
        runs = await tools.call("telic_list_runs")
    assert refused["ok"] is False
    assert refused["code"] == "invalid_arguments"
    assert any(issue["path"] == "transcript" for issue in refused["issues"])
    assert runs["runs"] == []


async def test_every_listed_tool_has_a_title_an_output_schema_and_honest_annotations(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        listed = (await client.list_tools()).tools
    for tool in listed:
        assert tool.title
        assert tool.output_schema is not None
        assert tool.output_schema["type"] == "object"
        assert "ok" in tool.output_schema["required"]
        assert tool.input_schema.get("additionalProperties") is False
        assert tool.annotations is not None
    writes = {t.name for t in listed if not (t.annotations and t.annotations.read_only_hint)}
    assert "telic_check_tool_action" in writes  # it appends a trace record
    assert "telic_get_run" not in writes


async def test_completions_offer_modes_artifact_types_run_ids_and_roles(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        started = await TelicTools(client).call(
            "telic_start_run", original_request=REQUEST, mode="plan_only"
        )
        modes = await client.complete(
            types.PromptReference(type="ref/prompt", name="telic_workflow"),
            {"name": "mode", "value": "analyze"},
        )
        kinds = await client.complete(
            types.ResourceTemplateReference(
                type="ref/resource", uri="telic://schemas/{artifact_type}"
            ),
            {"name": "artifact_type", "value": "Pro"},
        )
        runs = await client.complete(
            types.ResourceTemplateReference(
                type="ref/resource", uri="telic://runs/{run_id}/report.md"
            ),
            {"name": "run_id", "value": started["run"]["runId"][:4]},
        )
        every_mode = await client.complete(
            types.PromptReference(type="ref/prompt", name="telic_workflow"),
            {"name": "mode", "value": ""},
        )
        roles = await client.complete(
            types.ResourceTemplateReference(
                type="ref/resource", uri="artifact://system/roles/{role}-v1"
            ),
            {"name": "role", "value": ""},
        )
    assert modes.completion.values == ["analyze_only", "analyze_and_fix"]
    assert every_mode.completion.values == list(get_args(Mode))  # the prompt's are start_run's
    assert kinds.completion.values == ["ProblemFrame", "PromptReview"]
    assert runs.completion.values == [started["run"]["runId"]]
    assert roles.completion.values == list(ACTION_ROLES)


async def test_a_client_that_sets_a_log_level_receives_the_servers_log_lines(
    repo: DemoRepository, state: Path
) -> None:
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with _client(repo, state, logging_callback=on_log) as client:
        with pytest.warns(MCPDeprecationWarning):  # the client's: 2026-07-28 drops logging
            await client.set_logging_level("info")
        tools = TelicTools(client)
        await tools.attempt("telic_get_run", run_id="no-such-run")
        await tools.call("telic_list_runs")  # the line travels ahead of this answer's request
    assert [(p.level, p.logger) for p in received] == [("info", "telic.server")]
    assert received[0].data == "telic_get_run refused: not_found"


def test_a_second_subscriber_at_a_higher_level_leaves_the_logger_where_the_first_set_it() -> None:
    name = "telic.tests.second-subscriber"
    logs = ClientLogs(name)
    logging.getLogger(name).setLevel(logging.WARNING)
    logs.subscribe(None, object(), "info")
    assert logging.getLogger(name).level == logging.INFO
    logs.subscribe(None, object(), "error")  # a record at info is still made for the first
    assert logging.getLogger(name).level == logging.INFO


async def test_a_run_verifies_and_replays_in_process_and_an_unknown_one_is_not_found(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        tools = TelicTools(client)
        started = await tools.call(
            "telic_start_run",
            original_request="Fix paginate in src/pagination.py",
            mode="analyze_only",
        )
        run_id = started["run"]["runId"]
        verified = await tools.call("telic_verify_run", run_id=run_id)
        replayed = (await tools.call("telic_replay_run", run_id=run_id))["report"]
        unknown = await tools.attempt("telic_replay_run", run_id="no-such-run")
    assert (verified["runId"], verified["intact"], verified["firstBroken"]) == (run_id, True, None)
    assert verified["recordsChecked"] > 0
    assert replayed["runId"] == run_id
    assert (unknown["ok"], unknown["code"]) == (False, "not_found")
    assert unknown["error"] == "Run not found: no-such-run"
