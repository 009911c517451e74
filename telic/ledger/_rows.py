"""The mapping between rows and records, and the sealing of runs stored before ``run_hash``.

A column list is the whole mapping: each column holds the record field of its name (a ``_json``
column holds it as canonical JSON text). Statements use ``?`` placeholders; PostgreSQL gets them
renumbered to ``$n`` (``dollar_placeholders``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Final

from ._base import StoredRun
from ._chain import decode_object, decode_refs, encode_json
from ._records import ArtifactRecord, RunRecord, TraceRecord

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


@dataclass(frozen=True, slots=True)
class _Mapping:
    """A column list read as a mapping, worked out once per table (it runs on every row)."""

    names: tuple[str, ...]
    """The record field each column holds, in column order."""
    values: Callable[[Any], tuple[Any, ...]]
    """Every column's field value, read from a record in one call."""
    json: tuple[tuple[int, str, bool], ...]
    """Each JSON column: its position, what a corrupt value is called, whether it holds refs."""


def _mapping(columns: str, path: Callable[[str], str] = str) -> _Mapping:
    """The mapping of ``columns``; ``path`` names where a field is read from a record."""
    split = columns.split(", ")
    names = tuple(column.removesuffix("_json") for column in split)
    json = tuple(
        (i, name.replace("_", " "), column.endswith("_refs_json"))
        for i, (column, name) in enumerate(zip(split, names, strict=True))
        if column.endswith("_json")
    )
    return _Mapping(names, attrgetter(*(path(name) for name in names)), json)


_RUN: Final = _mapping(RUN_COLUMNS, lambda name: name if name in _STORED else f"record.{name}")
_ARTIFACT: Final = _mapping(ARTIFACT_COLUMNS)
_EVENT: Final = _mapping(EVENT_COLUMNS)


def _record_fields(mapping: _Mapping, row: Row) -> dict[str, Any]:
    """The fields of a row (a row shorter than the mapping has only its first fields); each JSON
    column's text parsed leniently (``_chain.decode_object``)."""
    fields = dict(zip(mapping.names, row, strict=False))
    for i, what, refs in mapping.json:
        if i < len(row) and (text := row[i]) is not None:
            decode = decode_refs if refs else decode_object
            fields[mapping.names[i]] = decode(text, what=what)
    return fields


def _params(mapping: _Mapping, record: object) -> tuple[Any, ...]:
    """The values of the mapping's columns for ``record``: a JSON field as canonical JSON text
    (``None`` stays ``NULL``)."""
    values = list(mapping.values(record))
    for i, _, _ in mapping.json:
        if (value := values[i]) is not None:
            values[i] = encode_json(list(value) if isinstance(value, tuple) else value)
    return tuple(values)


def run_params(stored: StoredRun) -> tuple[Any, ...]:
    """Return the values of ``RUN_COLUMNS`` for a run row."""
    return _params(_RUN, stored)


def run_from_row(row: Row) -> StoredRun:
    """Build a stored run from a row of ``RUN_COLUMNS`` (or of the sealing migration's, which
    predate the later columns: the record's defaults stand for them)."""
    fields = _record_fields(_RUN, row)
    counters = {name: fields.pop(name) for name in _STORED}
    return StoredRun(record=RunRecord(**fields), **counters)


def artifact_params(record: ArtifactRecord) -> tuple[Any, ...]:
    """Return the values of ``ARTIFACT_COLUMNS`` for an artifact record."""
    return _params(_ARTIFACT, record)


def artifact_from_row(row: Row) -> ArtifactRecord:
    """Build an artifact record from a row of ``ARTIFACT_COLUMNS``."""
    return ArtifactRecord(**_record_fields(_ARTIFACT, row))


def event_params(record: TraceRecord) -> tuple[Any, ...]:
    """Return the values of ``EVENT_COLUMNS`` for a trace record."""
    return _params(_EVENT, record)


def event_from_row(row: Row) -> TraceRecord:
    """Build a trace record from a row of ``EVENT_COLUMNS``."""
    return TraceRecord(**_record_fields(_EVENT, row))
