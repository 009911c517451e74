"""The SQL both database backends run, and the mapping between rows and records.

Statements are written once with ``?`` placeholders; PostgreSQL gets them renumbered to ``$n``.
Where the dialects really differ (row locks, collation of the run listing) a backend passes its
own fragment in. A column list is the whole mapping: each column holds the record field of its
name (a ``_json`` column holds it as canonical JSON text).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias

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


_STORED: Final = frozenset(
    {"artifact_count", "event_count", "chain_length", "chain_head", "run_hash"}
)
"""The run columns ``StoredRun`` holds beside its record."""


_Fields: TypeAlias = tuple[tuple[str, str, bool], ...]


def _fields(columns: str) -> _Fields:
    """Each column's name, the record field it holds, and whether it holds JSON text."""
    return tuple((c, c.removesuffix("_json"), c.endswith("_json")) for c in columns.split(", "))


_RUN_FIELDS: Final = _fields(RUN_COLUMNS)
_ARTIFACT_FIELDS: Final = _fields(ARTIFACT_COLUMNS)
_EVENT_FIELDS: Final = _fields(EVENT_COLUMNS)


def _encode(value: object) -> object:
    """A JSON field as its column stores it: canonical JSON text (``None`` stays ``NULL``)."""
    if value is None:
        return None
    return encode_json(list(value) if isinstance(value, tuple) else value)


def _decode(column: str, value: Any) -> Any:
    """A JSON column's text as its field holds it, parsed leniently (``_chain.decode_object``)."""
    what = column.removesuffix("_json").replace("_", " ")
    if column.endswith("_refs_json"):
        return decode_refs(value, what=what)
    return decode_object(value, what=what)


def _record_fields(fields: _Fields, row: Row) -> dict[str, Any]:
    """The fields of a row (a row shorter than ``fields`` has only its first fields)."""
    return {
        name: _decode(column, value) if json and value is not None else value
        for (column, name, json), value in zip(fields, row, strict=False)
    }


def _params(fields: _Fields, field_of: Callable[[str], object]) -> tuple[Any, ...]:
    """The values of ``fields``' columns, each read by ``field_of`` from its field name."""
    return tuple(_encode(field_of(name)) if json else field_of(name) for _, name, json in fields)


def run_params(stored: StoredRun) -> tuple[Any, ...]:
    """Return the values of ``RUN_COLUMNS`` for a run row."""
    return _params(
        _RUN_FIELDS, lambda name: getattr(stored if name in _STORED else stored.record, name)
    )


def run_from_row(row: Row) -> StoredRun:
    """Build a stored run from a row of ``RUN_COLUMNS`` (or of the sealing migration's, which
    predate the later columns: the record's defaults stand for them)."""
    fields = _record_fields(_RUN_FIELDS, row)
    counters = {name: fields.pop(name) for name in _STORED}
    return StoredRun(record=RunRecord(**fields), **counters)


def artifact_params(record: ArtifactRecord) -> tuple[Any, ...]:
    """Return the values of ``ARTIFACT_COLUMNS`` for an artifact record."""
    return _params(_ARTIFACT_FIELDS, lambda name: getattr(record, name))


def artifact_from_row(row: Row) -> ArtifactRecord:
    """Build an artifact record from a row of ``ARTIFACT_COLUMNS``."""
    return ArtifactRecord(**_record_fields(_ARTIFACT_FIELDS, row))


def event_params(record: TraceRecord) -> tuple[Any, ...]:
    """Return the values of ``EVENT_COLUMNS`` for a trace record."""
    return _params(_EVENT_FIELDS, lambda name: getattr(record, name))


def event_from_row(row: Row) -> TraceRecord:
    """Build a trace record from a row of ``EVENT_COLUMNS``."""
    return TraceRecord(**_record_fields(_EVENT_FIELDS, row))
