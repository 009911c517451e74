"""The seam each backend fills in below the ``Ledger`` (``_plans``), which keeps every rule once.

A mutation is a ``Probe`` (what the ledger must know of the run) and a pure function from its
answer to a ``Plan`` (what to write), which the backend runs in one transaction holding the run's
write lock; a read is one ``Reader`` call. Memory, SQLite and PostgreSQL differ only below that
seam, which is why one contract suite can speak for all three.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from ._records import (
    ArtifactRecord,
    Commit,
    RunRecord,
    TraceRecord,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """A run row as the backends keep it: the record plus the counters and head of its chain."""

    record: RunRecord
    artifact_count: int
    event_count: int
    chain_length: int
    chain_head: str
    run_hash: str | None = None
    """The hash of every field above (``_chain.run_hash``), stored beside them; ``None`` only
    for a row not yet sealed (a plan seals every row it writes)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which of a run's records one ``Reader.read_run`` returns with the run row."""

    artifacts_after: int | None = None
    """Return the artifacts positioned after this one (``None``: no artifacts)."""
    bodies: bool = False
    """Return the stored bytes of those artifacts as well."""
    events_after: int | None = None
    """Return the trace events with a sequence above this one (``None``: no events)."""
    events_limit: int | None = None
    """Return at most this many of those events (``None``: all of them)."""
    trust_counters: bool = False
    """Skip looking for records past the run row's own counters. ``read_changes`` does: it
    returns the counters with the records. ``verify_run`` must not: it checks them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRows:
    """A run row and the records a ``Selection`` asked for, from one snapshot."""

    run: StoredRun
    artifacts: Sequence[ArtifactRecord] = ()
    """In position order."""
    bodies: Mapping[str, bytes] = field(default_factory=dict)
    """Digest → stored bytes, as stored (no verification here); a missing body is absent."""
    events: Sequence[TraceRecord] = ()
    """In sequence order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """What a mutation must learn about its run before it writes, asked in one read."""

    artifact_ids: Sequence[str] = ()
    """Artifact ids the mutation would store."""
    event_ids: Sequence[str] = ()
    """Trace event ids the mutation would store."""
    quota_keys: Sequence[tuple[str, str]] = ()
    """``(type, quota key)`` pairs the mutation would use."""
    evidence: tuple[str, str] | None = None
    """``(evidence type, plan type)``: count the evidence stored after the latest plan."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Probed:
    """The answer to a ``Probe``, read while holding the run's write lock."""

    run: StoredRun | None
    artifacts: Mapping[str, ArtifactRecord]
    """The probed artifact ids already stored in the run, with their records."""
    event_ids: frozenset[str]
    """The probed event ids already stored in the run."""
    quota_keys: frozenset[tuple[str, str]]
    """The probed ``(type, quota key)`` pairs already taken in the run."""
    evidence_since_plan: int
    """Evidence stored after the latest plan (0 when not asked)."""
    tip: ArtifactRecord | TraceRecord | None = None
    """The run's last chained record (the one at ``chain_length``), if it is stored."""


class Reader(Protocol):
    """Reads. Each call sees one consistent snapshot; the engine makes one call per read, so a
    backend may take and release its snapshot inside every call."""

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        """Return one trace record of a run."""
        ...

    async def read_artifact(
        self, run_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        """Return one artifact record of a run with its stored bytes (``None`` if missing)."""
        ...

    async def read_bodies(self, digests: Sequence[str]) -> Mapping[str, bytes]:
        """Return the stored bytes of these digests, as stored; a missing body is absent."""
        ...

    async def read_run(self, run_id: str, selection: Selection) -> RunRows | None:
        """Return the run row with the records ``selection`` asks for, or ``None``."""
        ...

    async def runs(self, limit: int) -> list[RunRecord]:
        """Return run records, newest ``updated_at`` first, ties by run id."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What one mutation writes, decided by a pure function from what its ``Probe`` found."""

    result: Commit
    """What the mutation returns once the plan is stored."""
    run: StoredRun | None = None
    """The run row to write; ``None`` when the mutation writes nothing (an identical replay)."""
    expected_version: int | None = None
    """Update ``run`` only if the stored row is still at this version; ``None``: insert it."""
    conflict: str = ""
    """The ``LedgerConflict`` message for a stored row no longer at ``expected_version``."""
    artifacts: Sequence[tuple[ArtifactRecord, bytes]] = ()
    """New artifact records with their canonical bodies, in chain order."""
    events: Sequence[TraceRecord] = ()
    """New trace records, in chain order."""


class Backend(Protocol):
    """Where the rows live. Mutations map transport failures to ``Transient``/``OutcomeUnknown``."""

    async def mutate(self, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]) -> Plan:
        """Run one mutation as one transaction holding the run's write lock.

        Answer ``probe``, call ``plan`` with the answer (a pure function: it may raise, and then
        nothing is written), write what it returns and commit. A ``plan.run`` whose update finds
        the stored row at another version than ``expected_version`` fails the transaction with
        ``LedgerConflict(plan.conflict)``; nothing is written. ``plan`` may be called from a
        worker thread, and called again if the transaction is retried.
        """
        ...

    def read(self) -> AbstractAsyncContextManager[Reader]:
        """Open a reader."""
        ...

    async def aclose(self) -> None:
        """Close connections."""
        ...
