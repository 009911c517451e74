"""The in-memory backend: the reference semantics and the test double.

State lives in dictionaries guarded by one lock. A write transaction works on a journal of
pending changes that is applied only when the block exits normally, so a failed mutation leaves
nothing behind, exactly like a rolled-back database transaction. Bodies and JSON fields are kept
as canonical bytes and re-parsed on every read, so no caller can alias stored state.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

import anyio

from ._base import Reader, StoredRun, Txn
from ._chain import decode_object, encode_json
from ._records import ArtifactRecord, RunRecord, RunSummary, TraceRecord

__all__ = ["MemoryBackend"]


def _freeze_run(record: RunRecord) -> RunRecord:
    return replace(
        record,
        controller_state=decode_object(encode_json(record.controller_state), what="state"),
    )


def _freeze_event(record: TraceRecord) -> TraceRecord:
    decision = record.permission_decision
    return replace(
        record,
        permission_decision=None
        if decision is None
        else decode_object(encode_json(decision), what="permission decision"),
        budget_snapshot=decode_object(encode_json(record.budget_snapshot), what="budget"),
    )


@dataclass
class _State:
    runs: dict[str, StoredRun] = field(default_factory=dict)
    artifacts: dict[str, dict[str, ArtifactRecord]] = field(default_factory=dict)
    events: dict[str, dict[str, TraceRecord]] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    positions: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """Run id → artifact type → the positions of that type, ascending (for the quotas)."""


class _View:
    """Reads over committed state plus, inside a transaction, its own pending writes."""

    def __init__(self, state: _State) -> None:
        self._state = state
        self._runs: dict[str, StoredRun] = {}
        self._artifacts: dict[str, dict[str, ArtifactRecord]] = {}
        self._events: dict[str, dict[str, TraceRecord]] = {}
        self._blobs: dict[str, bytes] = {}

    async def load_run(self, run_id: str) -> StoredRun | None:
        stored = self._runs.get(run_id) or self._state.runs.get(run_id)
        return None if stored is None else replace(stored, record=_freeze_run(stored.record))

    def _ordered_artifacts(self, run_id: str) -> list[ArtifactRecord]:
        # Insertion order is position order: committed records first, then this journal's.
        return [
            *self._state.artifacts.get(run_id, {}).values(),
            *self._artifacts.get(run_id, {}).values(),
        ]

    async def find_artifact(self, run_id: str, artifact_id: str) -> ArtifactRecord | None:
        pending = self._artifacts.get(run_id, {}).get(artifact_id)
        return pending or self._state.artifacts.get(run_id, {}).get(artifact_id)

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        event = self._events.get(run_id, {}).get(event_id)
        event = event or self._state.events.get(run_id, {}).get(event_id)
        return None if event is None else _freeze_event(event)

    async def read_blob(self, sha256: str) -> bytes | None:
        return self._blobs.get(sha256) or self._state.blobs.get(sha256)

    async def artifacts(self, run_id: str, after: int = 0) -> list[ArtifactRecord]:
        # Positions run 1, 2, 3… in insertion order, so ``after`` is also an index.
        return self._ordered_artifacts(run_id)[after:]

    async def events(self, run_id: str, after: int, limit: int | None) -> list[TraceRecord]:
        # Sequences run 1, 2, 3… in insertion order: skip ``after`` of them without sorting.
        committed = self._state.events.get(run_id, {})
        ordered = itertools.chain(committed.values(), self._events.get(run_id, {}).values())
        stop = None if limit is None else after + limit
        return [_freeze_event(e) for e in itertools.islice(ordered, after, stop)]

    async def runs(self, limit: int) -> list[RunSummary]:
        records = [stored.record for stored in self._state.runs.values()]
        records.sort(key=lambda r: r.run_id)
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return [
            RunSummary(
                run_id=r.run_id,
                schema_version=r.schema_version,
                requested_mode=r.requested_mode,
                status=r.status,
                phase=r.phase,
                resume_phase=r.resume_phase,
                version=r.version,
                outcome_hint=r.outcome_hint,
                created_at=r.created_at,
                updated_at=r.updated_at,
            )
            for r in records[:limit]
        ]


class _MemoryTxn(_View):
    """A write transaction: pending writes become visible to the state only on ``apply``."""

    async def evidence_since_plan(self, run_id: str, evidence_type: str, plan_type: str) -> int:
        committed = self._state.positions.get(run_id, {})
        pending = list(self._artifacts.get(run_id, {}).values())
        plans = [a.position for a in pending if a.type == plan_type]
        plans = plans or committed.get(plan_type, [])
        start = plans[-1] if plans else 0  # the latest plan's position
        evidence = committed.get(evidence_type, [])
        count = len(evidence) - bisect.bisect_right(evidence, start)
        return count + sum(1 for a in pending if a.type == evidence_type and a.position > start)

    async def quota_key_taken(self, run_id: str, type_: str, key: str) -> bool:
        return any(a.type == type_ and a.quota_key == key for a in self._ordered_artifacts(run_id))

    async def insert_run(self, run: StoredRun) -> None:
        self._runs[run.record.run_id] = replace(run, record=_freeze_run(run.record))

    async def update_run(self, run: StoredRun, expected_version: int) -> bool:
        current = await self.load_run(run.record.run_id)
        if current is None or current.record.version != expected_version:
            return False
        await self.insert_run(run)
        return True

    async def insert_artifact(self, record: ArtifactRecord, canonical: bytes) -> None:
        self._artifacts.setdefault(record.run_id, {})[record.artifact_id] = record
        self._blobs.setdefault(record.sha256, bytes(canonical))

    async def insert_event(self, record: TraceRecord) -> None:
        self._events.setdefault(record.run_id, {})[record.event_id] = _freeze_event(record)

    def apply(self) -> None:
        state = self._state
        state.runs.update(self._runs)
        for run_id, artifacts in self._artifacts.items():
            state.artifacts.setdefault(run_id, {}).update(artifacts)
            positions = state.positions.setdefault(run_id, {})
            for record in artifacts.values():
                positions.setdefault(record.type, []).append(record.position)
        for run_id, events in self._events.items():
            state.events.setdefault(run_id, {}).update(events)
        for sha, data in self._blobs.items():
            state.blobs.setdefault(sha, data)


class MemoryBackend:
    """Rows in dictionaries; one lock makes every transaction serial."""

    def __init__(self) -> None:
        self._state = _State()
        self._lock = anyio.Lock()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Txn]:
        async with self._lock:
            txn = _MemoryTxn(self._state)
            yield txn
            txn.apply()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Reader]:
        async with self._lock:
            yield _View(self._state)

    async def aclose(self) -> None:
        return None

    def tamper(self, edit: Callable[[_State], None]) -> None:
        """Let a test rewrite stored state directly, as an attacker with memory access could."""
        edit(self._state)
