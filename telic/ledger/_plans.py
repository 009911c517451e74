"""The pure half of every mutation: stage the inputs, check them against what the run holds, link
them into the run's hash chain and decide the rows to write.

``LedgerEngine`` prepares a mutation here before its transaction (canonical bodies and digests,
event ids and timestamps, the ``Probe``), and the plan function it hands the backend runs these
checks and links on the ``Probed`` answer, inside the transaction. Nothing here does I/O, so a
backend may call a plan from a worker thread, and again on a retry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from telic._errors import LedgerConflict, LedgerError, LimitExceeded, NotFound, UsageError
from telic.protocol import CanonicalJsonError, canonical_json, sha256_hex_digest

from ._backstop import redact_event, refuse_secrets
from ._base import Plan, Probe, Probed, StoredRun
from ._chain import artifact_hash, broken_run, event_hash, run_hash
from ._records import ArtifactRecord, Commit, Limits, NewArtifact, NewTraceEvent, TraceRecord

__all__ = [
    "CHANGED",
    "FixedEvent",
    "Staged",
    "check",
    "existing",
    "fix_events",
    "link",
    "plan",
    "plan_events",
    "probe_for",
    "refuse_broken",
    "same_artifact",
    "stage",
]


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
    """Compute an artifact's canonical bytes and digest, refusing an oversized body.

    Bytes the writer passed (``NewArtifact.canonical``) are taken instead of serialising the body
    again, once re-hashed, and only when they were made from this very body object.

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
    """The run a mutation writes to, once it is known to be intact (``refuse_broken``), before
    anything else about it is judged.

    Raises:
        NotFound: the run does not exist.
        LedgerError: the run does not verify.
    """
    if probed.run is None:
        raise NotFound("Run not found")
    refuse_broken(probed.run, probed.tip)
    return probed.run


def refuse_broken(stored: StoredRun, tip: ArtifactRecord | TraceRecord | None) -> None:
    """Refuse every write to a run whose row or last record no longer checks out.

    Raises:
        LedgerError: naming the run and what does not check out; nothing is written.
    """
    problem = broken_run(stored, tip)
    if problem is not None:
        raise LedgerError(
            f"Run {stored.record.run_id} does not verify: {problem}. Telic refuses every write "
            f"to it; `telic verify {stored.record.run_id}` names the first broken record"
        )


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
    commit: Commit,
    staged: Sequence[Staged],
    head: StoredRun,
    expected_version: int | None = None,
    conflict: str = "",
) -> Plan:
    """The writes of a mutation: ``head`` with the committed run record (inserted, or updated
    if still at ``expected_version``), then its artifacts and events in chain order.

    Every plan that writes rows is made here, so this is where the secret floor stands
    (``_backstop.refuse_secrets``): whichever process or backend runs the plan, nothing holding
    a likely secret is written.

    Raises:
        SecretRefused: a record holds a likely secret; nothing is written.
    """
    changed = expected_version is None or commit.run is not head.record
    refuse_secrets(commit.run if changed else None, [item.new for item in staged], commit.events)
    row = replace(head, record=commit.run)
    return Plan(
        result=commit,
        run=replace(row, run_hash=run_hash(row)),
        expected_version=expected_version,
        conflict=conflict,
        artifacts=[(r, item.canonical) for r, item in zip(commit.artifacts, staged, strict=True)],
        events=commit.events,
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
    check(stored, probed, [], events, limits)
    head, _, traces = link(stored, [], events)
    commit = Commit(run=stored.record, artifacts=(), events=traces)
    return plan(commit, [], head, stored.record.version, CHANGED)


def same_artifact(existing: ArtifactRecord, staged: Staged) -> bool:
    """Whether a stored artifact is an identical replay of a staged one."""
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
