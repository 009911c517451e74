"""What a host model sees over MCP before and after it errs: small refusals without needless
schema, the phase's boundary beside every phase nextAction, and readable role instructions."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from telic.controller import role_rules
from telic.demo import DemoRepository, RunDriver, TelicTools, criterion, permissions, verification
from telic.roles import open_service
from telic.server import build_server

pytestmark = pytest.mark.anyio
REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"
_SEMANTIC_LIMIT = 2048


@asynccontextmanager
async def _tools(repo: DemoRepository, state: Path) -> AsyncIterator[tuple[TelicTools, Client]]:
    async with (
        open_service(
            database_url="memory://", repository_root=repo.root, state_dir=state
        ) as service,
        Client(build_server(service), mode="legacy") as client,
    ):
        yield TelicTools(client), client


async def _framed(tools: TelicTools) -> RunDriver:
    """An analyze_only run grounded, framed and compiled: the PromptReview is next."""
    driver = await RunDriver.start(tools, "analyze_only", REQUEST, "Find the cause")
    b = driver.bodies
    b.criteria = [criterion("AC-1", "completion", "The cause of the bug is identified")]
    b.verifications = [verification("VR-1", "completion", "Read the failing code and test")]
    b.permissions = permissions(read=["**"])
    await driver.ground()
    await driver.submit("ProblemFrame", b.frame())
    await driver.submit("TaskContract", b.contract())
    return driver


async def _refused(driver: RunDriver, artifact_type: str, body: dict[str, Any]) -> dict[str, Any]:
    envelope = await driver.tools.attempt(
        "telic_submit_artifact",
        run_id=driver.run_id,
        artifact_type=artifact_type,
        body=body,
        **driver.token(),
    )
    assert envelope["ok"] is False
    return envelope


def _size(envelope: dict[str, Any]) -> int:
    return len(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode())


async def _version(driver: RunDriver) -> int:
    run = await driver.tools.call("telic_get_run", run_id=driver.run_id)
    return int(run["run"]["version"])


async def test_semantic_refusals_carry_no_schema_stay_small_and_change_nothing(
    repo: DemoRepository, state: Path
) -> None:
    async with _tools(repo, state) as (tools, _):
        driver = await _framed(tools)
        b = driver.bodies
        before = await _version(driver)
        partial = copy.deepcopy(b.prompt_review())
        partial["coverage"][0]["status"] = "partial"  # a pass needs all of it covered
        model_rule = await _refused(driver, "PromptReview", partial)
        dropped = copy.deepcopy(b.prompt_review())
        dropped["coverage"] = dropped["coverage"][:2]  # PR-COVERAGE: exactly three entries
        controller_rule = await _refused(driver, "PromptReview", dropped)
        unchanged = await _version(driver)
        await driver.submit("PromptReview", b.prompt_review())
        await driver.submit(
            "WorkPlan",
            b.plan("plan-1", [b.node("diagnose", ["AC-1"], ["repository.read"], b.permissions)]),
        )
        await driver.submit("Evidence", b.evidence("evidence-1", "tool_output", "Output", "ok"))
        read = b.action("A-1", "repository.read", "src", ["evidence-1"], "Read the code.")
        result = b.result(
            "result-1",
            "plan-1",
            "diagnose",
            actions=[read],
            evidence=["evidence-1"],
            criteria=["AC-1"],
        )
        await driver.submit("WorkResult", result)
        reviewed = await _version(driver)
        evidence = ["evidence-1"]
        review = b.quality_review(
            "qr-1", "plan-1", ["result-1"], "pass", [("AC-1", evidence)], [("VR-1", evidence)]
        )
        review["acceptanceResults"][0]["status"] = "fail"
        unpassed = await _refused(driver, "QualityReview", review)
        after = await _version(driver)
    assert model_rule["issues"][0]["code"] == "pass_without_full_coverage"
    assert controller_rule["rules"] == ["PR-COVERAGE"]
    assert "pass_with_unpassed_criterion" in {i["code"] for i in unpassed["issues"]}
    for envelope in (model_rule, controller_rule, unpassed):
        assert "requiredOutputSchema" not in envelope
        assert _size(envelope) < _SEMANTIC_LIMIT, envelope
    assert before == unchanged
    assert reviewed == after


async def test_a_structural_refusal_carries_only_the_failing_sub_schema(
    repo: DemoRepository, state: Path
) -> None:
    async with _tools(repo, state) as (tools, _):
        driver = await _framed(tools)
        before = await _version(driver)
        review = driver.bodies.prompt_review()
        review["coverage"][0]["status"] = "done"  # not one of covered|partial|missing
        refused = await _refused(driver, "PromptReview", review)
        after = await _version(driver)
    sent = refused["requiredOutputSchema"]
    assert sent["$ref"] == "telic://schemas/PromptReview"
    assert sent["x-telic-failing"] == {
        "coverage[].status": {"enum": ["covered", "partial", "missing"], "type": "string"}
    }
    assert _size(refused) < _SEMANTIC_LIMIT
    assert before == after


async def test_a_phase_next_action_has_its_boundary_beside_it_when_a_scope_cannot_say_it(
    repo: DemoRepository, state: Path
) -> None:
    async with _tools(repo, state) as (tools, _):
        started = await tools.call("telic_start_run", original_request=REQUEST, mode="analyze_only")
        grounded = await tools.call(
            "telic_ground_context",
            run_id=started["run"]["runId"],
            action_id=started["nextAction"]["id"],
            expected_run_version=1,
        )
        again = await tools.call("telic_get_next_action", run_id=started["run"]["runId"])
    for envelope in (started, grounded, again):
        assert "boundary" not in envelope["nextAction"]  # the NextAction keeps 1.0's schema
        read = envelope["nextAction"]["effectivePermissions"]["repository"]["read"]
        if read:  # the scope says it all: no line, and no key for no line
            assert "boundary" not in envelope
        else:
            keys = list(envelope)
            assert keys.index("boundary") == keys.index("nextAction") + 1
            assert envelope["boundary"]["repository.read"] == "None: no native file reads."


async def test_the_instruction_ref_resolves_as_a_resource_and_get_artifact_says_where(
    repo: DemoRepository, state: Path
) -> None:
    async with _tools(repo, state) as (tools, client):
        started = await tools.call("telic_start_run", original_request=REQUEST, mode="analyze_only")
        run_id = started["run"]["runId"]
        grounded = await tools.call(
            "telic_ground_context",
            run_id=run_id,
            action_id=started["nextAction"]["id"],
            expected_run_version=1,
        )
        ref = grounded["nextAction"]["instructionRef"]
        templates = await client.list_resource_templates()
        read = await client.read_resource(ref)
        asked = await tools.attempt("telic_get_artifact", run_id=run_id, artifact_id=ref)
    assert ref == "artifact://system/roles/scenario_author-v1"
    uris = {t.uri_template for t in templates.resource_templates}
    assert "artifact://system/roles/{role}-v1" in uris
    (content,) = read.contents
    text = content.text  # type: ignore[union-attr]
    assert content.mime_type == "text/markdown"
    assert "submit ProblemFrame" in text
    assert "submit PromptReview" in text
    for path, statement in role_rules("PromptReview"):
        assert f"- {path}: {statement}" in text
    assert asked["ok"] is False
    assert asked["code"] == "not_found"
    assert "read it as the MCP resource of that exact URI" in asked["error"]
