"""Every state change of a run goes through its one run actor: one winner per version."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from telic import StaleToken

from .kit import VERIFY_READ, ServiceFlow, serving, spawn_perms

pytestmark = pytest.mark.anyio

TASKS = 50


async def test_fifty_concurrent_submissions_have_exactly_one_winner_per_version(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as (service, _):
        flow = await ServiceFlow.start(service)
        flow.b.permissions, flow.b.verifications = spawn_perms(), [VERIFY_READ]
        await flow.ground()
        run_id = flow.b.run_id
        rounds = [("ProblemFrame", flow.b.frame()), ("TaskContract", flow.b.contract())]
        for artifact_type, body in rounds:
            action_id, version = flow.token()
            wins: list[object] = []
            stale: list[StaleToken] = []

            async def submit(
                artifact_type: str = artifact_type,
                body: object = body,
                action_id: str = action_id,
                version: int = version,
                wins: list[object] = wins,
                stale: list[StaleToken] = stale,
            ) -> None:
                try:
                    wins.append(
                        await service.submit_artifact(
                            run_id, action_id, version, artifact_type, body
                        )
                    )
                except StaleToken as error:
                    stale.append(error)

            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    for _ in range(TASKS):
                        group.start_soon(submit)
            assert len(wins) == 1
            assert len(stale) == TASKS - 1
            flow.last = wins[0]
            assert flow.version == version + 1
        statistics = service.mailbox_statistics(run_id)
        assert statistics is not None
        assert statistics.delivered == 1 + 2 * TASKS  # the grounding, then every submission
        assert statistics.refused == 0
        report = await service.verify_run(run_id)
        assert report.ok
