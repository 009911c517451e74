"""When a cast's wall budget next needs the supervisor, and waiting for it on the run clock."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from telic.casting import WALL_GRACE_MS, Bell, OpenCast, deadline, next_deadline, sleeper_on
from telic.protocol._types import PermissionSet
from telic_packets import Cast
from telic_packets.conformance import load_table

pytestmark = pytest.mark.anyio


def _wire_cast() -> dict[str, Any]:
    row = next(r for r in load_table()["rows"] if r["input"]["op"] == "seal")
    return dict(row["input"]["cast"])


def _open(started_at: float, max_wall_ms: int | None) -> OpenCast:
    wire = _wire_cast()
    wire["budget"] = {**wire["budget"], "maxWallMs": max_wall_ms}
    return OpenCast(
        cast=Cast.from_wire(wire),
        permissions=PermissionSet.empty(),
        depth=1,
        plan_uri="artifact://run_01/plan",
        started_at=started_at,
    )


def test_a_cast_without_a_wall_cap_has_no_deadline() -> None:
    assert deadline(_open(100.0, None)) is None
    assert next_deadline([_open(100.0, None)]) is None


def test_the_deadline_is_just_past_the_cap_then_just_past_the_grace() -> None:
    cast = _open(100.0, 1_000)
    assert deadline(cast) == pytest.approx(101.002)
    assert cast.wall_ms(101.002) > 1_000  # at the deadline the cap is crossed
    cast.stop_reason = "wall_capped"
    assert deadline(cast) == pytest.approx(101.002 + WALL_GRACE_MS / 1000)


def test_the_earliest_deadline_of_several_casts_is_next() -> None:
    late, early = _open(100.0, 5_000), _open(102.0, 1_000)
    assert next_deadline([late, early, _open(0.0, None)]) == pytest.approx(103.002)


async def test_the_default_sleeper_returns_at_once_for_an_instant_already_passed() -> None:
    with anyio.fail_after(5):
        await sleeper_on(lambda: 200.0)(100.0)


async def test_a_bell_wakes_its_waiter_and_a_rearmed_bell_waits_again() -> None:
    bell = Bell()
    woke: list[bool] = []

    async def wait() -> None:
        await bell.wait()
        woke.append(True)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert woke == []
            bell.ring()
        assert woke == [True]
    bell.rearm()
    with anyio.move_on_after(0) as scope:
        await bell.wait()
    assert scope.cancelled_caught
