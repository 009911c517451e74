"""``PortalLedger``: any ledger URL behind ``DirectLedger``'s blocking calls (``BlockingLedger``).

Over a store other than SQLite (PostgreSQL, several servers sharing one database) this class
opens the async ``Ledger`` on an event loop of its own, in a thread (an anyio blocking portal),
and answers the same calls through its public API, so ``telic hook`` runs one decision path
whatever the store.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Final, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from telic._errors import NotFound

from ._direct import LIVE_STATUSES, BlockingLedger, LiveRun
from ._open import open_ledger
from ._plans import Ledger
from ._records import NewTraceEvent, RunRecord, TraceRecord

_RUNS_READ: Final = 10_000
"""How many of the most recently updated runs ``live_runs`` reads (a live run is one the host
is acting for now, so it is among the latest)."""
_PAGE: Final = 1_000

_T = TypeVar("_T")


class PortalLedger(BlockingLedger):
    """A blocking handle on the ledger at ``url``.

    Raises (any method): what the async ``Ledger`` raises (``NotFound``, ``LedgerError``, …).
    """

    def __init__(self, url: str, repository_root: str | Path) -> None:
        with ExitStack() as stack:
            self._portal: BlockingPortal = stack.enter_context(start_blocking_portal())
            opened: AbstractContextManager[Ledger] = self._portal.wrap_async_context_manager(
                open_ledger(url, repository_root=repository_root)
            )
            self._ledger = stack.enter_context(opened)
            self._stack = stack.pop_all()

    def close(self) -> None:
        """Close the ledger, then stop the portal's event loop."""
        self._stack.close()

    def run(self, job: Callable[[Ledger], Awaitable[_T]]) -> _T:
        """Await ``job`` on the open async ledger, in the portal's event loop."""
        return self._portal.call(job, self._ledger)

    def live_runs(self, repository_root: str) -> list[LiveRun]:
        return self._portal.call(self._live_runs, repository_root)

    def run_key(self, run_id: str) -> tuple[int, int] | None:
        return self._portal.call(self._run_key, run_id)

    def events_of(self, run_id: str, event_types: Sequence[str]) -> list[tuple[str, str, str, str]]:
        return self._portal.call(self._events_of, run_id, frozenset(event_types))

    def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent], *, once: bool = False
    ) -> tuple[TraceRecord, ...]:
        async def record() -> tuple[TraceRecord, ...]:
            return await self._ledger.record_events(run_id, events, once=once)

        return self._portal.call(record)

    async def _live_runs(self, repository_root: str) -> list[LiveRun]:
        return [
            await self._live_run(record)
            for record in await self._ledger.list_runs(_RUNS_READ)
            if record.status in LIVE_STATUSES and record.repository_root == repository_root
        ]

    async def _run_key(self, run_id: str) -> tuple[int, int] | None:
        try:
            run = await self._live_run(await self._ledger.get_run(run_id))
        except NotFound:
            return None
        return run.version, run.artifact_count

    async def _live_run(self, record: RunRecord) -> LiveRun:
        """The row ``DirectLedger`` reads, from the record and the run's artifact records."""
        return LiveRun(
            record.run_id,
            record.requested_mode,
            record.phase,
            record.version,
            len(await self._ledger.list_artifacts(record.run_id)),
            record.prompt_revisions_remaining,
            record.remediations_remaining,
        )

    async def _events_of(
        self, run_id: str, event_types: frozenset[str]
    ) -> list[tuple[str, str, str, str]]:
        found: list[tuple[str, str, str, str]] = []
        after = 0
        while True:
            page = await self._ledger.page_trace(run_id, after, _PAGE)
            for event in page.events:
                if event.event_type in event_types:
                    refs = json.dumps(list(event.input_refs)), json.dumps(list(event.output_refs))
                    found.append((event.event_type, event.decision_summary, *refs))
            if not page.has_more or not page.events:
                return found
            after = page.events[-1].sequence
