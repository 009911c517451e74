"""Two real ``telic serve`` processes on one SQLite store record each check decision once."""

from __future__ import annotations

import secrets
from collections import Counter
from pathlib import Path

import anyio
import pytest
from mcp import Client

from telic.demo import DemoRepository, TelicTools, stdio_parameters

pytestmark = pytest.mark.anyio

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


async def test_two_servers_on_one_store_record_the_same_check_decision_once(
    repo: DemoRepository, state: Path
) -> None:
    # Fresh targets per run: nothing a previous run could have left in a cache decides this.
    warm, *targets = [f"src/{secrets.token_hex(4)}.py" for _ in range(13)]
    with anyio.fail_after(90):
        async with (
            Client(stdio_parameters(repo.root, state)) as first,
            Client(stdio_parameters(repo.root, state)) as second,
        ):
            one, two = TelicTools(first), TelicTools(second)
            started = await one.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            run_id = started["run"]["runId"]

            async def check(tools: TelicTools, target: str) -> None:
                answer = await tools.call(
                    "telic_check_tool_action",
                    run_id=run_id,
                    capability="repository.read",
                    target=target,
                )
                assert answer["decision"]["allowed"] is True

            # Both servers hold the run's actor before the race (one after the other: once).
            await check(one, warm)
            await check(two, warm)
            # Each decision asked of both servers at once, every pair in flight together: each
            # server reads the run before the other has written.
            async with anyio.create_task_group() as group:
                for target in targets:
                    for tools in (one, two):
                        group.start_soon(check, tools, target)
            # And once more each, one server after the other.
            for target in targets:
                await check(two, target)
                await check(one, target)
            trace = await two.call("telic_get_trace", run_id=run_id, limit=500)
            verified = await one.call("telic_verify_run", run_id=run_id)
    checks = Counter(
        event["permissionDecision"]["scope"]
        for event in trace["events"]
        if event["eventType"] == "permission_checked"
    )
    assert checks == Counter(dict.fromkeys([warm, *targets], 1))
    assert verified["intact"] is True
