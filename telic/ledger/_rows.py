"""The SQL both database backends run, and the mapping between rows and records.

Statements are written once with ``?`` placeholders; PostgreSQL gets them renumbered to ``$n``.
Where the dialects really differ (row locks, collation of the run listing) a backend passes its
own fragment in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ._base import StoredRun
from ._chain import decode_object, decode_refs, encode_json
from ._records import ArtifactRecord, RunRecord, TraceRecord

__all__ = [
    "ARTIFACT_COLUMNS",
    "EVENT_COLUMNS",
    "RUN_COLUMNS",
    "SEALING_MIGRATION",
    "SEAL_RUN",
    "UNSEALED_RUNS",
    "Row",
    "artifact_from_row",
    "artifact_params",
    "dollar_placeholders",
    "event_from_row",
    "event_params",
    "run_from_row",
    "run_params",
    "seal_params",
]

Row = Sequence[Any]

_SEALED_COLUMNS: Final = (
    "run_id, schema_version, repository_root, requested_mode, status, phase, resume_phase, "
    "version, prompt_revisions_remaining, remediations_remaining, outcome_hint, created_at, "
    "updated_at, controller_state_json, artifact_count, event_count, chain_length, chain_head, "
    "run_hash"
)
"""The run columns as the sealing migration finds them (later schemas add columns after them)."""
RUN_COLUMNS: Final = f"{_SEALED_COLUMNS}, topology, escalation_count, prior_run_id"
ARTIFACT_COLUMNS: Final = (
    "run_id, artifact_id, type, schema_version, producer, sha256, size_bytes, source_refs_json, "
    "redaction, quota_key, created_at, position, chain_index, previous_hash, record_hash"
)
EVENT_COLUMNS: Final = (
    "run_id, event_id, sequence, timestamp, actor, phase, event_type, input_refs_json, "
    "output_refs_json, permission_decision_json, decision_summary, budget_snapshot_json, "
    "chain_index, previous_hash, record_hash"
)


UNSEALED_RUNS: Final = f"SELECT {_SEALED_COLUMNS} FROM runs WHERE run_hash IS NULL"
SEAL_RUN: Final = "UPDATE runs SET run_hash = ? WHERE run_id = ?"
SEALING_MIGRATION: Final = "run_hash"
"""The migration that adds ``run_hash``: applying it seals the rows written before it
(``seal_params``), once; afterwards a row without a hash is a broken one."""


def seal_params(row: Row) -> tuple[str, str]:
    """The parameters of ``SEAL_RUN`` for a row of ``UNSEALED_RUNS``."""
    from ._chain import run_hash

    stored = run_from_row(row)
    return run_hash(stored), stored.record.run_id


def dollar_placeholders(sql: str) -> str:
    """Renumber ``?`` placeholders as ``$1, $2, ...`` (the statements hold no literal ``?``)."""
    parts = sql.split("?")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], start=1)) + parts[-1]


def run_params(stored: StoredRun) -> tuple[Any, ...]:
    """Return the values of ``RUN_COLUMNS`` for a run row."""
    r = stored.record
    return (
        r.run_id,
        r.schema_version,
        r.repository_root,
        r.requested_mode,
        r.status,
        r.phase,
        r.resume_phase,
        r.version,
        r.prompt_revisions_remaining,
        r.remediations_remaining,
        r.outcome_hint,
        r.created_at,
        r.updated_at,
        encode_json(r.controller_state),
        stored.artifact_count,
        stored.event_count,
        stored.chain_length,
        stored.chain_head,
        stored.run_hash,
        r.topology,
        r.escalation_count,
        r.prior_run_id,
    )


def run_from_row(row: Row) -> StoredRun:
    """Build a stored run from a row of ``RUN_COLUMNS`` (or of the sealing migration's, which
    predate ``prior_run_id``)."""
    record = RunRecord(
        run_id=row[0],
        schema_version=row[1],
        repository_root=row[2],
        requested_mode=row[3],
        status=row[4],
        phase=row[5],
        resume_phase=row[6],
        version=row[7],
        prompt_revisions_remaining=row[8],
        remediations_remaining=row[9],
        outcome_hint=row[10],
        created_at=row[11],
        updated_at=row[12],
        controller_state=decode_object(row[13], what="controller state"),
        # A row read by the sealing migration predates the later columns.
        topology=row[19] if len(row) > 19 else None,
        escalation_count=row[20] if len(row) > 20 else 0,
        prior_run_id=row[21] if len(row) > 21 else None,
    )
    return StoredRun(
        record=record,
        artifact_count=row[14],
        event_count=row[15],
        chain_length=row[16],
        chain_head=row[17],
        run_hash=row[18],
    )


def artifact_params(record: ArtifactRecord) -> tuple[Any, ...]:
    """Return the values of ``ARTIFACT_COLUMNS`` for an artifact record."""
    return (
        record.run_id,
        record.artifact_id,
        record.type,
        record.schema_version,
        record.producer,
        record.sha256,
        record.size_bytes,
        encode_json(list(record.source_refs)),
        record.redaction,
        record.quota_key,
        record.created_at,
        record.position,
        record.chain_index,
        record.previous_hash,
        record.record_hash,
    )


def artifact_from_row(row: Row) -> ArtifactRecord:
    """Build an artifact record from a row of ``ARTIFACT_COLUMNS``."""
    return ArtifactRecord(
        run_id=row[0],
        artifact_id=row[1],
        type=row[2],
        schema_version=row[3],
        producer=row[4],
        sha256=row[5],
        size_bytes=row[6],
        source_refs=decode_refs(row[7], what="source refs"),
        redaction=row[8],
        quota_key=row[9],
        created_at=row[10],
        position=row[11],
        chain_index=row[12],
        previous_hash=row[13],
        record_hash=row[14],
    )


def event_params(record: TraceRecord) -> tuple[Any, ...]:
    """Return the values of ``EVENT_COLUMNS`` for a trace record."""
    decision = record.permission_decision
    return (
        record.run_id,
        record.event_id,
        record.sequence,
        record.timestamp,
        record.actor,
        record.phase,
        record.event_type,
        encode_json(list(record.input_refs)),
        encode_json(list(record.output_refs)),
        None if decision is None else encode_json(decision),
        record.decision_summary,
        encode_json(record.budget_snapshot),
        record.chain_index,
        record.previous_hash,
        record.record_hash,
    )


def event_from_row(row: Row) -> TraceRecord:
    """Build a trace record from a row of ``EVENT_COLUMNS``."""
    return TraceRecord(
        run_id=row[0],
        event_id=row[1],
        sequence=row[2],
        timestamp=row[3],
        actor=row[4],
        phase=row[5],
        event_type=row[6],
        input_refs=decode_refs(row[7], what="input refs"),
        output_refs=decode_refs(row[8], what="output refs"),
        permission_decision=None
        if row[9] is None
        else decode_object(row[9], what="permission decision"),
        decision_summary=row[10],
        budget_snapshot=decode_object(row[11], what="budget snapshot"),
        chain_index=row[12],
        previous_hash=row[13],
        record_hash=row[14],
    )
