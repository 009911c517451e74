"""``LedgerEngine``: every rule of the ledger, written once over the ``Backend`` seam.

A mutation is a ``Probe`` (what it must know of the run) and a pure decision (``_plans``) that
the backend runs inside one transaction holding the run's write lock: it checks what the probe
found (version, duplicate ids, quotas), links the new records into the run's chain and returns
every row to write. A failure anywhere rolls the whole transaction back. Event ids and
timestamps are fixed before the first attempt, so that after a connection lost during COMMIT the
engine can tell from the stored records whether its own step landed, instead of blindly running
it again. A read is one ``Reader`` call, so every read sees one snapshot. Every plan that writes
rows scans what it would store for secrets (``_backstop``, called by ``_plans``): a hit raises
``SecretRefused`` inside the transaction, before any row is written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from telic._errors import IntegrityError, Issue, LedgerConflict, NotFound, UsageError
from telic.protocol import parse_json_strict

from ._base import Backend, Ledger, Plan, Probe, Probed, Reader, RunRows, Selection, StoredRun
from ._chain import artifact_hash, artifact_problem, event_hash, genesis_hash, walk_chain
from ._clock import utc_now as utc_now
from ._plans import (
    CHANGED,
    Staged,
    check,
    existing,
    fix_events,
    link,
    plan as plan_of,
    plan_events,
    probe_for,
    same_artifact,
    stage,
)
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

_IMMUTABLE_RUN_FIELDS = (
    "schema_version",
    "repository_root",
    "requested_mode",
    "created_at",
    "prior_run_id",
)
_CHANGED = CHANGED
_VERIFY_BATCH = 64
"""Bodies ``verify_run`` holds in memory at once."""


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
        events = fix_events(first_events, self._clock)

        def decide(probed: Probed) -> Plan:
            if probed.run is not None:
                raise LedgerConflict("Run already exists")
            empty = StoredRun(
                record=run,
                artifact_count=0,
                event_count=0,
                chain_length=0,
                chain_head=genesis_hash(run.run_id),
            )
            check(empty, probed, staged, events, self._limits)
            head, records, traces = link(empty, staged, events)
            return plan_of(Commit(run=run, artifacts=records, events=traces), staged, head)

        probe = probe_for(staged, events, self._limits)
        return await self._mutate(run.run_id, probe, decide, "create_run")

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
        fixed = fix_events(events, self._clock)

        def decide(probed: Probed) -> Plan:
            stored = _existing(probed)
            current = stored.record
            if current.version != expected_version:
                raise LedgerConflict(
                    f"Stale run version {expected_version}; current version is {current.version}"
                )
            for name in _IMMUTABLE_RUN_FIELDS:
                if getattr(current, name) != getattr(new_run, name):
                    raise UsageError(f"{name} of a run cannot change")
            check(stored, probed, staged, fixed, self._limits)
            head, records, traces = link(stored, staged, fixed)
            commit = Commit(run=new_run, artifacts=records, events=traces)
            stale = f"Stale run version {expected_version}"
            return plan_of(commit, staged, head, expected_version, stale)

        probe = probe_for(staged, fixed, self._limits)
        return await self._mutate(run_id, probe, decide, "commit_step")

    async def store_supporting(
        self, run_id: str, artifact: NewArtifact, events: Sequence[NewTraceEvent]
    ) -> Commit:
        staged = [self._stage(artifact)]
        fixed = fix_events(events, self._clock)

        def decide(probed: Probed) -> Plan:
            stored = _existing(probed)
            existing = probed.artifacts.get(artifact.artifact_id)
            if existing is not None:
                if same_artifact(existing, staged[0]):
                    replay = Commit(
                        run=stored.record, artifacts=(existing,), events=(), replayed=True
                    )
                    return Plan(result=replay)
                raise LedgerConflict(
                    "Artifact already exists in this run with different content or metadata"
                )
            check(stored, probed, staged, fixed, self._limits)
            head, records, traces = link(stored, staged, fixed)
            commit = Commit(run=stored.record, artifacts=records, events=traces)
            return plan_of(commit, staged, head, stored.record.version, _CHANGED)

        probe = probe_for(staged, fixed, self._limits)
        return await self._mutate(run_id, probe, decide, "store_supporting")

    async def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent], *, once: bool = False
    ) -> tuple[TraceRecord, ...]:
        fixed = fix_events(events, self._clock)
        limits = self._limits
        probe = probe_for([], fixed, limits)
        commit = await self._mutate(
            run_id,
            probe,
            lambda probed: plan_events(probed, fixed, limits, once=once),
            "record_events",
        )
        return commit.events

    # ------------------------------------------------------------------ reads

    async def get_run(self, run_id: str) -> RunRecord:
        async with self._read() as reader:
            stored = await reader.load_run(run_id)
        if stored is None:
            raise NotFound("Run not found")
        return stored.record

    async def read_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        async with self._read() as reader:
            found = await reader.read_artifact(run_id, artifact_id)
        if found is None:
            raise NotFound("Artifact not found in this run")
        return _verified(*found)

    async def read_changes(
        self, run_id: str, after_artifact: int = 0, after_event: int = 0
    ) -> RunChanges:
        if after_artifact < 0 or after_event < 0:
            raise UsageError("after_artifact and after_event must be >= 0")
        selection = Selection(
            artifacts_after=after_artifact,
            bodies=True,
            events_after=after_event,
            trust_counters=True,  # the caller goes on from the counters returned with them
        )
        rows = await self._read_run(run_id, selection)
        _verify_events(rows.events)
        stored = rows.run
        return RunChanges(
            run=stored.record,
            artifact_count=stored.artifact_count,
            event_count=stored.event_count,
            artifacts=tuple(_verified(r, rows.bodies.get(r.sha256)) for r in rows.artifacts),
            events=tuple(rows.events),
        )

    async def list_artifacts(self, run_id: str) -> tuple[ArtifactRecord, ...]:
        return tuple((await self._read_run(run_id, Selection(artifacts_after=0))).artifacts)

    async def page_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TracePage:
        if after_sequence < 0 or limit < 1:
            raise UsageError("after_sequence must be >= 0 and limit >= 1")
        selection = Selection(events_after=after_sequence, events_limit=limit + 1)
        rows = (await self._read_run(run_id, selection)).events
        _verify_events(rows)
        return TracePage(events=tuple(rows[:limit]), has_more=len(rows) > limit)

    async def list_runs(self, limit: int = 20) -> tuple[RunSummary, ...]:
        if limit < 1:
            raise UsageError("limit must be >= 1")
        async with self._read() as reader:
            return tuple(await reader.runs(limit))

    async def verify_run(self, run_id: str) -> VerifyReport:
        rows = await self._read_run(run_id, Selection(artifacts_after=0, events_after=0))
        # Bodies are immutable once stored, so they are read in batches after the snapshot of
        # the records, which keeps only a batch of them in memory at a time.
        problems: dict[str, str] = {}
        for start in range(0, len(rows.artifacts), _VERIFY_BATCH):
            batch = rows.artifacts[start : start + _VERIFY_BATCH]
            async with self._read() as reader:
                bodies = await reader.read_bodies([record.sha256 for record in batch])
            for record in batch:
                problem = artifact_problem(record, bodies.get(record.sha256))
                if problem is not None:
                    problems[record.artifact_id] = problem
        return walk_chain(rows.run, [*rows.artifacts, *rows.events], problems)

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

    async def _read_run(self, run_id: str, selection: Selection) -> RunRows:
        async with self._read() as reader:
            rows = await reader.read_run(run_id, selection)
        if rows is None:
            raise NotFound("Run not found")
        return rows

    def _stage(self, artifact: NewArtifact) -> Staged:
        return stage(artifact, self._limits, self._clock)

    async def _mutate(
        self, run_id: str, probe: Probe, decide: Callable[[Probed], Plan], what: str
    ) -> Commit:
        if self._closed:
            raise UsageError("the ledger is closed")
        planned: list[Commit] = []

        def plan(probed: Probed) -> Plan:
            decided = decide(probed)
            planned.append(decided.result)
            return decided

        async def attempt() -> Commit:
            try:
                return (await self._backend.mutate(run_id, probe, plan)).result
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


def _verified(record: ArtifactRecord, data: bytes | None) -> ArtifactBody:
    problem = artifact_problem(record, data)
    if problem is not None or data is None:
        # The issue code tells a body that is gone from one that no longer matches (replay's
        # digestStatus ``missing`` versus ``mismatch``) without reading the message.
        intact_row = artifact_hash(record) == record.record_hash
        code = "blob_missing" if data is None and intact_row else "digest_mismatch"
        issue = Issue("sha256", code, f"{record.artifact_id}: {problem}")
        raise IntegrityError(f"Artifact integrity check failed: {problem}", issues=(issue,))
    return ArtifactBody(record=record, body=parse_json_strict(data), canonical=data)


def _verify_events(rows: Sequence[TraceRecord]) -> None:
    for row in rows:
        if event_hash(row) != row.record_hash:
            raise IntegrityError(f"Trace integrity check failed at sequence {row.sequence}")


def _existing(probed: Probed) -> StoredRun:
    return existing(probed)
