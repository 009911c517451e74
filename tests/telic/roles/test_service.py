"""The service runs the nine core operations end to end, every state change through actors."""

from __future__ import annotations

from pathlib import Path

import pytest

from telic import ContextSecurityError, LimitExceeded, NotFound, SchemaViolation, StaleToken
from telic.roles import open_service

from .kit import EXPLORE, VERIFY_READ, ServiceFlow, serving, spawn_perms

pytestmark = pytest.mark.anyio


async def test_the_nine_operations_work_end_to_end_through_the_run_actor(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        run_id = flow.b.run_id
        grounded = await flow.ground()
        assert grounded.manifest_wire["runId"] == run_id
        assert (await service.get_next_action(run_id)).phase == "agent_1_frame"
        await flow.submit("ProblemFrame", flow.b.frame())
        details = await service.get_run(run_id)
        assert details.run.version == 3
        frame = await service.get_artifact(run_id, "frame-1")
        assert frame.body["id"] == "frame-1"
        assert [r.run_id for r in await service.list_runs()] == [run_id]
        trace = await service.get_trace(run_id, limit=500)
        assert [e.event_type for e in trace.events][:1] == ["run_started"]
        cancelled = await service.cancel_run(run_id, *flow.token())
        assert cancelled.run.status == "cancelled"
        assert (await service.verify_run(run_id)).ok
        statistics = service.mailbox_statistics(run_id)
        assert statistics is not None
        assert statistics.delivered == 3  # ground, submit, cancel: each a message


async def test_a_clarification_answer_travels_through_the_run_actor(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        await flow.submit("ClarificationRequest", flow.b.clarification())
        flow.last = await service.answer_clarification(flow.b.run_id, *flow.token(), "keep")
        assert flow.last.run.status == "running"
        assert flow.last.next_action.phase == "agent_1_frame"


async def test_a_large_body_travels_to_the_role_actor_by_reference(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        goal = "Find the retry limit. " * 1_000
        await flow.submit("ProblemFrame", flow.b.frame(goal=goal))
        assert flow.version == 3
        stored = await ledger.list_artifacts(flow.b.run_id)
        frame = next(a for a in stored if a.type == "ProblemFrame")
        assert frame.size_bytes > 20_000


async def test_a_body_over_the_artifact_limit_is_refused_by_type_without_change(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, ledger):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        before = await ledger.get_run(flow.b.run_id)
        with pytest.raises(SchemaViolation) as refused:
            await flow.submit("ProblemFrame", flow.b.frame(goal="x" * (2 * 1024 * 1024)))
        assert refused.value.issues[0].code == "artifact_too_large"
        assert await ledger.get_run(flow.b.run_id) == before


async def test_an_oversized_call_is_refused_as_a_limit_without_change(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        with pytest.raises(LimitExceeded):
            await service.cancel_run(flow.b.run_id, "a" * 129, 1)
        assert (await service.get_run(flow.b.run_id)).run.version == 1


async def test_a_stale_token_is_rejected_by_the_role_actor_without_change(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        with pytest.raises(StaleToken):
            await service.submit_artifact(
                flow.b.run_id, flow.token()[0], 1, "ProblemFrame", flow.b.frame()
            )
        assert (await service.get_run(flow.b.run_id)).run.version == 2


async def test_an_unknown_run_is_not_found_and_starts_no_actor(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        with pytest.raises(NotFound):
            await service.cancel_run("no-such-run", "action:no-such-run:1", 1)
        assert service.active_runs == ()


async def test_an_idle_run_actor_is_stopped_and_started_again_on_demand(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        assert service.active_runs == (flow.b.run_id,)
        assert await service.reap_idle() == 1
        assert service.active_runs == ()
        await flow.submit("ProblemFrame", flow.b.frame())
        assert service.active_runs == (flow.b.run_id,)
        assert flow.version == 3


async def test_a_pre_action_check_is_decided_and_traced(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        run_id = flow.b.run_id
        allowed = await service.check_tool_action(run_id, "repository.read", "src/retry.py")
        assert allowed.allowed
        denied = await service.check_tool_action(run_id, "repository.write", "src/retry.py")
        assert not denied.allowed
        unknown = await service.check_tool_action(run_id, "teleport", None)
        assert unknown.code == "unknown_capability"
        trace = await service.get_trace(run_id, limit=500)
        checked = [e for e in trace.events if e.event_type == "permission_checked"]
        assert [e.permission_decision.decision for e in checked] == ["allow", "deny"]
        assert (await service.get_run(run_id)).run.version == 1


async def test_the_server_configuration_file_enables_cast_types(tmp_path: Path) -> None:
    (tmp_path / "telic.toml").write_text(
        '[[cast_types]]\ncastType = "explore"\nenabled = true\nceilingTurns = 10\n'
        'ceilingTokens = 50000\nallowedNeedCodes = ["locate"]\n',
        encoding="utf-8",
    )
    async with serving(tmp_path) as (service, _):
        assert [t.cast_type for t in service.server_cast_types] == ["explore"]


async def test_a_configuration_inside_the_repository_is_refused(tmp_path: Path) -> None:
    inside = tmp_path / "repo" / ".telic"
    inside.mkdir(parents=True)
    with pytest.raises(ContextSecurityError):
        async with open_service(
            database_url="memory://", repository_root=tmp_path / "repo", state_dir=inside
        ):
            pass


async def test_start_run_stores_the_users_cast_types_with_the_run(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
        policy = await service.get_artifact(flow.b.run_id, "cast-policy")
        assert policy.record.type == "CastPolicy"
        assert policy.body["castTypes"][0]["castType"] == "explore"
        assert (await service.verify_run(flow.b.run_id)).ok


async def test_a_started_runs_first_message_starts_its_run_actor(tmp_path: Path) -> None:
    # How many ledger reads this takes is measured in benchmarks/round_trips.py.
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        await flow.ground()
        assert service.active_runs == (flow.b.run_id,)


async def test_a_reply_never_carries_the_runs_whole_state(tmp_path: Path) -> None:
    # How many ledger reads a decision takes is measured in benchmarks/round_trips.py.
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        flow.b.permissions, flow.b.verifications = spawn_perms(), [VERIFY_READ]
        await flow.ground()
        await flow.submit("ProblemFrame", flow.b.frame())
        await flow.submit("TaskContract", flow.b.contract())
        await flow.submit("PromptReview", flow.b.prompt_review())  # a decision type
        assert flow.last.run.phase == "agent_3_plan"  # the decision was committed
        assert flow.last.state is None  # nor does an idle actor keep it


async def test_a_started_run_nobody_calls_again_is_forgotten_when_idle(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        assert service.active_runs == ()
        assert await service.reap_idle() == 0  # no actor was running: nothing to stop
        await flow.ground()  # found in the ledger again, its actor started on demand
        assert service.active_runs == (flow.b.run_id,)
        assert flow.version == 2
