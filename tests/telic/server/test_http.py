"""Over ``telic serve --http`` subprocesses: the happy path, the bearer token, DNS rebinding,
and two replicas on one PostgreSQL racing for the same run version."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from telic.demo import DemoRepository, TelicTools, drive_mode, http_client, http_server
from tests.telic.server.raw import initialize
from tests.telic.server.wire import WireHost

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"
INIT = initialize()
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    """The HTTP server side is asyncio (uvicorn); the client here runs on asyncio too."""
    return "asyncio"


async def test_a_run_completes_over_streamable_http_with_a_token(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with (
            http_server(repo.root, state, token="s3cret") as url,
            http_client(url, "s3cret") as client,
        ):
            tools = WireHost(client)  # checks every result against Telic 1.0's shapes
            driver = await drive_mode(tools, "analyze_only", repo, request=REQUEST, goal="Find it")
            assert driver.action["status"] == "completed"
            await tools.read_path(driver.run_id, REQUEST, "analyze_only")
            assert tools.problems == []
            assert "telic_submit_artifact:Evidence (identical replay)" in tools.checked
            async with httpx2.AsyncClient() as http:
                page = f"{url.removesuffix('/mcp')}/runs/{driver.run_id}"
                refused = await http.get(page)
                report = await http.get(page, headers={"Authorization": "Bearer s3cret"})
            assert refused.status_code == 401
            assert report.status_code == 200
            assert driver.run_id in report.text


async def test_requests_without_the_token_are_refused(repo: DemoRepository, state: Path) -> None:
    with anyio.fail_after(60):
        async with (
            http_server(repo.root, state, token="s3cret") as url,
            httpx2.AsyncClient() as http,
        ):
            missing = await http.post(url, json=INIT, headers=HEADERS)
            wrong = await http.post(
                url, json=INIT, headers=HEADERS | {"Authorization": "Bearer nope"}
            )
            right = await http.post(
                url, json=INIT, headers=HEADERS | {"Authorization": "Bearer s3cret"}
            )
            rebinding = await http.post(
                url,
                json=INIT,
                headers=HEADERS | {"Authorization": "Bearer s3cret", "Host": "evil.example"},
            )
    assert missing.status_code == 401
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert rebinding.status_code in (403, 421)


MODERN = HEADERS | {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}


def _call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {"limit": 1} if arguments is None else arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
            },
        },
    }


async def test_stateless_calls_keep_the_bearer_check_and_the_rebinding_protection(
    repo: DemoRepository, state: Path
) -> None:
    quiet = MODERN | {"Mcp-Name": "telic_list_runs"}
    with anyio.fail_after(60):
        async with (
            http_server(repo.root, state, token="s3cret") as url,
            httpx2.AsyncClient() as http,
        ):
            missing = await http.post(url, json=_call("telic_list_runs"), headers=quiet)
            rebinding = await http.post(
                url,
                json=_call("telic_list_runs"),
                headers=quiet | {"Authorization": "Bearer s3cret", "Host": "evil.example"},
            )
            foreign = await http.post(
                url,
                json=_call("telic_list_runs"),
                headers=quiet | {"Authorization": "Bearer s3cret", "Origin": "http://evil.example"},
            )
    assert missing.status_code == 401
    assert rebinding.status_code in (403, 421)
    assert foreign.status_code == 403


async def test_a_refused_stateless_start_run_writes_nothing(
    repo: DemoRepository, state: Path
) -> None:
    quiet = MODERN | {"Mcp-Name": "telic_start_run"}
    start = _call("telic_start_run", {"original_request": REQUEST, "mode": "report_only"})
    authorized = quiet | {"Authorization": "Bearer s3cret"}
    listing = MODERN | {"Authorization": "Bearer s3cret", "Mcp-Name": "telic_list_runs"}

    async def runs(http: httpx2.AsyncClient, url: str) -> list[Any]:
        listed = await http.post(url, json=_call("telic_list_runs", {"limit": 20}), headers=listing)
        envelope = json.loads(listed.text)["result"]["structuredContent"]
        assert envelope["ok"] is True
        return list(envelope["runs"])

    with anyio.fail_after(60):
        async with (
            http_server(repo.root, state, token="s3cret") as url,
            httpx2.AsyncClient() as http,
        ):
            missing = await http.post(url, json=start, headers=quiet)
            rebinding = await http.post(
                url, json=start, headers=authorized | {"Host": "evil.example"}
            )
            foreign = await http.post(
                url, json=start, headers=authorized | {"Origin": "http://evil.example"}
            )
            after_refusals = await runs(http, url)
            accepted = await http.post(url, json=start, headers=authorized)
            after_start = await runs(http, url)
    assert missing.status_code == 401
    assert rebinding.status_code in (403, 421)
    assert foreign.status_code == 403
    assert after_refusals == []
    assert accepted.status_code == 200
    assert len(after_start) == 1


async def test_grounding_reports_progress_over_http_while_other_calls_answer_json(
    repo: DemoRepository, state: Path
) -> None:
    heard: list[str | None] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    with anyio.fail_after(60):
        async with http_server(repo.root, state) as url, http_client(url) as client:
            tools = TelicTools(client)
            driver = await drive_mode(
                tools, "analyze_only", repo, request=REQUEST, goal="Find it", progress=progress
            )
            async with httpx2.AsyncClient() as http:
                listed = await http.post(
                    url,
                    json=_call("telic_list_runs"),
                    headers=MODERN | {"Mcp-Name": "telic_list_runs"},
                )
    assert driver.action["status"] == "completed"
    assert heard
    assert all(message is not None and "inventoried" in message for message in heard)
    assert listed.status_code == 200
    assert listed.headers["content-type"] == "application/json"
    assert driver.run_id in listed.text


def _session_client(url: str) -> Client:
    """A client that opens an MCP session (the handshake era, with an ``Mcp-Session-Id``)."""

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        async with (
            httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    return Client(transport(), mode="legacy")


async def _frame_schemas(tools: TelicTools) -> list[dict[str, Any]]:
    """Start and ground a run, ask again: the ClarificationRequest schema the start carried,
    then the ProblemFrame schema each of the two drafted answers had."""
    started = await tools.call("telic_start_run", original_request=REQUEST, mode="analyze_only")
    run_id = started["run"]["runId"]
    grounded = await tools.call(
        "telic_ground_context",
        run_id=run_id,
        action_id=started["nextAction"]["id"],
        expected_run_version=1,
    )
    again = await tools.call("telic_get_next_action", run_id=run_id)
    return [
        started["nextAction"]["additionalOutputSchemas"]["ClarificationRequest"],
        grounded["nextAction"]["requiredOutputSchema"],
        again["nextAction"]["requiredOutputSchema"],
    ]


async def test_each_http_session_gets_the_schema_once_and_sessionless_calls_always_in_full(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with (
            http_server(repo.root, state) as url,
            _session_client(url) as one,
            _session_client(url) as two,
            http_client(url) as sessionless,
        ):
            first = await _frame_schemas(TelicTools(one))
            second = await _frame_schemas(TelicTools(two))
            third = await _frame_schemas(TelicTools(sessionless))
            fourth = await _frame_schemas(TelicTools(one))
            resource = await one.read_resource("telic://schemas/ProblemFrame")
    full = third[1]
    asking = {"$ref": "telic://schemas/ClarificationRequest"}
    reference = {"$ref": "telic://schemas/ProblemFrame"}
    assert full["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # In a session the start points at the clarification's schema (its draft comes with the
    # framing) and the framing answers carry a draft: the ProblemFrame text is withheld.
    assert first == second == [asking, reference, reference]
    assert third[1:] == [full, full], "the 2026-07-28 era has no sessions: nothing to remember"
    assert third[0]["$schema"] == full["$schema"]
    assert fourth == [asking, reference, reference]
    assert json.loads(resource.contents[0].text) == full  # type: ignore[union-attr]


def _postgres_url() -> str:
    url = os.environ.get("TELIC_TEST_POSTGRES_URL") or os.environ.get("TELIC_DATABASE_URL", "")
    if not url.startswith("postgres"):
        if os.environ.get("CI"):
            pytest.fail("CI must provide TELIC_TEST_POSTGRES_URL for the replica test")
        pytest.skip("needs PostgreSQL: set TELIC_TEST_POSTGRES_URL")
    return url


@pytest.mark.postgres
async def test_two_replicas_share_one_database_and_racing_submissions_have_one_winner(
    repo: DemoRepository, tmp_path: Path
) -> None:
    url = _postgres_url()
    with anyio.fail_after(90):
        async with (
            http_server(repo.root, tmp_path / "a", database_url=url) as first,
            http_server(repo.root, tmp_path / "b", database_url=url) as second,
            http_client(first) as one,
            http_client(second) as two,
        ):
            a, b = TelicTools(one), TelicTools(two)
            started = await a.call("telic_start_run", original_request=REQUEST, mode="plan_only")
            run_id = started["run"]["runId"]
            seen = await b.call("telic_get_run", run_id=run_id)
            assert seen["run"]["version"] == 1
            token = {"action_id": started["nextAction"]["id"], "expected_run_version": 1}
            outcomes: list[dict[str, object]] = []

            async def ground(tools: TelicTools) -> None:
                outcomes.append(await tools.attempt("telic_ground_context", run_id=run_id, **token))

            async with anyio.create_task_group() as tg:
                for tools in (a, b, a, b):
                    tg.start_soon(ground, tools)
            winners = [o for o in outcomes if o["ok"]]
            assert len(winners) == 1, outcomes
            assert all(
                o["code"] in ("stale_token", "ledger_conflict") for o in outcomes if not o["ok"]
            )
            after = await a.call("telic_get_run", run_id=run_id)
            assert after["run"]["version"] == 2
