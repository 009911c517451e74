"""The ``Ledger`` interface the controller uses, and the narrower seam each backend fills in.

``Ledger`` states what a run store promises. ``LedgerEngine`` (in ``_engine``) keeps every one of
those promises once, over ``Backend``: a handful of row-level operations inside a transaction that
holds the run's write lock. Memory, SQLite and PostgreSQL differ only below that seam, which is
why one contract suite can speak for all three.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from ._records import (
    ArtifactBody,
    ArtifactRecord,
    Commit,
    NewArtifact,
    NewTraceEvent,
    RunChanges,
    RunRecord,
    RunSummary,
    TracePage,
    TraceRecord,
    VerifyReport,
)

__all__ = ["Backend", "Ledger", "Reader", "StoredRun", "Txn"]


class Ledger(ABC):
    """A run store: immutable, content-addressed artifacts, a hash-chained trace, fenced steps.

    Every mutation is one transaction. Nothing is written when a mutation raises.
    """

    @abstractmethod
    async def create_run(
        self,
        run: RunRecord,
        request_artifact: NewArtifact,
        envelope_artifact: NewArtifact,
        first_events: Sequence[NewTraceEvent],
    ) -> Commit:
        """Store a new run row, its request and envelope artifacts and its first trace events.

        Raises:
            LedgerConflict: a run with this id already exists.
        """

    @abstractmethod
    async def commit_step(
        self,
        run_id: str,
        expected_version: int,
        new_run: RunRecord,
        artifacts: Sequence[NewArtifact],
        events: Sequence[NewTraceEvent],
    ) -> Commit:
        """Apply one phase step: artifacts, the run row (fenced by version) and trace events.

        ``new_run.version`` must be ``expected_version + 1``.

        Raises:
            LedgerConflict: the run is no longer at ``expected_version``, or an artifact id is
                already used in this run. Nothing is written.
            LimitExceeded: a quota would be exceeded. Nothing is written.
            NotFound: there is no such run.
        """

    @abstractmethod
    async def store_supporting(
        self, run_id: str, artifact: NewArtifact, events: Sequence[NewTraceEvent]
    ) -> Commit:
        """Store a supporting artifact (and its trace events) without changing the run version.

        An identical replay (same id, type, schema version, producer, digest, source refs,
        redaction and quota key) writes nothing and returns the stored record with
        ``replayed=True``.

        Raises:
            LedgerConflict: the id is already used in this run by a different artifact.
            LimitExceeded: a quota would be exceeded.
            NotFound: there is no such run.
        """

    @abstractmethod
    async def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent]
    ) -> tuple[TraceRecord, ...]:
        """Append trace events alone, such as the DENY decision of a rejected submission."""

    @abstractmethod
    async def get_run(self, run_id: str) -> RunRecord:
        """Return the run row. Raises ``NotFound``."""

    @abstractmethod
    async def read_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return an artifact of a run with its body, re-verifying digest and record hash.

        Raises:
            NotFound: the run has no artifact with this id (ids are scoped to their run).
            IntegrityError: the stored bytes or record no longer match their hashes.
        """

    @abstractmethod
    async def list_artifacts(self, run_id: str) -> tuple[ArtifactRecord, ...]:
        """Return the run's artifact records in commit order. Raises ``NotFound``."""

    @abstractmethod
    async def read_changes(
        self, run_id: str, after_artifact: int = 0, after_event: int = 0
    ) -> RunChanges:
        """Return the run row with the artifacts and trace events appended after a known point.

        One consistent snapshot: a caller that holds the run's first ``after_artifact``
        artifacts and ``after_event`` events is up to date once it appends what this returns.
        Every returned artifact and event is verified as ``read_artifact`` and ``page_trace``
        verify them.

        Raises:
            NotFound: there is no such run.
            IntegrityError: a returned record or blob no longer matches its hashes.
        """

    @abstractmethod
    async def page_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TracePage:
        """Return up to ``limit`` trace events with a sequence above ``after_sequence``."""

    @abstractmethod
    async def list_runs(self, limit: int = 20) -> tuple[RunSummary, ...]:
        """Return run metadata, newest ``updated_at`` first, ties by run id ascending."""

    @abstractmethod
    async def verify_run(self, run_id: str) -> VerifyReport:
        """Recompute every blob digest and chain link of a run; report the first broken record."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections. The ledger cannot be used afterwards."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """A run row as the backends keep it: the record plus the counters and head of its chain."""

    record: RunRecord
    artifact_count: int
    event_count: int
    chain_length: int
    chain_head: str


class Reader(Protocol):
    """Reads inside one consistent snapshot."""

    async def load_run(self, run_id: str) -> StoredRun | None:
        """Return the run row; inside a ``Txn`` this also takes the run's write lock."""
        ...

    async def find_artifact(self, run_id: str, artifact_id: str) -> ArtifactRecord | None:
        """Return one artifact record of a run."""
        ...

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        """Return one trace record of a run."""
        ...

    async def read_blob(self, sha256: str) -> bytes | None:
        """Return the stored bytes of a digest, as stored (no verification here)."""
        ...

    async def artifacts(self, run_id: str, after: int = 0) -> list[ArtifactRecord]:
        """Return the run's artifact records positioned after ``after``, by position."""
        ...

    async def events(self, run_id: str, after: int, limit: int | None) -> list[TraceRecord]:
        """Return trace records with sequence above ``after``, by sequence, at most ``limit``."""
        ...

    async def runs(self, limit: int) -> list[RunSummary]:
        """Return run summaries, newest ``updated_at`` first, ties by run id."""
        ...


class Txn(Reader, Protocol):
    """One write transaction. The engine checks everything before it writes anything."""

    async def evidence_since_plan(self, run_id: str, evidence_type: str, plan_type: str) -> int:
        """Count ``evidence_type`` artifacts positioned after the latest ``plan_type`` one."""
        ...

    async def quota_key_taken(self, run_id: str, type_: str, key: str) -> bool:
        """Whether an artifact of this type in this run already carries this quota key."""
        ...

    async def insert_run(self, run: StoredRun) -> None:
        """Insert a new run row (the engine has checked that the id is free)."""
        ...

    async def update_run(self, run: StoredRun, expected_version: int) -> bool:
        """Update the run row if it is still at ``expected_version``; return whether it was."""
        ...

    async def insert_artifact(self, record: ArtifactRecord, canonical: bytes) -> None:
        """Store an artifact record and make its blob durable before the transaction commits."""
        ...

    async def insert_event(self, record: TraceRecord) -> None:
        """Store a trace record."""
        ...


class Backend(Protocol):
    """Where the rows live. Mutations map transport failures to ``Transient``/``OutcomeUnknown``."""

    def write(self) -> AbstractAsyncContextManager[Txn]:
        """Open a write transaction; it commits when the block exits normally."""
        ...

    def read(self) -> AbstractAsyncContextManager[Reader]:
        """Open a read-only snapshot."""
        ...

    async def aclose(self) -> None:
        """Close connections."""
        ...
