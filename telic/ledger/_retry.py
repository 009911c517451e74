"""Retrying transport-level failures, and only those.

A backend turns a failure it knows to be harmless to repeat into ``TransientError``: SQLite said the
database is busy or locked (the transaction was rolled back), PostgreSQL aborted the transaction
for a serialization failure or deadlock, or the connection dropped before COMMIT was sent.
A connection lost *during* COMMIT is different: the step may or may not have landed, so the
backend raises ``OutcomeUnknownError`` and the engine reads the state back before deciding anything.
Logical outcomes (a stale version, a duplicate id, a quota) are never retried.

random, anyio and tenacity are imported after a first failed attempt only: the engine's module
imports this one, and the ``telic hook`` command imports that module's plans in a fresh process
per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from telic._errors import LedgerError

MAX_ATTEMPTS: Final = 8
BACKOFF_MULTIPLIER: Final = 0.005
"""The wait after the n-th failed attempt is uniform in [0, min(BACKOFF_MAX, this × 2**(n-1))]."""
BACKOFF_MAX: Final = 0.25

T = TypeVar("T")


class TransientError(Exception):
    """A failure that left the store unchanged and may be retried as a whole transaction."""


class OutcomeUnknownError(Exception):
    """The connection failed while COMMIT was in flight: the step may or may not be stored."""


async def retrying(attempt: Callable[[], Awaitable[T]], *, what: str) -> T:
    """Run ``attempt`` until it does not raise ``TransientError``, at most ``MAX_ATTEMPTS`` times.

    Waits grow exponentially with full jitter, so that racing writers spread out. The first
    attempt runs directly: nearly every call succeeds at once, and tenacity's per-call machinery
    (about 12 µs) is only set up once an attempt has failed.
    """
    try:
        return await attempt()
    except TransientError:
        pass
    import random

    import anyio
    from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt
    from tenacity.wait import wait_random_exponential

    # The wait after failed attempt n is what tenacity's ``wait_random_exponential`` gives for n:
    # after the first, uniform in [0, multiplier]; the loop below numbers its attempts from the
    # second, so its multiplier is doubled to keep every later wait where it was.
    await anyio.sleep(random.uniform(0, min(BACKOFF_MAX, BACKOFF_MULTIPLIER)))
    controller = AsyncRetrying(
        retry=retry_if_exception_type(TransientError),
        stop=stop_after_attempt(MAX_ATTEMPTS - 1),
        wait=wait_random_exponential(multiplier=2 * BACKOFF_MULTIPLIER, max=BACKOFF_MAX),
        sleep=anyio.sleep,
    )
    try:
        async for state in controller:
            with state:
                return await attempt()
    except RetryError as exc:
        raise LedgerError(
            f"{what} failed: the store stayed busy or unreachable after {MAX_ATTEMPTS} attempts"
        ) from exc.last_attempt.exception()
    raise AssertionError("unreachable: tenacity either returns, raises or retries")
