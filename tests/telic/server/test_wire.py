"""A host written for Telic 1.0 reads every result of ours by the original's key names.

``WireHost`` checks each result of the nine Telic 1.0 tools against the committed shapes of the
original's results (``wire_shapes.json``; see ``wire.py``): same keys, same places, same JSON
types. A renamed, flattened or moved key fails here. Over stdio and HTTP the same host drives
real ``telic serve`` processes (``test_stdio.py``, ``test_http.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from telic.demo import MODES, DemoRepository, drive_mode
from telic.roles import open_service
from telic.server import build_server
from tests.telic.server.wire import WireHost, fixture, mismatches, shape

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"


@asynccontextmanager
async def _host(repo: DemoRepository, state: Path) -> AsyncIterator[WireHost]:
    async with (
        open_service(database_url="memory://", repository_root=repo.root, state_dir=state) as svc,
        Client(build_server(svc), mode="legacy") as client,
    ):
        yield WireHost(client)


@pytest.mark.parametrize("mode", MODES)
async def test_every_result_of_a_run_has_the_telic_1_0_shape(
    mode: str, repo: DemoRepository, state: Path
) -> None:
    async with _host(repo, state) as host:
        driver = await drive_mode(host, mode, repo, request=REQUEST, goal="Fix paginate")
        assert driver.action["status"] == "completed"
        await host.read_path(driver.run_id, REQUEST, mode)
    assert host.problems == []
    checked = set(host.checked)
    assert {"telic_start_run", "telic_ground_context", "telic_cancel_run"} <= checked
    assert "telic_get_run (unknown run: a tool error)" in checked
    if mode in ("analyze_only", "fix_only", "analyze_and_fix"):
        assert "telic_submit_artifact:Evidence (identical replay)" in checked


async def test_the_run_record_keeps_its_counters_inside_budgets(
    repo: DemoRepository, state: Path
) -> None:
    async with _host(repo, state) as host:
        started = await host.call("telic_start_run", original_request=REQUEST, mode="fix_only")
    run = started["run"]
    budgets = {"promptRevisionsRemaining": 1, "postExecutionRemediationsRemaining": 1}
    assert run["budgets"] == budgets
    assert "promptRevisionsRemaining" not in run
    assert "controllerState" not in run


async def test_an_identical_supporting_replay_returns_the_stored_metadata_and_writes_nothing(
    repo: DemoRepository, state: Path
) -> None:
    async with _host(repo, state) as host:
        driver = await drive_mode(host, "analyze_only", repo, request=REQUEST, goal="Find it")
        trace = await host.call("telic_get_trace", run_id=driver.run_id, limit=500)
    evidence = f"artifact://{driver.run_id}/evidence-1"
    stored = [e for e in trace["events"] if evidence in e["outputRefs"]]
    assert len(stored) == 1  # the replay WireHost made stored nothing more
    assert host.checked["telic_submit_artifact:Evidence (identical replay)"] == 1


def test_a_renamed_or_moved_key_is_a_mismatch() -> None:
    expected = fixture()["results"]["telic_get_run"]
    good: dict[str, Any] = {
        "ok": True,
        "run": {
            "runId": "r",
            "schemaVersion": "1.0",
            "repositoryRoot": "/r",
            "requestedMode": "analyze_only",
            "status": "running",
            "phase": "context_grounding",
            "resumePhase": None,
            "version": 1,
            "budgets": {"promptRevisionsRemaining": 1, "postExecutionRemediationsRemaining": 1},
            "outcomeHint": None,
            "createdAt": "t",
            "updatedAt": "t",
        },
        "artifacts": [
            {
                "id": "a",
                "runId": "r",
                "type": "UserMessage",
                "schemaVersion": "1.0",
                "producer": "user",
                "sha256": "sha256:x",
                "sourceRefs": ["artifact://r/a"],
                "redaction": "none",
                "createdAt": "t",
            }
        ],
        "nextAction": {},
    }
    assert mismatches(expected, shape(good)) == []
    renamed = json.loads(json.dumps(good))
    renamed["artifacts"][0]["artifactId"] = renamed["artifacts"][0].pop("id")
    flattened = json.loads(json.dumps(good))
    flattened["run"] |= flattened["run"].pop("budgets")
    retyped = json.loads(json.dumps(good))
    retyped["run"]["version"] = "1"
    assert mismatches(expected, shape(renamed)) == ["missing artifacts[].id (string)"]
    assert "missing run.budgets (object)" in mismatches(expected, shape(flattened))
    retyped_problems = mismatches(expected, shape(retyped))
    assert retyped_problems == ["run.version: string where Telic 1.0 has number"]


def test_the_fixture_covers_every_telic_1_0_tool() -> None:
    calls = {key.split(":")[0].split(" ")[0] for key in fixture()["results"]}
    assert calls == {
        "telic_start_run",
        "telic_ground_context",
        "telic_get_next_action",
        "telic_submit_artifact",
        "telic_cancel_run",
        "telic_list_runs",
        "telic_get_run",
        "telic_get_artifact",
        "telic_get_trace",
    }
