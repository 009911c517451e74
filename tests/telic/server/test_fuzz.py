"""Hypothesis throws valid-looking and hostile arguments at every tool, in process.

Every call must come back as a well-formed envelope — never a transport error or a traceback —
and a rejected call must leave the ledger exactly as it was (runs, versions, trace lengths).
``TELIC_FUZZ_EXAMPLES`` sets the number of examples (``make fuzz`` raises it). The server runs
on asyncio, as ``telic serve`` does: the tools' answers do not depend on the backend.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, get_args

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import Client
from mcp_types import CallToolResult

from telic.demo import DemoRepository, find_demo_repo
from telic.protocol._types import CAPABILITIES, ArtifactType
from telic.roles import open_service
from telic.server import TOOL_NAMES, build_server

EXAMPLES = int(os.environ.get("TELIC_FUZZ_EXAMPLES", "1100"))

IDS = st.one_of(
    st.text(min_size=0, max_size=140),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True),
    st.sampled_from(["", " ", "../../etc/passwd", "a" * 129, "\u202e\u0000x", "run:1"]),
)
UNICODE = st.sampled_from(
    ["", "\u0000", "\ud7ff", "\U0001f600" * 50, "\u202e", "\ufeff", "é" * 300, "\r\n\t"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=50),
    UNICODE,
)
JSONS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)
HUGE = st.integers(min_value=32_769, max_value=2_200_000).map(lambda n: "x" * n)


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"a": [value]}
    return value


# Deeper bodies fail in the client's own serializer (pydantic caps depth), before any server.
DEEP = st.integers(min_value=20, max_value=100).map(_deep)
HOSTILE_VALUE = st.one_of(JSONS, HUGE, DEEP, UNICODE)


class Target:
    """A server with one grounded run, and the portal its event loop runs in."""

    def __init__(self, portal: BlockingPortal, client: Client, service: Any, run_id: str) -> None:
        self.portal = portal
        self.client = client
        self.service = service
        self.run_id = run_id

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.portal.call(self.client.call_tool, tool, arguments)

    def snapshot(self) -> tuple[Any, ...]:
        async def take() -> tuple[Any, ...]:
            runs = await self.service.list_runs(100)
            lengths = []
            for run in runs:
                page = await self.service.get_trace(run.run_id, 0, 500)
                lengths.append(len(page.events))
            return tuple((r.run_id, r.version, r.status) for r in runs), tuple(lengths)

        return self.portal.call(take)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    base = tmp_path_factory.mktemp("fuzz")
    repo = DemoRepository.create(find_demo_repo(), base / "repo")
    with start_blocking_portal("asyncio") as portal, ExitStack() as stack:
        service = stack.enter_context(
            portal.wrap_async_context_manager(
                open_service(
                    database_url="memory://", repository_root=repo.root, state_dir=base / "state"
                )
            )
        )
        client = stack.enter_context(
            portal.wrap_async_context_manager(Client(build_server(service)))
        )
        started = portal.call(
            client.call_tool,
            "telic_start_run",
            {"original_request": "Fix paginate in src/pagination.py", "mode": "analyze_only"},
        )
        run = started.structured_content
        assert run is not None
        assert run["ok"], run
        grounded = portal.call(
            client.call_tool,
            "telic_ground_context",
            {
                "run_id": run["run"]["runId"],
                "action_id": run["nextAction"]["id"],
                "expected_run_version": 1,
            },
        )
        assert grounded.structured_content is not None
        assert grounded.structured_content["ok"]
        yield Target(portal, client, service, run["run"]["runId"])


def _valid_looking(run_id: str) -> st.SearchStrategy[dict[str, Any]]:
    run = st.one_of(st.just(run_id), IDS)
    token = {
        "run_id": run,
        "action_id": st.one_of(st.just(f"action:{run_id}:2"), st.just(f"action:{run_id}:9"), IDS),
        "expected_run_version": st.one_of(st.integers(-3, 12), st.booleans(), st.text(max_size=3)),
    }
    body = st.one_of(
        JSONS,
        st.fixed_dictionaries(
            {"id": IDS, "runId": run, "schemaVersion": st.sampled_from(["1.0", "2", ""])},
            optional={"content": JSONS, "kind": st.text(max_size=10), "nodes": JSONS},
        ),
    )
    return st.one_of(
        st.fixed_dictionaries(
            {
                "original_request": st.one_of(st.text(max_size=40), HUGE),
                "mode": st.text(max_size=20),
            },
            optional={
                "host_capabilities": st.lists(st.sampled_from([*CAPABILITIES, "root"]), max_size=4),
                "authorization_granted": st.one_of(st.none(), st.lists(st.text(max_size=20))),
                "network_read_domains": st.lists(st.text(max_size=300), max_size=3),
                "cast_types": JSONS,
            },
        ),
        st.fixed_dictionaries(
            token,
            optional={
                "artifact_type": st.sampled_from([*get_args(ArtifactType), "UserMessage", "x"]),
                "body": body,
                "body_json": st.one_of(body.map(json.dumps), st.text(max_size=30)),
                "source_refs": st.lists(st.text(max_size=40), max_size=3),
                "clarification_response": st.text(max_size=20),
                "active_paths": st.lists(st.text(max_size=30), max_size=3),
                "budget": JSONS,
            },
        ),
        st.fixed_dictionaries(
            {"run_id": run},
            optional={
                "limit": st.one_of(st.integers(-5, 600), st.text(max_size=3)),
                "after_sequence": st.integers(-5, 50),
                "artifact_id": IDS,
                "capability": st.sampled_from([*CAPABILITIES, "nope"]),
                "target": st.one_of(st.text(max_size=50), HUGE),
                "cast_id": IDS,
                "cast_type": st.text(max_size=20),
                "routing": JSONS,
                "budget": JSONS,
                "brief": st.text(max_size=30),
                "packet": JSONS,
                "turns": st.integers(-2, 10),
            },
        ),
    )


HOSTILE = st.dictionaries(st.one_of(st.text(max_size=30), UNICODE), HOSTILE_VALUE, max_size=6)


def _check_envelope(result: CallToolResult) -> dict[str, Any]:
    envelope = result.structured_content
    assert isinstance(envelope, dict), result
    assert envelope["ok"] is (not result.is_error)
    (content,) = result.content
    assert json.loads(content.text) == envelope  # type: ignore[union-attr]
    if not envelope["ok"]:
        # A schema_violation of telic_submit_artifact also carries the type's full schema.
        allowed = {"ok", "error", "code", "issues", "rules", "requiredOutputSchema"}
        assert set(envelope) <= allowed
        if "requiredOutputSchema" in envelope:
            assert envelope["code"] == "schema_violation"
        assert isinstance(envelope["error"], str)
        assert len(envelope["error"]) <= 800
        assert not any(c in envelope["error"] for c in "\r\n\t")
        assert "Traceback" not in envelope["error"]
        assert isinstance(envelope["code"], str)
        assert envelope["code"]
        for issue in envelope.get("issues", []):
            assert set(issue) <= {"path", "code", "message", "rule"}
            assert len(issue["message"]) <= 400
        assert len(envelope.get("issues", [])) <= 32
    return envelope


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(data=st.data())
def test_every_call_returns_an_envelope_and_rejections_change_nothing(
    target: Target, data: st.DataObject
) -> None:
    tool = data.draw(st.sampled_from(TOOL_NAMES), label="tool")
    arguments = data.draw(st.one_of(_valid_looking(target.run_id), HOSTILE), label="arguments")
    before = target.snapshot()
    envelope = _check_envelope(target.call(tool, arguments))
    if not envelope["ok"]:
        assert target.snapshot() == before, (tool, envelope)


def test_the_fuzzed_server_still_serves(target: Target) -> None:
    envelope = _check_envelope(target.call("telic_get_run", {"run_id": target.run_id}))
    assert envelope["ok"]
