"""The assembled server in process: each artifact schema once per session, and the schema resource.

A legacy-mode client holds one connection (one MCP session); the default in-process client
speaks the 2026-07-28 protocol, where every request stands alone and so has no session.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.client.client import ConnectMode
from mcp.shared.exceptions import MCPError

from telic.demo import DemoRepository, TelicTools
from telic.roles import Service, open_service
from telic.server import build_server
from telic.server._schemas import (
    NOTATION_KEY,
    SchemaMode,
    SentSchemas,
    Stream,
    emitted_schema,
    inline,
    schema_reference,
)

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


@asynccontextmanager
async def _service(repo: DemoRepository, state: Path) -> AsyncIterator[Service]:
    async with open_service(
        database_url="memory://", repository_root=repo.root, state_dir=state
    ) as service:
        yield service


@asynccontextmanager
async def _client(
    repo: DemoRepository, state: Path, *, schemas: SchemaMode = "once", mode: ConnectMode = "legacy"
) -> AsyncIterator[Client]:
    """A client of a fresh server; ``legacy`` keeps one session, ``auto`` has none in process."""
    async with (
        _service(repo, state) as service,
        Client(build_server(service, schemas=schemas), mode=mode) as client,
    ):
        yield client


async def _grounded(tools: TelicTools) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start an analyze_only run and ground it; return both envelopes."""
    started = await tools.call("telic_start_run", original_request=REQUEST, mode="analyze_only")
    grounded = await tools.call(
        "telic_ground_context",
        run_id=started["run"]["runId"],
        action_id=started["nextAction"]["id"],
        expected_run_version=1,
    )
    return started, grounded


def _schemas(envelope: dict[str, Any]) -> tuple[Any, Any]:
    action = envelope["nextAction"]
    return action["requiredOutputSchema"], action["additionalOutputSchemas"]


def _is_compact(schema: Any, kind: str) -> bool:
    return set(schema) == {"$ref", NOTATION_KEY} and schema["$ref"] == f"telic://schemas/{kind}"


async def test_a_session_following_drafts_is_pointed_at_schemas_it_need_not_read(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        tools = TelicTools(client)
        started, grounded = await _grounded(tools)
        again = await tools.call("telic_get_next_action", run_id=started["run"]["runId"])
    # Grounding is Telic's step: the host writes nothing yet, so every schema is a reference
    # (the framing result's draft, and its clarification draft under `instead`, follow).
    assert _schemas(started) == (
        schema_reference("ContextManifest"),
        {"ClarificationRequest": schema_reference("ClarificationRequest")},
    )
    # The framing result carries a ProblemFrame draft: its type text is withheld, a bare $ref.
    assert "draft" in grounded
    assert [d["type"] for d in grounded["draft"]["instead"]] == ["ClarificationRequest"]
    required, additional = _schemas(grounded)
    assert required == schema_reference("ProblemFrame")
    assert additional == {"ClarificationRequest": schema_reference("ClarificationRequest")}
    required, additional = _schemas(again)
    assert required == {"$ref": "telic://schemas/ProblemFrame"}
    assert additional == {"ClarificationRequest": schema_reference("ClarificationRequest")}
    jsonschema.Draft202012Validator.check_schema(required)


async def test_two_sessions_on_one_server_each_get_the_schema_in_full_once(
    repo: DemoRepository, state: Path
) -> None:
    async with _service(repo, state) as service:
        server = build_server(service)
        async with (
            Client(server, mode="legacy") as one,
            Client(server, mode="legacy") as two,
        ):
            first, second = TelicTools(one), TelicTools(two)
            mine, _ = await _grounded(first)
            theirs, _ = await _grounded(second)
            run_id = theirs["run"]["runId"]
            repeated = await second.call("telic_get_next_action", run_id=run_id)
    # Each session is sent the clarification's draft in its own framing result.
    assert _schemas(mine)[1] == _schemas(theirs)[1]
    assert _schemas(repeated)[0] == schema_reference("ProblemFrame")


def _result(
    action_id: str, covered: set[str] | None = None, kept: set[str] | None = None
) -> tuple[object, object]:
    """A result's NextAction and draft (``None`` without ``covered``), as far as schemas read."""
    action = SimpleNamespace(id=action_id, required_output_type="ProblemFrame")
    if covered is None:
        return action, None
    instead = tuple(SimpleNamespace(type=kind) for kind in kept or ())
    return action, SimpleNamespace(covered=frozenset(covered), instead=instead)


def test_a_type_an_instead_draft_writes_counts_as_sent() -> None:
    """The clarification drafted under `instead` while framing stays in the session's view:
    later results point at its schema; a type only drafted (not kept) is still sent later."""
    sent, session = SentSchemas("once"), Stream()
    framing = sent.emitter(
        session,
        *_result("action-2", {"ProblemFrame", "ClarificationRequest"}, {"ClarificationRequest"}),
    )
    assert framing("ClarificationRequest") == schema_reference("ClarificationRequest")
    framing.commit()
    later = sent.emitter(session, *_result("action-3", {"TaskContract"}))
    assert later("ClarificationRequest") == schema_reference("ClarificationRequest")
    assert _is_compact(later("ProblemFrame"), "ProblemFrame")
    unkept = SentSchemas("once")
    unkept.emitter(session, *_result("action-2", {"ClarificationRequest"})).commit()
    assert _is_compact(
        unkept.emitter(session, *_result("action-3"))("ClarificationRequest"),
        "ClarificationRequest",
    )


def test_a_drafted_type_is_withheld_and_not_marked_sent() -> None:
    """A type a draft covers is a bare $ref; its text comes with the first result without
    one, and a result for the same NextAction as the held draft withholds it too."""
    sent = SentSchemas("once")
    session = Stream()
    drafted = sent.emitter(session, *_result("action-1", {"ProblemFrame"}))
    assert drafted("ProblemFrame") == schema_reference("ProblemFrame")
    drafted.commit()
    held = sent.emitter(session, *_result("action-1"))  # an acknowledged Evidence, same action
    assert held("ProblemFrame") == schema_reference("ProblemFrame")
    held.commit()
    later = sent.emitter(session, *_result("action-2"))
    assert _is_compact(later("ProblemFrame"), "ProblemFrame")
    later.commit()
    assert sent.emitter(session, *_result("action-3"))("ProblemFrame") == schema_reference(
        "ProblemFrame"
    )
    full = SentSchemas("full").emitter(session, *_result("action-1", {"ProblemFrame"}))
    assert full("ProblemFrame") == emitted_schema("ProblemFrame")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_full_mode_carries_every_schema_in_full_in_either_protocol_era(
    mode: ConnectMode, repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state, schemas="full", mode=mode) as client:
        tools = TelicTools(client)
        started, grounded = await _grounded(tools)
        again = await tools.call("telic_get_next_action", run_id=started["run"]["runId"])
    full = emitted_schema("ClarificationRequest")
    assert _schemas(started) == (emitted_schema("ContextManifest"), {"ClarificationRequest": full})
    assert _schemas(grounded) == _schemas(again)
    assert _schemas(again) == (emitted_schema("ProblemFrame"), {"ClarificationRequest": full})


async def test_a_connection_of_the_2026_era_is_one_session_like_a_stdio_stream(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state, mode="auto") as client:
        tools = TelicTools(client)
        started, _ = await _grounded(tools)
        again = await tools.call("telic_get_next_action", run_id=started["run"]["runId"])
    # Outside a session every result carries its schemas in full (the test above); the stream
    # is one session, so the drafted and Telic-written steps point at the resources instead.
    reference = {"ClarificationRequest": schema_reference("ClarificationRequest")}
    assert _schemas(started)[1] == _schemas(again)[1] == reference
    async with _client(repo, state, mode="auto") as fresh:
        first = await TelicTools(fresh).call(
            "telic_start_run", original_request=REQUEST, mode="plan_only"
        )
    assert _schemas(first)[1] == reference


async def test_the_schema_resource_returns_the_full_schema_and_refuses_unknown_types(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state, mode="auto") as client:
        templates = await client.list_resource_templates()
        read = await client.read_resource("telic://schemas/QualityReview")
        manifest = await client.read_resource("telic://schemas/ContextManifest")
        with pytest.raises(MCPError, match="NoSuchType") as refused:
            await client.read_resource("telic://schemas/NoSuchType")
        with pytest.raises(MCPError, match="RunEnvelope"):
            await client.read_resource("telic://schemas/RunEnvelope")
    (template,) = [t for t in templates.resource_templates if t.name == "artifact_schema"]
    assert template.uri_template == "telic://schemas/{artifact_type}"
    assert template.mime_type == "application/schema+json"
    (content,) = read.contents
    assert content.mime_type == "application/schema+json"
    assert json.loads(content.text) == emitted_schema("QualityReview")  # type: ignore[union-attr]
    assert json.loads(manifest.contents[0].text) == emitted_schema("ContextManifest")  # type: ignore[union-attr]
    assert "ProblemFrame" in str(refused.value)


async def test_a_structural_refusal_gets_only_the_failing_subschemas_and_no_other_refusal_any(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        tools = TelicTools(client)
        _, grounded = await _grounded(tools)
        run_id = grounded["run"]["runId"]
        token = {"action_id": grounded["nextAction"]["id"], "expected_run_version": 2}
        invalid = await tools.attempt(
            "telic_submit_artifact",
            run_id=run_id,
            artifact_type="ProblemFrame",
            body={"id": "frame-1", "runId": run_id, "schemaVersion": "1.0"},
            **token,
        )
        unparsable = await tools.attempt(
            "telic_submit_artifact",
            run_id=run_id,
            artifact_type="ProblemFrame",
            body_json="{not json",
            **token,
        )
        stale = await tools.attempt(
            "telic_submit_artifact",
            run_id=run_id,
            artifact_type="ProblemFrame",
            body={"id": "frame-1", "runId": run_id, "schemaVersion": "1.0"},
            action_id=grounded["nextAction"]["id"],
            expected_run_version=9,
        )
        after = await tools.call("telic_get_run", run_id=run_id)
    assert invalid["code"] == unparsable["code"] == "schema_violation"
    missing = {issue["path"] for issue in invalid["issues"]}
    assert "goal" in missing
    sent = invalid["requiredOutputSchema"]
    assert sent["$ref"] == "telic://schemas/ProblemFrame"  # the whole schema is never re-sent
    assert set(sent["x-telic-failing"]) == missing
    properties = inline(emitted_schema("ProblemFrame"))["properties"]
    assert sent["x-telic-failing"]["goal"] == properties["goal"]
    # Text that is not JSON is not a schema problem: the refusal says so and carries none.
    assert "requiredOutputSchema" not in unparsable
    assert stale["code"] == "stale_token"
    assert "requiredOutputSchema" not in stale
    assert after["run"]["version"] == 2


async def test_a_body_json_with_a_repeated_key_is_refused_and_changes_nothing(
    repo: DemoRepository, state: Path
) -> None:
    async with _client(repo, state) as client:
        tools = TelicTools(client)
        _, grounded = await _grounded(tools)
        run_id = grounded["run"]["runId"]
        before = await tools.call("telic_get_trace", run_id=run_id, limit=500)
        refused = await tools.attempt(
            "telic_submit_artifact",
            run_id=run_id,
            artifact_type="ProblemFrame",
            body_json='{"id": "frame-1", "id": "frame-2"}',
            action_id=grounded["nextAction"]["id"],
            expected_run_version=2,
        )
        after = await tools.call("telic_get_run", run_id=run_id)
        trace = await tools.call("telic_get_trace", run_id=run_id, limit=500)
    assert refused["code"] == "schema_violation"
    assert refused["issues"][0]["code"] == "duplicate_key"
    assert after["run"]["version"] == 2
    assert trace == before
