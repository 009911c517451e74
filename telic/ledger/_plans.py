"""The ledger's rules, written once over the ``Backend`` seam (``_base``): ``Ledger`` and the
pure plans it hands a backend.

A plan checks what its probe found (version, duplicate ids, quotas), links the new records into
the run's hash chain and returns every row to write; the secret floor (``_backstop``) stands in
it, so a hit raises ``SecretRefused`` before any row is written. The engine prepares a mutation
once, before its transaction (canonical bodies and digests, event ids and timestamps, the
``Probe``), so that after a connection lost during COMMIT it can tell from the stored records
whether its own step landed, instead of blindly running it again.

The ``telic hook`` command writes its traced decision through ``fix_events``, ``probe_for`` and
``plan_events`` from a fresh process: this module imports nothing it does not need at once
(``_retry`` loads its backoff machinery only after a failed attempt).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Final

from telic._errors import (
    IntegrityError,
    Issue,
    LedgerConflict,
    LedgerError,
    LimitExceeded,
    NotFound,
    UsageError,
)
from telic.protocol import CanonicalJsonError, canonical_json, parse_json_strict, sha256_hex_digest

from ._backstop import redact_event, refuse_secrets
from ._base import Backend, Plan, Probe, Probed, Reader, RunRows, Selection, StoredRun
from ._chain import (
    artifact_hash,
    artifact_problem,
    broken_run,
    event_hash,
    genesis_hash,
    run_hash,
    walk_chain,
)
from ._clock import utc_now
from ._records import (
    FIXED_RUN_FIELDS,
    ArtifactBody,
    ArtifactRecord,
    Commit,
    Limits,
    NewArtifact,
    NewTraceEvent,
    RunChanges,
    RunRecord,
    TracePage,
    TraceRecord,
    VerifyReport,
)
from ._retry import OutcomeUnknownError, TransientError, retrying


@dataclass(frozen=True, slots=True)
class Staged:
    """An artifact ready to store: its input, canonical bytes and timestamp."""

    new: NewArtifact
    canonical: bytes
    sha256: str
    created_at: str


@dataclass(frozen=True, slots=True)
class FixedEvent:
    """A trace event with its id and timestamp fixed before the first attempt."""

    new: NewTraceEvent
    event_id: str
    timestamp: str


def stage(artifact: NewArtifact, limits: Limits, clock: Callable[[], str]) -> Staged:
    """Compute an artifact's canonical bytes and digest (re-hashing the writer's
    ``NewArtifact.canonical`` when given), refusing an oversized body.

    Raises:
        UsageError: the body has no canonical JSON form, or the given canonical form belongs to
            another body or does not match its digest.
        LimitExceeded: the canonical body is over the size limit.
    """
    given = artifact.canonical
    if given is None:
        try:
            canonical = canonical_json(artifact.body)
        except CanonicalJsonError as exc:
            raise UsageError(f"artifact body is not canonical JSON: {exc}") from exc
        digest = sha256_hex_digest(canonical)
    else:
        canonical, digest = given.data, sha256_hex_digest(given.data)
        if given.body is not artifact.body or digest != given.sha256:
            raise UsageError(
                f"artifact {artifact.artifact_id}: the canonical form given was not computed "
                "from its body; refusing to store it"
            )
    if len(canonical) > limits.max_artifact_bytes:
        raise LimitExceeded(f"Artifact canonical JSON exceeds {limits.max_artifact_bytes} bytes")
    return Staged(
        new=artifact,
        canonical=canonical,
        sha256=digest,
        created_at=artifact.created_at or clock(),
    )


def fix_events(events: Sequence[NewTraceEvent], clock: Callable[[], str]) -> list[FixedEvent]:
    """Give every event its id and timestamp, once, so that a retry writes the same ones, and
    redact Telic's own text about it (``_backstop.redact_event``) before it is ever hashed."""
    now = clock()
    fixed = [
        FixedEvent(
            new=redact_event(e), event_id=e.event_id or _new_id(), timestamp=e.timestamp or now
        )
        for e in events
    ]
    if len({e.event_id for e in fixed}) != len(fixed):
        raise UsageError("event ids in one commit must differ")
    return fixed


def _new_id() -> str:
    # Imported here: ``uuid`` loads ``platform``, which the hook's fresh process (whose events
    # carry their ids) need not pay for.
    import uuid

    return str(uuid.uuid4())


def probe_for(staged: Sequence[Staged], events: Sequence[FixedEvent], limits: Limits) -> Probe:
    """What ``check`` needs to know about the run, asked in one read."""
    evidence = any(item.new.type == limits.evidence_type for item in staged)
    return Probe(
        artifact_ids=[item.new.artifact_id for item in staged],
        event_ids=[event.event_id for event in events],
        quota_keys=[
            (item.new.type, item.new.quota_key) for item in staged if item.new.quota_key is not None
        ],
        evidence=(limits.evidence_type, limits.plan_type) if evidence else None,
    )


def check(
    stored: StoredRun,
    probed: Probed,
    staged: Sequence[Staged],
    events: Sequence[FixedEvent],
    limits: Limits,
) -> None:
    """Refuse duplicate ids and exceeded quotas (``LedgerConflict``, ``LimitExceeded``)."""
    ids: set[str] = set()
    for item in staged:
        artifact_id = item.new.artifact_id
        if artifact_id in ids or artifact_id in probed.artifacts:
            raise LedgerConflict("Artifact already exists in this run")
        ids.add(artifact_id)
    for event in events:
        if event.event_id in probed.event_ids:
            raise LedgerConflict("Trace event id already exists in this run")
    if stored.artifact_count + len(staged) > limits.max_artifacts:
        raise LimitExceeded(f"Run artifact limit of {limits.max_artifacts} exceeded")
    if stored.event_count + len(events) > limits.max_events:
        raise LimitExceeded(f"Run trace event limit of {limits.max_events} exceeded")
    types = [item.new.type for item in staged]
    if limits.evidence_type in types:
        evidence = probed.evidence_since_plan
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
        if taken or (item.new.type, key) in probed.quota_keys:
            raise LimitExceeded(f"Only one {item.new.type} is allowed per {key}")
        keys.add((item.new.type, key))


def existing(probed: Probed) -> StoredRun:
    """The run a mutation writes to, once its row and last record are known to check out, before
    anything else about it is judged.

    Raises:
        NotFound: the run does not exist.
        LedgerError: the run does not verify (naming what does not check out); nothing is
            written to it.
    """
    stored = probed.run
    if stored is None:
        raise NotFound("Run not found")
    problem = broken_run(stored, probed.tip)
    if problem is not None:
        raise LedgerError(
            f"Run {stored.record.run_id} does not verify: {problem}. Telic refuses every write "
            f"to it; `telic verify {stored.record.run_id}` names the first broken record"
        )
    return stored


def link(
    stored: StoredRun, staged: Sequence[Staged], events: Sequence[FixedEvent]
) -> tuple[StoredRun, tuple[ArtifactRecord, ...], tuple[TraceRecord, ...]]:
    """Place the new records after the run's chain head; return the new head and the records."""
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


def plan(
    stored: StoredRun,
    probed: Probed,
    run: RunRecord,
    staged: Sequence[Staged],
    events: Sequence[FixedEvent],
    limits: Limits,
    expected_version: int | None = None,
    conflict: str = "",
) -> Plan:
    """The writes of a mutation: ``staged`` and ``events`` checked (``check``) and linked after
    ``stored``'s chain head (``link``), and the run row holding ``run`` (inserted, or updated if
    still at ``expected_version``), then the new artifacts and events in chain order. Every
    plan that writes rows is made here, so the secret floor (``_backstop``) stands here.

    Raises:
        LedgerConflict, LimitExceeded: as ``check``.
        SecretRefused: a record holds a likely secret; nothing is written.
    """
    check(stored, probed, staged, events, limits)
    head, records, traces = link(stored, staged, events)
    changed = expected_version is None or run is not stored.record
    refuse_secrets(run if changed else None, [item.new for item in staged], traces)
    row = replace(head, record=run)
    return Plan(
        result=Commit(run=run, artifacts=records, events=traces),
        run=replace(row, run_hash=run_hash(row)),
        expected_version=expected_version,
        conflict=conflict,
        artifacts=[(r, item.canonical) for r, item in zip(records, staged, strict=True)],
        events=traces,
    )


CHANGED = "the run changed during the transaction"
"""The conflict of a mutation that keeps the run version: another writer moved the run."""


def plan_events(
    probed: Probed, events: Sequence[FixedEvent], limits: Limits, *, once: bool = False
) -> Plan:
    """The plan of ``Ledger.record_events``: the events appended to the run's chain, alone.

    With ``once``, events whose id the run already holds are left out (they were recorded,
    perhaps by another process); when none is left, nothing is written.

    Raises:
        NotFound: the run does not exist.
        LedgerConflict, LimitExceeded: as ``check``.
    """
    stored = existing(probed)
    if once:
        events = [event for event in events if event.event_id not in probed.event_ids]
        if not events:
            return Plan(result=Commit(run=stored.record, artifacts=(), events=()))
    return plan(stored, probed, stored.record, [], events, limits, stored.record.version, CHANGED)


_REPLAYED: Final = ("type", "schema_version", "producer", "redaction", "quota_key")
"""The metadata an identical replay of an artifact repeats, beside its digest and source refs."""


def same_artifact(existing: ArtifactRecord, staged: Staged) -> bool:
    """Whether a stored artifact is an identical replay of a staged one."""
    new = staged.new
    return (
        existing.sha256 == staged.sha256
        and existing.source_refs == tuple(new.source_refs)
        and all(getattr(existing, name) == getattr(new, name) for name in _REPLAYED)
    )


# ---------------------------------------------------------------------- the engine

_VERIFY_BATCH = 64
"""Bodies ``verify_run`` holds in memory at once."""


class Ledger:
    """A run store: immutable, content-addressed artifacts, a hash-chained trace, fenced steps.

    Every rule is kept here once, over the ``Backend`` that holds the rows (``open_ledger``
    chooses it by URL). Every mutation is one transaction. Nothing is written when a mutation
    raises.
    """

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

    # ------------------------------------------------------------------ mutations

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
        staged = [
            stage(new, self._limits, self._clock) for new in (request_artifact, envelope_artifact)
        ]
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
            return plan(empty, probed, run, staged, events, self._limits)

        return await self._mutate(run.run_id, staged, events, decide, "create_run")

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
        if new_run.run_id != run_id:
            raise UsageError("new_run.run_id must equal run_id")
        if new_run.version != expected_version + 1:
            raise UsageError("a committed step must raise the run version by exactly 1")
        staged = [stage(artifact, self._limits, self._clock) for artifact in artifacts]
        fixed = fix_events(events, self._clock)

        def decide(probed: Probed) -> Plan:
            stored = existing(probed)
            current = stored.record
            if current.version != expected_version:
                raise LedgerConflict(
                    f"Stale run version {expected_version}; current version is {current.version}"
                )
            for name in FIXED_RUN_FIELDS:
                if getattr(current, name) != getattr(new_run, name):
                    raise UsageError(f"{name} of a run cannot change")
            stale = f"Stale run version {expected_version}"
            return plan(
                stored, probed, new_run, staged, fixed, self._limits, expected_version, stale
            )

        return await self._mutate(run_id, staged, fixed, decide, "commit_step")

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
        staged = [stage(artifact, self._limits, self._clock)]
        fixed = fix_events(events, self._clock)

        def decide(probed: Probed) -> Plan:
            stored = existing(probed)
            found = probed.artifacts.get(artifact.artifact_id)
            if found is not None:
                if same_artifact(found, staged[0]):
                    replay = Commit(run=stored.record, artifacts=(found,), events=(), replayed=True)
                    return Plan(result=replay)
                raise LedgerConflict(
                    "Artifact already exists in this run with different content or metadata"
                )
            version = stored.record.version
            return plan(
                stored, probed, stored.record, staged, fixed, self._limits, version, CHANGED
            )

        return await self._mutate(run_id, staged, fixed, decide, "store_supporting")

    async def record_events(
        self, run_id: str, events: Sequence[NewTraceEvent], *, once: bool = False
    ) -> tuple[TraceRecord, ...]:
        """Append trace events alone, such as the DENY decision of a rejected submission.

        An event id the run already holds is a ``LedgerConflict``; with ``once`` it is skipped
        instead (and not returned). The run is read inside the write's transaction, so of
        several processes recording the same event id at once exactly one writes it.
        """
        fixed = fix_events(events, self._clock)

        def decide(probed: Probed) -> Plan:
            return plan_events(probed, fixed, self._limits, once=once)

        return (await self._mutate(run_id, [], fixed, decide, "record_events")).events

    # ------------------------------------------------------------------ reads

    async def get_run(self, run_id: str) -> RunRecord:
        """Return the run row. Raises ``NotFound``."""
        return (await self._read_run(run_id, Selection())).run.record

    async def read_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return an artifact of a run with its body, re-verifying digest and record hash.

        Raises:
            NotFound: the run has no artifact with this id (ids are scoped to their run).
            IntegrityError: the stored bytes or record no longer match their hashes.
        """
        async with self._read() as reader:
            found = await reader.read_artifact(run_id, artifact_id)
        if found is None:
            raise NotFound("Artifact not found in this run")
        return _verified(*found)

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
        """Return the run's artifact records in commit order. Raises ``NotFound``."""
        return tuple((await self._read_run(run_id, Selection(artifacts_after=0))).artifacts)

    async def page_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TracePage:
        """Return up to ``limit`` trace events with a sequence above ``after_sequence``."""
        if after_sequence < 0 or limit < 1:
            raise UsageError("after_sequence must be >= 0 and limit >= 1")
        selection = Selection(events_after=after_sequence, events_limit=limit + 1)
        rows = (await self._read_run(run_id, selection)).events
        _verify_events(rows)
        return TracePage(events=tuple(rows[:limit]), has_more=len(rows) > limit)

    async def list_runs(self, limit: int = 20) -> tuple[RunRecord, ...]:
        """Return the runs' records, newest ``updated_at`` first, ties by run id ascending."""
        if limit < 1:
            raise UsageError("limit must be >= 1")
        async with self._read() as reader:
            return tuple(await reader.runs(limit))

    async def verify_run(self, run_id: str) -> VerifyReport:
        """Recompute every blob digest and chain link of a run; report the first broken record."""
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
        """Release connections. The ledger cannot be used afterwards."""
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

    async def _mutate(
        self,
        run_id: str,
        staged: Sequence[Staged],
        events: Sequence[FixedEvent],
        decide: Callable[[Probed], Plan],
        what: str,
    ) -> Commit:
        if self._closed:
            raise UsageError("the ledger is closed")
        probe = probe_for(staged, events, self._limits)
        planned: list[Commit] = []

        def remembered(probed: Probed) -> Plan:
            decided = decide(probed)
            planned.append(decided.result)
            return decided

        async def attempt() -> Commit:
            try:
                return (await self._backend.mutate(run_id, probe, remembered)).result
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
                found = await reader.read_artifact(run_id, first.artifact_id)
                return found is not None and found[0].record_hash == first.record_hash
            if commit.events:
                event = commit.events[0]
                trace = await reader.find_event(run_id, event.event_id)
                return trace is not None and trace.record_hash == event.record_hash
            rows = await reader.read_run(run_id, Selection())
            return rows is not None and rows.run.record == commit.run


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
