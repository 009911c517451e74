"""When an open cast's wall-clock budget next needs attention, and waiting for it on the run clock.

A wall-capped child is not sent anything when its time runs out: the run must notice by itself.
``deadline`` is the pure half — the run-clock instant at which the supervisor must look at a
cast again (the first instant past its cap, then the first past its grace) — and
``next_deadline`` the earliest of a run's. The imperative half is the service's deadline keeper
(``telic.roles``): it waits with a ``Sleeper`` until the earliest deadline of every run, or
until a ``Bell`` says the casts changed, and then asks the run actors to expire what is due.
The default sleeper reads the run clock and sleeps the difference; tests inject one driven by
their manual clock, so no test sleeps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import anyio

from telic.casting._book import WALL_GRACE_MS, OpenCast

Sleeper = Callable[[float], Awaitable[None]]
"""Waits until the run clock reaches an instant (POSIX seconds)."""

_TICK_S: Final = 0.002
"""Wall time is counted in whole milliseconds and a cap is crossed only past it: two
milliseconds after the cap, so that rounding never leaves the instant a hair short of it."""


def deadline(open_cast: OpenCast) -> float | None:
    """Return the run-clock instant at which ``open_cast``'s wall budget next changes its state.

    ``None`` when it has no wall cap. Not yet exhausted: the first instant past the cap (it
    becomes ``wall_capped``). Exhausted by its wall cap: the first instant past the grace (it is
    sealed). Exhausted by another cap: its wall cap and grace still bound how long it stays open.
    """
    limit = open_cast.cast.budget.max_wall_ms
    if limit is None:
        return None
    past = limit if not open_cast.exhausted else limit + WALL_GRACE_MS
    return open_cast.started_at + past / 1000 + _TICK_S


def next_deadline(casts: Iterable[OpenCast]) -> float | None:
    """Return the earliest ``deadline`` among ``casts``, or ``None``."""
    return min((d for d in map(deadline, casts) if d is not None), default=None)


def sleeper_on(clock: Callable[[], float]) -> Sleeper:
    """Return a ``Sleeper`` for a clock reading POSIX seconds: sleep until it shows the instant."""

    async def sleep_until(instant: float) -> None:
        # One sleep: a caller that wakes a hair early sees nothing due and waits again.
        remaining = instant - clock()
        if remaining > 0:
            await anyio.sleep(remaining)

    return sleep_until


class Bell:
    """Rung when a run's open casts change, so a deadline keeper waiting on old ones wakes up."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def ring(self) -> None:
        """Wake whoever waits."""
        self._event.set()

    async def wait(self) -> None:
        """Wait for the next ring since the last ``rearm``."""
        await self._event.wait()

    def rearm(self) -> None:
        """Forget earlier rings: the waiter has just read the casts."""
        if self._event.is_set():
            self._event = anyio.Event()
