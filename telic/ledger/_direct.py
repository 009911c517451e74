"""``DirectLedger``: an SQLite ledger read and appended to synchronously, by a short-lived process.

``telic hook`` decides one host tool call per fresh process. The async ``Ledger`` would cost it
anyio, aiosqlite and an event loop for a few reads and one append, so this handle makes the
calls of ``BlockingLedger`` over a blocking connection, appending through the very probe, plan
and transaction the async SQLite backend runs (the hash chain, quotas and secret backstop
included). It imports the standard library and the ledger's pure modules only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final, NamedTuple, Protocol, Self

from ._clock import utc_now
from ._plans import fix_events, plan_events, probe_for
from ._records import Limits, NewTraceEvent, TraceRecord
from ._sqlite_sync import connect, transaction

LIVE_STATUSES: Final = ("running", "awaiting_clarification")
"""The statuses of a live run: one the host may still act for."""
_LIVE_RUNS: Final = (
    "SELECT run_id, requested_mode, phase, version, artifact_count, "
    "prompt_revisions_remaining, remediations_remaining FROM runs "
    "WHERE repository_root = ? AND status IN (?, ?) ORDER BY updated_at DESC, run_id"
)
_RUN_KEY: Final = "SELECT version, artifact_count FROM runs WHERE run_id = ?"


class LiveRun(NamedTuple):
    """A live run (running or awaiting clarification) of a repository, as its row says."""

    run_id: str
    mode: str
    phase: str
    version: int
    artifact_count: int
    prompt_revisions: int
    remediations: int


class BlockingLedger(Protocol):
    """What one hook decision reads and appends, through blocking calls: ``DirectLedger`` over
    SQLite, ``PortalLedger`` (``_portal.py``) over any other store. Close it (or use it as a
    context manager)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store."""

    def live_runs(self, repository_root: str) -> list[LiveRun]:
        """The repository's live runs, the most recently updated first."""

    def run_key(self, run_id: str) -> tuple[int, int] | None:
        """The run's version and artifact count (``None``: no such run): every step that could
        change what a run allows raises one of the two."""

    def events_of(self, run_id: str, event_types: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """The run's trace events of ``event_types`` in sequence order, each as its type,
        decision summary, and input and output refs (each a JSON array)."""

    def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent], *, once: bool = False
    ) -> tuple[TraceRecord, ...]:
        """Append ``events`` to the run's trace in one transaction, as ``Ledger.record_events``.

        Raises:
            NotFound, LedgerConflict, LimitExceeded, SecretRefused: as ``Ledger.record_events``.
        """


class DirectLedger(BlockingLedger):
    """A blocking handle on one SQLite ledger file.

    Raises (any method): ``sqlite3.Error`` when the database cannot be read or written.
    """

    def __init__(self, path: Path) -> None:
        self._connection = connect(path)

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def live_runs(self, repository_root: str) -> list[LiveRun]:
        rows = self._connection.execute(_LIVE_RUNS, (repository_root, *LIVE_STATUSES))
        return [LiveRun(*row) for row in rows.fetchall()]

    def run_key(self, run_id: str) -> tuple[int, int] | None:
        row = self._connection.execute(_RUN_KEY, (run_id,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def events_of(self, run_id: str, event_types: Sequence[str]) -> list[tuple[str, str, str, str]]:
        marks = ", ".join("?" for _ in event_types)
        query = (
            "SELECT event_type, decision_summary, input_refs_json, output_refs_json "
            f"FROM trace_events WHERE run_id = ? AND event_type IN ({marks}) ORDER BY sequence"
        )
        rows = self._connection.execute(query, (run_id, *event_types)).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent], *, once: bool = False
    ) -> tuple[TraceRecord, ...]:
        fixed = fix_events(events, utc_now)
        limits = Limits()
        probe = probe_for([], fixed, limits)
        plan = transaction(
            self._connection,
            run_id,
            probe,
            lambda probed: plan_events(probed, fixed, limits, once=once),
        )
        return plan.result.events
