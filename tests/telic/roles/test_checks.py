"""``telic_check_tool_action`` is bounded: identical decisions are recorded once, a run holds a
capped number of check records, a finished run records none, and every refusal writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from telic import InvalidTransition, LimitExceeded, RuleViolation
from telic.controller import StartRequest
from telic.roles import _checks

from .kit import ServiceFlow, serving

pytestmark = pytest.mark.anyio


async def _chain(service: Any, run_id: str) -> tuple[int, list[tuple[str, Any]]]:
    verified = await service.verify_run(run_id)
    trace = await service.get_trace(run_id, limit=5000)
    return verified.records_checked, [(e.event_type, e.permission_decision) for e in trace.events]


def _checks_of(events: list[tuple[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (d.decision, d.capability, d.scope)
        for kind, d in events
        if kind == "permission_checked" and d is not None
    ]


async def test_a_repeated_identical_check_is_answered_every_time_and_recorded_once(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        run_id = flow.b.run_id
        before, started = await _chain(service, run_id)
        for _ in range(300):
            decision = await service.check_tool_action(run_id, "repository.read", "src/retry.py")
            assert decision.allowed
            refused = await service.check_tool_action(run_id, "teleport", None)
            assert refused.code == "unknown_capability"
        after, events = await _chain(service, run_id)
        assert after == before + 2
        assert _checks_of(events) == [("allow", "repository.read", "src/retry.py")]
        assert len(events) == len(started) + 2  # the allow and the one refusal
        # A different decision is a new record.
        await service.check_tool_action(run_id, "repository.read", "src/other.py")
        assert (await _chain(service, run_id))[0] == before + 3


async def test_a_finished_run_records_no_check_and_the_refusal_names_the_rule(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        run_id = flow.b.run_id
        await service.cancel_run(run_id, *flow.token())
        before = await _chain(service, run_id)
        for capability, target in (("repository.read", "src/retry.py"), ("teleport", None)):
            with pytest.raises(InvalidTransition) as refused:
                await service.check_tool_action(run_id, capability, target)
            assert refused.value.rules == ("CT-RUN-ACTIVE",)
            assert "cancelled" in refused.value.message
        assert await _chain(service, run_id) == before
        assert (await service.verify_run(run_id)).ok


async def test_past_the_cap_a_new_decision_is_refused_and_a_known_one_still_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_checks, "MAX_CHECK_RECORDS", 3)
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        run_id = flow.b.run_id
        for index in range(3):
            await service.check_tool_action(run_id, "repository.read", f"src/{index}.py")
        before = await _chain(service, run_id)
        with pytest.raises(LimitExceeded) as refused:
            await service.check_tool_action(run_id, "repository.read", "src/3.py")
        assert refused.value.rules == ("CT-CHECK-CAP",)
        assert "treat the action as denied" in refused.value.message
        assert await _chain(service, run_id) == before
        again = await service.check_tool_action(run_id, "repository.read", "src/1.py")
        assert again.allowed
        assert await _chain(service, run_id) == before


async def test_a_protected_target_is_denied_by_the_protected_layer_and_recorded_once(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        writing = ("repository.read", "repository.write")
        flow = await ServiceFlow.start(
            service, "fix_only", host_capabilities=writing, authorization_granted=writing
        )
        run_id = flow.b.run_id
        for _ in range(3):
            denied = await service.check_tool_action(run_id, "repository.write", ".git/config")
            assert (denied.allowed, denied.code) == (False, "protected_path")
            outside = await service.check_tool_action(run_id, "repository.read", "file:///etc/x")
            assert (outside.allowed, outside.code) == (False, "not_repository_relative")
        _, events = await _chain(service, run_id)
        assert _checks_of(events) == [
            ("deny", "repository.write", ".git/config"),
            ("deny", "repository.read", "file:///etc/x"),
        ]


async def test_a_refused_protected_grant_at_start_writes_no_run(tmp_path: Path) -> None:
    async with serving(tmp_path) as (service, ledger):
        with pytest.raises(RuleViolation) as refused:
            await service.start_run(
                StartRequest(
                    "Fix the hook",
                    "fix_only",
                    host_capabilities=("repository.read",),
                    protected_paths_granted=("**",),
                )
            )
        assert set(refused.value.rules) == {"SR-PROTECTED-UNAUTHORIZED", "SR-PROTECTED-FORM"}
        assert await ledger.list_runs(10) == ()
        writing = ("repository.read", "repository.write")
        started = await service.start_run(
            StartRequest(
                "Fix the hook",
                "fix_only",
                host_capabilities=writing,
                authorization_granted=writing,
                protected_paths_granted=(".git/hooks/pre-commit",),
            )
        )
        run_id = started.run.run_id
        envelope = await service.get_artifact(run_id, run_id)
        assert envelope.body["authorization"]["protectedPathsGranted"] == [".git/hooks/pre-commit"]
        # Past the protection, the other layers still decide: grounding grants no write.
        hook = await service.check_tool_action(run_id, "repository.write", ".git/hooks/pre-commit")
        assert (hook.allowed, hook.deciding_layer) == (False, "phase")
        config = await service.check_tool_action(run_id, "repository.write", ".git/config")
        assert (config.allowed, config.deciding_layer) == (False, "protected")
