"""The in-memory backend: the reference semantics and the test double.

State lives in dictionaries guarded by one lock. A mutation probes the committed state, lets the
engine decide its plan, checks the plan's version fence and only then applies it, so a failed
mutation leaves nothing behind, exactly like a rolled-back database transaction. Bodies and JSON
fields are kept as canonical bytes and re-parsed on every read, so no caller can alias stored
state.
"""

from __future__ import annotations

import bisect
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

import anyio

from telic._errors import LedgerConflict

from ._base import Plan, Probe, Probed, Reader, RunRows, Selection, StoredRun
from ._chain import decode_object, encode_json
from ._records import ArtifactRecord, RunRecord, TraceRecord


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
    artifact_order: dict[str, list[ArtifactRecord]] = field(default_factory=dict)
    """Run id → its artifacts in position order: a read from a position slices, never scans."""
    event_order: dict[str, list[TraceRecord]] = field(default_factory=dict)
    """Run id → its trace events in sequence order."""
    quota_keys: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    """Run id → the ``(type, quota key)`` pairs its artifacts hold."""


class _View:
    """Reads over the committed state."""

    def __init__(self, state: _State) -> None:
        self._state = state

    def run(self, run_id: str) -> StoredRun | None:
        stored = self._state.runs.get(run_id)
        return None if stored is None else replace(stored, record=_freeze_run(stored.record))

    async def find_event(self, run_id: str, event_id: str) -> TraceRecord | None:
        event = self._state.events.get(run_id, {}).get(event_id)
        return None if event is None else _freeze_event(event)

    async def read_artifact(
        self, run_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        record = self._state.artifacts.get(run_id, {}).get(artifact_id)
        return None if record is None else (record, self._state.blobs.get(record.sha256))

    async def read_bodies(self, digests: Sequence[str]) -> dict[str, bytes]:
        blobs = self._state.blobs
        return {digest: blobs[digest] for digest in digests if digest in blobs}

    async def read_run(self, run_id: str, selection: Selection) -> RunRows | None:
        stored = self.run(run_id)
        if stored is None:
            return None
        artifacts: list[ArtifactRecord] = []
        after, trust = selection.artifacts_after, selection.trust_counters
        if after is not None and (not trust or stored.artifact_count > after):
            # Positions run 1, 2, 3… in insertion order, so ``after`` is also an index.
            artifacts = self._state.artifact_order.get(run_id, [])[after:]
        events: list[TraceRecord] = []
        after = selection.events_after
        if after is not None and (not trust or stored.event_count > after):
            # Sequences run 1, 2, 3… in insertion order, so ``after`` is also an index.
            limit = selection.events_limit
            stop = None if limit is None else after + limit
            ordered = self._state.event_order.get(run_id, [])
            events = [_freeze_event(e) for e in ordered[after:stop]]
        bodies = await self.read_bodies([a.sha256 for a in artifacts]) if selection.bodies else {}
        return RunRows(run=stored, artifacts=artifacts, bodies=bodies, events=events)

    async def runs(self, limit: int) -> list[RunRecord]:
        records = [stored.record for stored in self._state.runs.values()]
        records.sort(key=lambda r: r.run_id)
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return [_freeze_run(r) for r in records[:limit]]

    def probe(self, run_id: str, probe: Probe) -> Probed:
        artifacts = self._state.artifacts.get(run_id, {})
        events = self._state.events.get(run_id, {})
        taken = self._state.quota_keys.get(run_id, set())
        keys = frozenset(k for k in probe.quota_keys if k in taken)
        evidence = (
            0 if probe.evidence is None else self._evidence_since_plan(run_id, *probe.evidence)
        )
        stored = self.run(run_id)
        return Probed(
            run=stored,
            artifacts={i: artifacts[i] for i in probe.artifact_ids if i in artifacts},
            event_ids=frozenset(i for i in probe.event_ids if i in events),
            quota_keys=keys,
            evidence_since_plan=evidence,
            tip=None if stored is None else self._tip(run_id, stored.chain_length),
        )

    def _tip(self, run_id: str, index: int) -> ArtifactRecord | TraceRecord | None:
        lasts = (
            self._state.artifact_order.get(run_id, [])[-1:]
            + self._state.event_order.get(run_id, [])[-1:]
        )
        found = [record for record in lasts if record.chain_index == index]
        return found[0] if len(found) == 1 else None

    def _evidence_since_plan(self, run_id: str, evidence_type: str, plan_type: str) -> int:
        positions = self._state.positions.get(run_id, {})
        plans = positions.get(plan_type, [])
        start = plans[-1] if plans else 0  # the latest plan's position
        evidence = positions.get(evidence_type, [])
        return len(evidence) - bisect.bisect_right(evidence, start)


def _apply(state: _State, plan: Plan) -> None:
    """Store a plan whose version fence holds."""
    if plan.run is None:
        return
    run_id = plan.run.record.run_id
    current = state.runs.get(run_id)
    if plan.expected_version is not None and (
        current is None or current.record.version != plan.expected_version
    ):
        raise LedgerConflict(plan.conflict)
    state.runs[run_id] = replace(plan.run, record=_freeze_run(plan.run.record))
    artifacts = state.artifacts.setdefault(run_id, {})
    positions = state.positions.setdefault(run_id, {})
    ordered = state.artifact_order.setdefault(run_id, [])
    keys = state.quota_keys.setdefault(run_id, set())
    for record, canonical in plan.artifacts:
        artifacts[record.artifact_id] = record
        ordered.append(record)
        positions.setdefault(record.type, []).append(record.position)
        if record.quota_key is not None:
            keys.add((record.type, record.quota_key))
        state.blobs.setdefault(record.sha256, bytes(canonical))
    events = state.events.setdefault(run_id, {})
    in_sequence = state.event_order.setdefault(run_id, [])
    for event in plan.events:
        frozen = _freeze_event(event)
        events[event.event_id] = frozen
        in_sequence.append(frozen)


class MemoryBackend:
    """Rows in dictionaries; one lock makes every transaction serial."""

    def __init__(self) -> None:
        self._state = _State()
        self._lock = anyio.Lock()

    async def mutate(self, run_id: str, probe: Probe, plan: Callable[[Probed], Plan]) -> Plan:
        async with self._lock:
            decided = plan(_View(self._state).probe(run_id, probe))
            _apply(self._state, decided)
            return decided

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Reader]:
        async with self._lock:
            yield _View(self._state)

    async def aclose(self) -> None:
        return None

    def tamper(self, edit: Callable[[_State], None]) -> None:
        """Let a test rewrite stored state directly, as an attacker with memory access could."""
        edit(self._state)
