"""A ClarificationRequest put to the user through the official client's elicitation callback.

Over real ``telic serve`` processes (stdio and streamable HTTP) with ``mcp.Client`` in the
handshake protocol (``mode="legacy"``, the server sends the form during the call) and in
2026-07-28 (the call answers ``input_required`` and the client's driver repeats it with the
answer): the user accepts, declines or cancels the form; an accepted choice is recorded as the
answer with its provenance in the trace and the report, anything else leaves the ledger as the
stored request left it and says so. A client without the capability keeps the Telic 1.0 result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from telic.controller import ELICITED_SUMMARY
from telic.demo import DemoRepository, RunDriver, TelicTools, http_server, stdio_parameters
from telic.reports import ANSWER_SOURCES
from telic.server._elicit import CHOICE_FIELD, Elicited, clarification_form, read_answer

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


@pytest.fixture
def anyio_backend() -> str:
    """The servers are subprocesses; the client side runs on asyncio (the HTTP server's loop)."""
    return "asyncio"


def _clarification(driver: RunDriver) -> dict[str, Any]:
    b = driver.bodies
    return {
        "schemaVersion": "1.0",
        "id": "clar-1",
        "runId": driver.run_id,
        "question": "Should paginate count pages from 0 or from 1?",
        "reason": "user_owned_materially_divergent",
        "divergence": "Both readings fit the request",
        "evidenceInspected": [b.request],
        "blockedBoundary": "page numbering",
        "responseConstraints": "Pick one choice id.",
        "responseChoices": [
            {
                "id": "one_based",
                "label": "From 1",
                "consequence": "Page 1 is the first page; the run resumes",
                "authorityEffect": "within_current_authority",
                "runEffect": "resume",
            },
            {
                "id": "stop",
                "label": "Stop here",
                "consequence": "The run is cancelled",
                "authorityEffect": "within_current_authority",
                "runEffect": "cancel",
            },
        ],
        "permissionExpansionRequired": False,
        "rationaleSummary": "The user owns the numbering.",
    }


class User:
    """The person behind the client's form: answers each elicitation as told, and remembers it."""

    def __init__(self, action: str, choice: str | None = None) -> None:
        self.action = action
        self.choice = choice
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        if self.action == "error":
            return types.ErrorData(code=types.INVALID_REQUEST, message="no form here")
        content = None if self.choice is None else {CHOICE_FIELD: self.choice}
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


async def _to_framing(tools: TelicTools) -> RunDriver:
    driver = await RunDriver.start(tools, "analyze_only", REQUEST, "Find it")
    await driver.ground(["src/pagination.py"])
    assert driver.phase == "agent_1_frame"
    return driver


async def _ask(tools: TelicTools, driver: RunDriver) -> dict[str, Any]:
    return await tools.call(
        "telic_submit_artifact",
        run_id=driver.run_id,
        artifact_type="ClarificationRequest",
        body=_clarification(driver),
        **driver.token(),
    )


async def _ledger(tools: TelicTools, run_id: str) -> tuple[Any, ...]:
    """Everything the ledger holds of the run: record, artifacts, trace."""
    run = await tools.call("telic_get_run", run_id=run_id)
    trace = await tools.call("telic_get_trace", run_id=run_id, limit=500)
    return (run["run"], run["artifacts"], trace["events"])


def _report(tools: TelicTools) -> Any:
    async def read(run_id: str) -> str:
        result = await tools.client.read_resource(f"telic://runs/{run_id}/report.md")
        return str(result.contents[0].text)  # type: ignore[union-attr]

    return read


@asynccontextmanager
async def _http(url: str, **options: Any) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):

        @asynccontextmanager
        async def transport() -> AsyncIterator[Any]:
            yield streams

        async with Client(transport(), **options) as client:
            yield client


# ------------------------------------------------------------------ the form and its answer


def test_the_form_asks_the_question_with_each_choice_and_its_consequence() -> None:
    body = {
        "question": "Which one?",
        "responseChoices": [
            {"id": "a", "label": "Keep", "consequence": "The run resumes"},
            {"id": "b", "label": "Stop", "consequence": "The run is cancelled"},
        ],
    }
    message, schema = clarification_form(body)
    assert message == "Which one?\n\n- Keep: The run resumes\n- Stop: The run is cancelled"
    field = schema["properties"][CHOICE_FIELD]
    assert schema["required"] == [CHOICE_FIELD]
    assert field["type"] == "string"
    assert field["oneOf"] == [{"const": "a", "title": "Keep"}, {"const": "b", "title": "Stop"}]
    # The official SDK's own model of a single-select enum with titles accepts it.
    types.ElicitRequestFormParams(message=message, requested_schema=schema)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Elicited("accept", {CHOICE_FIELD: "a"}), "a"),
        (Elicited("accept", {CHOICE_FIELD: "zzz"}), None),
        (Elicited("accept", {CHOICE_FIELD: 1}), None),
        (Elicited("accept", None), None),
        (Elicited("decline"), None),
        (Elicited("cancel", {CHOICE_FIELD: "a"}), None),
        (Elicited("failed", problem="MCPError"), None),
    ],
)
def test_only_an_accepted_offered_choice_is_an_answer(
    answer: Elicited, expected: str | None
) -> None:
    assert read_answer(answer, ["a", "b"]) == expected


# ------------------------------------------------------------------ over stdio


async def test_an_accepted_choice_is_recorded_as_the_users_answer_over_stdio(
    repo: DemoRepository, state: Path
) -> None:
    user = User("accept", "one_based")
    params = stdio_parameters(repo.root, state)
    with anyio.fail_after(90):
        async with Client(params, mode="legacy", elicitation_callback=user) as client:
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            before = driver.version
            answered = await _ask(tools, driver)
            report = await _report(tools)(driver.run_id)
            run_id = driver.run_id
            trace = await tools.call("telic_get_trace", run_id=run_id, limit=500)
            answer = answered["elicitation"]
            message = await tools.call(
                "telic_get_artifact",
                run_id=run_id,
                artifact_id=answer["answerRef"].rsplit("/", 1)[-1],
            )
    (asked,) = user.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert asked.message.startswith("Should paginate count pages from 0 or from 1?")
    assert "- Stop here: The run is cancelled" in asked.message
    consts = [o["const"] for o in asked.requested_schema["properties"][CHOICE_FIELD]["oneOf"]]
    assert consts == ["one_based", "stop"]
    # The request was stored and answered: two versions on, back in framing.
    assert answered["run"]["version"] == before + 2
    assert answered["run"]["status"] == "running"
    assert answered["nextAction"]["phase"] == "agent_1_frame"
    assert answer["action"] == "accept"
    assert answer["answered"] is True
    assert answer["choiceId"] == "one_based"
    assert answer["requestRef"] == f"artifact://{run_id}/clar-1"
    assert "directly in the client's form" in answer["note"]
    assert message["artifact"]["body"]["content"] == "one_based"
    assert message["artifact"]["producer"] == "user"
    # Provenance: the trace says the user chose it in the form; the report says so too.
    moved = [e for e in trace["events"] if e["eventType"] == "transition_allowed"]
    assert [e["rationaleSummary"] for e in moved] == [
        f"Clarification answered with resume {ELICITED_SUMMARY}"
    ]
    # Markdown escapes the brackets of "(MCP elicitation)".
    assert ANSWER_SOURCES["elicited"].startswith("the user, in the client's form")
    assert "the user, in the client's form \\(MCP elicitation\\)" in report
    assert "## Clarifications" in report


@pytest.mark.parametrize(("action", "choice"), [("decline", None), ("cancel", None)])
async def test_a_declined_or_cancelled_form_leaves_the_run_awaiting_over_stdio(
    action: str, choice: str | None, repo: DemoRepository, state: Path
) -> None:
    user = User(action, choice)
    params = stdio_parameters(repo.root, state)
    with anyio.fail_after(90):
        async with Client(params, mode="legacy", elicitation_callback=user) as client:
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            before = driver.version
            asked = await _ask(tools, driver)
            stored = await _ledger(tools, driver.run_id)
            # Only the request was stored: no answer, no further trace event.
            assert [a["type"] for a in stored[1]][-1] == "ClarificationRequest"
            assert stored[2][-1]["eventType"] == "clarification_requested"
            # The 1.0 path still answers it, typed by the host: traced as such.
            driver.version, driver.action = asked["run"]["version"], asked["nextAction"]
            resumed = await tools.call(
                "telic_submit_artifact",
                run_id=driver.run_id,
                clarification_response="one_based",
                **driver.token(),
            )
            report = await _report(tools)(driver.run_id)
            trace = await tools.call("telic_get_trace", run_id=driver.run_id, limit=500)
    assert len(user.asked) == 1
    assert asked["run"]["version"] == before + 1
    assert asked["run"]["status"] == "awaiting_clarification"
    assert asked["nextAction"]["kind"] == "clarification"
    outcome = asked["elicitation"]
    assert outcome["action"] == action
    assert outcome["answered"] is False
    assert "choiceId" not in outcome
    assert "still awaits the clarification" in outcome["note"]
    assert "clarification_response" in outcome["note"]
    assert resumed["run"]["status"] == "running"
    summaries = [e["rationaleSummary"] for e in trace["events"]]
    assert "Clarification answered with resume" in summaries
    assert not any(ELICITED_SUMMARY in text for text in summaries)
    assert ANSWER_SOURCES["response"].startswith("the host, through clarification")
    assert "the host, through clarification" in report
    assert "the user, in the client's form" not in report


@pytest.mark.parametrize("user", [User("accept", "not-offered"), User("error")])
async def test_a_form_that_returns_no_offered_choice_changes_nothing_more(
    user: User, repo: DemoRepository, state: Path
) -> None:
    params = stdio_parameters(repo.root, state)
    with anyio.fail_after(90):
        async with Client(params, mode="legacy", elicitation_callback=user) as client:
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            asked = await _ask(tools, driver)
            stored = await _ledger(tools, driver.run_id)
            verified = await tools.call("telic_verify_run", run_id=driver.run_id)
            # A second look finds the ledger exactly as the stored request left it.
            assert await _ledger(tools, driver.run_id) == stored
    assert asked["run"]["status"] == "awaiting_clarification"
    assert stored[0] == asked["run"]
    assert [a["type"] for a in stored[1]][-1] == "ClarificationRequest"
    assert stored[2][-1]["eventType"] == "clarification_requested"
    assert verified["intact"] is True
    outcome = asked["elicitation"]
    assert outcome["answered"] is False
    expected = "failed" if user.action == "error" else "accept"
    assert outcome["action"] == expected
    if user.action == "error":
        assert outcome["problem"] == "MCPError"


async def test_a_client_without_elicitation_keeps_the_1_0_result(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(90):
        async with Client(stdio_parameters(repo.root, state), mode="legacy") as client:
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            asked = await _ask(tools, driver)
    assert sorted(asked) == ["nextAction", "ok", "run"]
    assert asked["run"]["status"] == "awaiting_clarification"


async def test_a_2026_07_28_client_is_asked_through_an_input_required_result(
    repo: DemoRepository, state: Path
) -> None:
    user = User("accept", "one_based")
    params = stdio_parameters(repo.root, state)
    with anyio.fail_after(90):
        async with Client(params, elicitation_callback=user) as client:
            assert client.session.protocol_version == "2026-07-28"
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            before = driver.version
            # The client's own multi-round-trip driver asks the user and repeats the call.
            answered = await _ask(tools, driver)
            trace = await tools.call("telic_get_trace", run_id=driver.run_id, limit=500)
    assert len(user.asked) == 1
    assert answered["elicitation"]["answered"] is True
    assert answered["run"]["version"] == before + 2
    assert answered["run"]["status"] == "running"
    summaries = [e["rationaleSummary"] for e in trace["events"]]
    assert f"Clarification answered with resume {ELICITED_SUMMARY}" in summaries


async def test_a_request_state_telic_did_not_write_is_refused_and_changes_nothing(
    repo: DemoRepository, state: Path
) -> None:
    params = stdio_parameters(repo.root, state)
    with anyio.fail_after(90):
        async with Client(params, elicitation_callback=User("accept", "one_based")) as client:
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            first = await client.session.call_tool(
                "telic_submit_artifact",
                {
                    "run_id": driver.run_id,
                    "artifact_type": "ClarificationRequest",
                    "body": _clarification(driver),
                    **driver.token(),
                },
                allow_input_required=True,
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None
            (form,) = first.input_requests.values()
            assert isinstance(form, types.ElicitRequest)
            stored = await _ledger(tools, driver.run_id)
            arguments = {
                "run_id": driver.run_id,
                "artifact_type": "ClarificationRequest",
                "body": _clarification(driver),
                **driver.token(),
            }
            answer = {"telic_clarification": types.ElicitResult(action="accept", content={})}
            with pytest.raises(MCPError, match="requestState is not one Telic returned"):
                await client.session.call_tool(
                    "telic_submit_artifact",
                    arguments,
                    input_responses=answer,  # type: ignore[arg-type]
                    request_state='["telic.clarification.v1","x"]',
                    allow_input_required=True,
                )
            assert await _ledger(tools, driver.run_id) == stored
    assert stored[0]["status"] == "awaiting_clarification"
    assert stored[2][-1]["eventType"] == "clarification_requested"


# ------------------------------------------------------------------ over streamable HTTP


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(("action", "choice"), [("accept", "stop"), ("decline", None)])
async def test_the_form_works_over_streamable_http(
    action: str, choice: str | None, mode: str, repo: DemoRepository, state: Path
) -> None:
    user = User(action, choice)
    with anyio.fail_after(90):
        async with (
            http_server(repo.root, state) as url,
            _http(url, mode=mode, elicitation_callback=user) as client,
        ):
            expected = "2026-07-28" if mode == "auto" else "2025-11-25"
            assert client.session.protocol_version == expected
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            asked = await _ask(tools, driver)
            trace = await tools.call("telic_get_trace", run_id=driver.run_id, limit=500)
            async with httpx2.AsyncClient() as http:
                page = await http.get(f"{url.removesuffix('/mcp')}/runs/{driver.run_id}")
    assert len(user.asked) == 1
    # The HTML report says who answered: the user in the form, or nobody yet.
    answered_by = "elicited" if action == "accept" else "pending"
    assert f'<span class="answered-{answered_by}">' in page.text
    outcome = asked["elicitation"]
    summaries = [e["rationaleSummary"] for e in trace["events"]]
    if action == "accept":
        # The user chose to stop: the run is cancelled, and the trace says who chose it.
        assert outcome["answered"] is True
        assert asked["run"]["status"] == "cancelled"
        assert asked["nextAction"]["kind"] == "terminal"
        assert f"Clarification answered with cancel {ELICITED_SUMMARY}" in summaries
    else:
        assert outcome["answered"] is False
        assert asked["run"]["status"] == "awaiting_clarification"
        assert not any(ELICITED_SUMMARY in text for text in summaries)
