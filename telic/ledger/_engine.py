"""``LedgerEngine``: every rule of the ledger, written once over the ``Backend`` seam.

A mutation runs in two halves inside one transaction that holds the run's write lock: first it
reads and checks (version, duplicate ids, quotas), then it writes. A failure in either half rolls
the whole transaction back. Event ids and timestamps are fixed before the first attempt, so that
after a connection lost during COMMIT the engine can tell from the stored records whether its own
step landed, instead of blindly running it again.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from telic._errors import IntegrityError, LedgerConflict, LimitExceeded, NotFound, UsageError
from telic.protocol._canonical import (
    CanonicalJsonError,
    canonical_json,
    parse_json_strict,
    sha256_hex_digest,
)

from ._base import Backend, Ledger, Reader, StoredRun, Txn
from ._chain import artifact_hash, artifact_problem, event_hash, genesis_hash, walk_chain
from ._records import (
    ArtifactBody,
    ArtifactRecord,
    Commit,
    Limits,
    NewArtifact,
    NewTraceEvent,
    RunChanges,
    RunRecord,
    RunSummary,
    TracePage,
    TraceRecord,
    VerifyReport,
)
from ._retry import OutcomeUnknownError, TransientError, retrying

__all__ = ["LedgerEngine", "utc_now"]

_IMMUTABLE_RUN_FIELDS = ("schema_version", "repository_root", "requested_mode", "created_at")


def utc_now() -> str:
    """Return the current UTC time as ``2026-05-20T12:00:00.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class _Staged:
    """An artifact ready to store: its input, canonical bytes and timestamp."""

    new: NewArtifact
    canonical: bytes
    sha256: str
    created_at: str


@dataclass(frozen=True, slots=True)
class _Event:
    """A trace event with its id and timestamp fixed before the first attempt."""

    new: NewTraceEvent
    event_id: str
    timestamp: str


class LedgerEngine(Ledger):
    """The one implementation of the ledger's rules, parametrised by where rows are kept."""

    def __init__(
        self,
        backend: Backend,
        *,
        limits: Limits | None = None,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self._backend = backend
        self._limits = limits or Limits()
        self._clock = clock
        self._closed = False

    @property
    def limits(self) -> Limits:
        """The quotas this ledger enforces."""
        return self._limits

    # ------------------------------------------------------------------ mutations

    async def create_run(
        self,
        run: RunRecord,
        request_artifact: NewArtifact,
        envelope_artifact: NewArtifact,
        first_events: Sequence[NewTraceEvent],
    ) -> Commit:
        staged = [self._stage(request_artifact), self._stage(envelope_artifact)]
        events = self._fix_events(first_events)

        async def body(txn: Txn) -> Commit:
            if await txn.load_run(run.run_id) is not None:
                raise LedgerConflict("Run already exists")
            empty = StoredRun(
                record=run,
                artifact_count=0,
                event_count=0,
                chain_length=0,
                chain_head=genesis_hash(run.run_id),
            )
            await self._check(txn, empty, staged, events)
            head, records, traces = self._link(empty, staged, events)
            await txn.insert_run(replace(head, record=run))
            await self._write_records(txn, records, staged, traces)
            return Commit(run=run, artifacts=records, events=traces)

        return await self._mutate(body, run.run_id, what="create_run")

    async def commit_step(
        self,
        run_id: str,
        expected_version: int,
        new_run: RunRecord,
        artifacts: Sequence[NewArtifact],
        events: Sequence[NewTraceEvent],
    ) -> Commit:
        if new_run.run_id != run_id:
            raise UsageError("new_run.run_id must equal run_id")
        if new_run.version != expected_version + 1:
            raise UsageError("a committed step must raise the run version by exactly 1")
        staged = [self._stage(artifact) for artifact in artifacts]
        fixed = self._fix_events(events)

        async def body(txn: Txn) -> Commit:
            stored = await self._locked_run(txn, run_id)
            current = stored.record
            if current.version != expected_version:
                raise LedgerConflict(
                    f"Stale run version {expected_version}; current version is {current.version}"
                )
            for name in _IMMUTABLE_RUN_FIELDS:
                if getattr(current, name) != getattr(new_run, name):
                    raise UsageError(f"{name} of a run cannot change")
            await self._check(txn, stored, staged, fixed)
            head, records, traces = self._link(stored, staged, fixed)
            if not await txn.update_run(replace(head, record=new_run), expected_version):
                raise LedgerConflict(f"Stale run version {expected_version}")
            await self._write_records(txn, records, staged, traces)
            return Commit(run=new_run, artifacts=records, events=traces)

        return await self._mutate(body, run_id, what="commit_step")

    async def store_supporting(
        self, run_id: str, artifact: NewArtifact, events: Sequence[NewTraceEvent]
    ) -> Commit:
        staged = [self._stage(artifact)]
        fixed = self._fix_events(events)

        async def body(txn: Txn) -> Commit:
            stored = await self._locked_run(txn, run_id)
            existing = await txn.find_artifact(run_id, artifact.artifact_id)
            if existing is not None:
                if _same_artifact(existing, staged[0]):
                    return Commit(
                        run=stored.record, artifacts=(existing,), events=(), replayed=True
                    )
                raise LedgerConflict(
                    "Artifact already exists in this run with different content or metadata"
                )
            await self._check(txn, stored, staged, fixed)
            head, records, traces = self._link(stored, staged, fixed)
            if not await txn.update_run(head, stored.record.version):
                raise LedgerConflict("the run changed during the transaction")
            await self._write_records(txn, records, staged, traces)
            return Commit(run=stored.record, artifacts=records, events=traces)

        return await self._mutate(body, run_id, what="store_supporting")

    async def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent]
    ) -> tuple[TraceRecord, ...]:
        fixed = self._fix_events(events)

        async def body(txn: Txn) -> Commit:
            stored = await self._locked_run(txn, run_id)
            await self._check(txn, stored, [], fixed)
            head, _, traces = self._link(stored, [], fixed)
            if not await txn.update_run(head, stored.record.version):
                raise LedgerConflict("the run changed during the transaction")
            await self._write_records(txn, (), [], traces)
            return Commit(run=stored.record, artifacts=(), events=traces)

        return (await self._mutate(body, run_id, what="record_events")).events

    # ------------------------------------------------------------------ reads

    async def get_run(self, run_id: str) -> RunRecord:
        async with self._read() as reader:
            return (await _existing_run(reader, run_id)).record

    async def read_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        async with self._read() as reader:
            record = await reader.find_artifact(run_id, artifact_id)
            if record is None:
                raise NotFound("Artifact not found in this run")
            data = await reader.read_blob(record.sha256)
        return _verified(record, data)

    async def read_changes(
        self, run_id: str, after_artifact: int = 0, after_event: int = 0
    ) -> RunChanges:
        if after_artifact < 0 or after_event < 0:
            raise UsageError("after_artifact and after_event must be >= 0")
        async with self._read() as reader:
            stored = await _existing_run(reader, run_id)
            records: list[ArtifactRecord] = []
            blobs: list[bytes | None] = []
            if stored.artifact_count > after_artifact:
                records = await reader.artifacts(run_id, after_artifact)
                blobs = [await reader.read_blob(record.sha256) for record in records]
            events: list[TraceRecord] = []
            if stored.event_count > after_event:
                events = await reader.events(run_id, after_event, None)
        _verify_events(events)
        return RunChanges(
            run=stored.record,
            artifact_count=stored.artifact_count,
            event_count=stored.event_count,
            artifacts=tuple(_verified(r, data) for r, data in zip(records, blobs, strict=True)),
            events=tuple(events),
        )

    async def list_artifacts(self, run_id: str) -> tuple[ArtifactRecord, ...]:
        async with self._read() as reader:
            await _existing_run(reader, run_id)
            return tuple(await reader.artifacts(run_id))

    async def page_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TracePage:
        if after_sequence < 0 or limit < 1:
            raise UsageError("after_sequence must be >= 0 and limit >= 1")
        async with self._read() as reader:
            await _existing_run(reader, run_id)
            rows = await reader.events(run_id, after_sequence, limit + 1)
        _verify_events(rows)
        return TracePage(events=tuple(rows[:limit]), has_more=len(rows) > limit)

    async def list_runs(self, limit: int = 20) -> tuple[RunSummary, ...]:
        if limit < 1:
            raise UsageError("limit must be >= 1")
        async with self._read() as reader:
            return tuple(await reader.runs(limit))

    async def verify_run(self, run_id: str) -> VerifyReport:
        async with self._read() as reader:
            stored = await _existing_run(reader, run_id)
            chain: list[ArtifactRecord | TraceRecord] = [
                *await reader.artifacts(run_id),
                *await reader.events(run_id, 0, None),
            ]
            return await walk_chain(stored, chain, reader.read_blob)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._backend.aclose()

    # ------------------------------------------------------------------ internals

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[Reader]:
        """Open a read snapshot, retrying transport failures while opening it (reads are
        idempotent; a failure in the middle of one surfaces as ``LedgerError``)."""
        if self._closed:
            raise UsageError("the ledger is closed")
        async with AsyncExitStack() as stack:

            async def enter() -> Reader:
                return await stack.enter_async_context(self._backend.read())

            yield await retrying(enter, what="read")

    def _stage(self, artifact: NewArtifact) -> _Staged:
        try:
            canonical = canonical_json(artifact.body)
        except CanonicalJsonError as exc:
            raise UsageError(f"artifact body is not canonical JSON: {exc}") from exc
        if len(canonical) > self._limits.max_artifact_bytes:
            raise LimitExceeded(
                f"Artifact canonical JSON exceeds {self._limits.max_artifact_bytes} bytes"
            )
        return _Staged(
            new=artifact,
            canonical=canonical,
            sha256=sha256_hex_digest(canonical),
            created_at=artifact.created_at or self._clock(),
        )

    def _fix_events(self, events: Sequence[NewTraceEvent]) -> list[_Event]:
        now = self._clock()
        fixed = [
            _Event(new=e, event_id=e.event_id or str(uuid.uuid4()), timestamp=e.timestamp or now)
            for e in events
        ]
        if len({e.event_id for e in fixed}) != len(fixed):
            raise UsageError("event ids in one commit must differ")
        return fixed

    async def _check(
        self, txn: Txn, stored: StoredRun, staged: Sequence[_Staged], events: Sequence[_Event]
    ) -> None:
        run_id, limits = stored.record.run_id, self._limits
        ids: set[str] = set()
        for item in staged:
            artifact_id = item.new.artifact_id
            if artifact_id in ids or await txn.find_artifact(run_id, artifact_id) is not None:
                raise LedgerConflict("Artifact already exists in this run")
            ids.add(artifact_id)
        for event in events:
            if await txn.find_event(run_id, event.event_id) is not None:
                raise LedgerConflict("Trace event id already exists in this run")
        if stored.artifact_count + len(staged) > limits.max_artifacts:
            raise LimitExceeded(f"Run artifact limit of {limits.max_artifacts} exceeded")
        if stored.event_count + len(events) > limits.max_events:
            raise LimitExceeded(f"Run trace event limit of {limits.max_events} exceeded")
        types = [item.new.type for item in staged]
        if limits.evidence_type in types:
            evidence = await txn.evidence_since_plan(run_id, limits.evidence_type, limits.plan_type)
            for type_ in types:
                evidence = 0 if type_ == limits.plan_type else evidence
                evidence += type_ == limits.evidence_type
                if evidence > limits.max_evidence_per_plan:
                    raise LimitExceeded(
                        f"Evidence limit of {limits.max_evidence_per_plan} per WorkPlan exceeded"
                    )
        keys: set[tuple[str, str]] = set()
        for item in staged:
            key = item.new.quota_key
            if key is None:
                continue
            taken = (item.new.type, key) in keys
            if taken or await txn.quota_key_taken(run_id, item.new.type, key):
                raise LimitExceeded(f"Only one {item.new.type} is allowed per {key}")
            keys.add((item.new.type, key))

    def _link(
        self, stored: StoredRun, staged: Sequence[_Staged], events: Sequence[_Event]
    ) -> tuple[StoredRun, tuple[ArtifactRecord, ...], tuple[TraceRecord, ...]]:
        run_id = stored.record.run_id
        head, length = stored.chain_head, stored.chain_length
        records: list[ArtifactRecord] = []
        for offset, item in enumerate(staged, start=1):
            length += 1
            new = item.new
            draft = ArtifactRecord(
                run_id=run_id,
                artifact_id=new.artifact_id,
                type=new.type,
                schema_version=new.schema_version,
                producer=new.producer,
                sha256=item.sha256,
                size_bytes=len(item.canonical),
                source_refs=tuple(new.source_refs),
                redaction=new.redaction,
                quota_key=new.quota_key,
                created_at=item.created_at,
                position=stored.artifact_count + offset,
                chain_index=length,
                previous_hash=head,
                record_hash="",
            )
            head = artifact_hash(draft)
            records.append(replace(draft, record_hash=head))
        traces: list[TraceRecord] = []
        for offset, event in enumerate(events, start=1):
            length += 1
            new_event = event.new
            trace = TraceRecord(
                event_id=event.event_id,
                run_id=run_id,
                sequence=stored.event_count + offset,
                timestamp=event.timestamp,
                actor=new_event.actor,
                phase=new_event.phase,
                event_type=new_event.event_type,
                input_refs=tuple(new_event.input_refs),
                output_refs=tuple(new_event.output_refs),
                permission_decision=new_event.permission_decision,
                decision_summary=new_event.decision_summary,
                budget_snapshot=new_event.budget_snapshot,
                chain_index=length,
                previous_hash=head,
                record_hash="",
            )
            head = event_hash(trace)
            traces.append(replace(trace, record_hash=head))
        new_head = replace(
            stored,
            artifact_count=stored.artifact_count + len(records),
            event_count=stored.event_count + len(traces),
            chain_length=length,
            chain_head=head,
        )
        return new_head, tuple(records), tuple(traces)

    @staticmethod
    async def _write_records(
        txn: Txn,
        records: Sequence[ArtifactRecord],
        staged: Sequence[_Staged],
        traces: Sequence[TraceRecord],
    ) -> None:
        for record, item in zip(records, staged, strict=True):
            await txn.insert_artifact(record, item.canonical)
        for trace in traces:
            await txn.insert_event(trace)

    @staticmethod
    async def _locked_run(txn: Txn, run_id: str) -> StoredRun:
        stored = await txn.load_run(run_id)
        if stored is None:
            raise NotFound("Run not found")
        return stored

    async def _mutate(
        self, body: Callable[[Txn], Awaitable[Commit]], run_id: str, *, what: str
    ) -> Commit:
        if self._closed:
            raise UsageError("the ledger is closed")
        planned: list[Commit] = []

        async def attempt() -> Commit:
            try:
                async with self._backend.write() as txn:
                    commit = await body(txn)
                    planned.append(commit)
                return commit
            except OutcomeUnknownError:
                landed = await self._landed(run_id, planned[-1] if planned else None)
                if landed:
                    return planned[-1]
                raise TransientError(
                    "the step did not land; retrying it from a fresh read"
                ) from None

        return await retrying(attempt, what=what)

    async def _landed(self, run_id: str, commit: Commit | None) -> bool:
        """After a COMMIT whose outcome is unknown, read back whether this step is stored."""
        if commit is None or commit.replayed:
            return False
        async with self._read() as reader:
            if commit.artifacts:
                first = commit.artifacts[0]
                found = await reader.find_artifact(run_id, first.artifact_id)
                return found is not None and found.record_hash == first.record_hash
            if commit.events:
                event = commit.events[0]
                trace = await reader.find_event(run_id, event.event_id)
                return trace is not None and trace.record_hash == event.record_hash
            stored = await reader.load_run(run_id)
            return stored is not None and stored.record == commit.run


def _same_artifact(existing: ArtifactRecord, staged: _Staged) -> bool:
    new = staged.new
    return (
        existing.type,
        existing.schema_version,
        existing.producer,
        existing.sha256,
        existing.source_refs,
        existing.redaction,
        existing.quota_key,
    ) == (
        new.type,
        new.schema_version,
        new.producer,
        staged.sha256,
        tuple(new.source_refs),
        new.redaction,
        new.quota_key,
    )


def _verified(record: ArtifactRecord, data: bytes | None) -> ArtifactBody:
    problem = artifact_problem(record, data)
    if problem is not None or data is None:
        raise IntegrityError(f"Artifact integrity check failed: {problem}")
    return ArtifactBody(record=record, body=parse_json_strict(data), canonical=data)


def _verify_events(rows: Sequence[TraceRecord]) -> None:
    for row in rows:
        if event_hash(row) != row.record_hash:
            raise IntegrityError(f"Trace integrity check failed at sequence {row.sequence}")


async def _existing_run(reader: Reader, run_id: str) -> StoredRun:
    stored = await reader.load_run(run_id)
    if stored is None:
        raise NotFound("Run not found")
    return stored
