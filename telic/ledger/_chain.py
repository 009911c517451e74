"""The per-run hash chain and the JSON column codec.

Artifacts and trace events of one run form a single chain in commit order. Each record stores the
hash of the record before it (the first stores the run's genesis hash), and its own hash is the
sha256 of the canonical JSON of all of its fields, including that previous hash and, for an
artifact, the body's digest. Rewriting any stored field, or any body, breaks the chain at that
record; ``verify_run`` walks it and names the first record that does not check out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Final, Literal, cast

from telic.protocol import (
    CanonicalJsonError,
    canonical_json,
    canonical_sha256,
    parse_json_strict as _parse,
    sha256_hex_digest,
)

from ._base import StoredRun
from ._records import JSON, ArtifactRecord, BrokenRecord, RunRecord, TraceRecord, VerifyReport


def genesis_hash(run_id: str) -> str:
    """Return the ``previous_hash`` of a run's first record, which binds the chain to the run."""
    return canonical_sha256({"kind": "genesis", "runId": run_id})


def _hashed(cls: type[ArtifactRecord | TraceRecord | RunRecord]) -> tuple[tuple[str, str], ...]:
    """Each field of ``cls`` a record hash covers (all but ``record_hash``), with its JSON key."""
    names = [f.name for f in fields(cls) if f.name != "record_hash"]
    return tuple((name, re.sub(r"_(.)", lambda m: m[1].upper(), name)) for name in names)


_ARTIFACT_HASHED: Final = _hashed(ArtifactRecord)
_EVENT_HASHED: Final = _hashed(TraceRecord)
_RUN_HASHED: Final = _hashed(RunRecord)
_LATER: Final = {"topology": None, "escalation_count": 0, "prior_run_id": None}
"""Run fields added after the seal was introduced, with the value every row written before them
holds: such a field is sealed only when it differs from it, so an older row keeps its hash."""


def _record_hash(
    kind: str, record: object, hashed: tuple[tuple[str, str], ...], **extra: object
) -> str:
    body: dict[str, object] = {"kind": kind, **extra}
    for name, key in hashed:
        value = getattr(record, name)
        if name not in _LATER or value != _LATER[name]:
            body[key] = list(value) if isinstance(value, tuple) else value
    return canonical_sha256(body)


def artifact_hash(record: ArtifactRecord) -> str:
    """Return the chain hash of an artifact record: every field but ``record_hash``, camelCase."""
    return _record_hash("artifact", record, _ARTIFACT_HASHED)


def event_hash(record: TraceRecord) -> str:
    """Return the chain hash of a trace record: every field but ``record_hash``, camelCase."""
    return _record_hash("event", record, _EVENT_HASHED)


def run_hash(stored: StoredRun) -> str:
    """Return the hash that seals a run row: every field of it, its counters and its chain head.

    The chain head binds the row to every record of the run, and this hash binds each field of
    the row (status, mode, repository root, controller state, version, …) to the head, so a row
    changed outside Telic fails ``verify_run`` and refuses every write (``broken_run``).
    """
    return _record_hash(
        "run",
        stored.record,
        _RUN_HASHED,
        artifactCount=stored.artifact_count,
        eventCount=stored.event_count,
        chainLength=stored.chain_length,
        chainHead=stored.chain_head,
    )


def _row_problem(stored: StoredRun) -> str | None:
    try:
        sealed = stored.run_hash is not None and run_hash(stored) == stored.run_hash
    except (CanonicalJsonError, ValueError, TypeError):
        sealed = False
    if not sealed:
        return (
            "the run row does not match its hash (its status, mode, phase, topology, repository "
            "root, prior run, controller state, version or counters were changed outside Telic)"
        )
    return None


def broken_run(stored: StoredRun, tip: ArtifactRecord | TraceRecord | None) -> str | None:
    """What is wrong with a run's row or the tip of its chain, read before every write; ``None``
    when both check out. The whole chain is walked by ``walk_chain`` (``telic verify``)."""
    problem = _row_problem(stored)
    if problem is not None:
        return problem
    if stored.chain_length == 0:
        fine = tip is None and stored.chain_head == genesis_hash(stored.record.run_id)
    elif tip is None or tip.chain_index != stored.chain_length:
        fine = False
    else:
        recomputed = artifact_hash(tip) if isinstance(tip, ArtifactRecord) else event_hash(tip)
        fine = recomputed == tip.record_hash == stored.chain_head
    if not fine:
        return "the run's last record does not match its chain head"
    return None


def walk_chain(
    stored: StoredRun,
    records: list[ArtifactRecord | TraceRecord],
    artifact_problems: Mapping[str, str],
) -> VerifyReport:
    """Recompute every link and record hash of a run; report the first break.

    ``artifact_problems`` maps an artifact id to what ``artifact_problem`` found wrong with its
    record or body; the caller computes it while reading the bodies.
    """
    run_id = stored.record.run_id
    records = sorted(records, key=lambda record: record.chain_index)
    head = genesis_hash(run_id)
    positions = sequences = 0
    for index, record in enumerate(records, start=1):
        kind: Literal["artifact", "event"]
        if isinstance(record, ArtifactRecord):
            positions += 1
            problem = _link_problem(record, index, head)
            problem = problem or artifact_problems.get(record.artifact_id)
            if problem is None and record.position != positions:
                problem = f"position is {record.position}, expected {positions}"
            broken_id, kind = record.artifact_id, "artifact"
        else:
            sequences += 1
            problem = _link_problem(record, index, head)
            if problem is None and event_hash(record) != record.record_hash:
                problem = "record fields do not match the record hash"
            if problem is None and record.sequence != sequences:
                problem = f"sequence is {record.sequence}, expected {sequences}"
            broken_id, kind = record.event_id, "event"
        if problem is not None:
            return _broken(index - 1, kind, broken_id, problem)
        head = record.record_hash
    counts = (stored.chain_length, stored.chain_head, stored.artifact_count, stored.event_count)
    problem = _row_problem(stored)
    if counts != (len(records), head, positions, sequences):
        problem = (
            "the run's chain head does not match its last record (records were removed or added)"
        )
    if problem is not None:
        return _broken(len(records), "run", run_id, problem)
    return VerifyReport(ok=True, records_checked=len(records), first_broken=None)


def _broken(
    checked: int, kind: Literal["artifact", "event", "run"], broken_id: str, reason: str
) -> VerifyReport:
    broken = BrokenRecord(kind=kind, id=broken_id, reason=reason)
    return VerifyReport(ok=False, records_checked=checked, first_broken=broken)


def _link_problem(record: ArtifactRecord | TraceRecord, index: int, head: str) -> str | None:
    if record.chain_index != index:
        return f"chain index is {record.chain_index}, expected {index} (a record is missing)"
    if record.previous_hash != head:
        return "previous hash does not match the record before it"
    return None


def artifact_problem(record: ArtifactRecord, data: bytes | None) -> str | None:
    if artifact_hash(record) != record.record_hash:
        return "record fields do not match the record hash"
    if data is None:
        return "the blob is missing"
    if sha256_hex_digest(data) != record.sha256 or len(data) != record.size_bytes:
        return "the blob does not match its digest"
    try:
        if canonical_json(_parse(data)) != data:
            return "the blob is not canonical JSON"
    except (CanonicalJsonError, ValueError):
        return "the blob is not valid JSON"
    return None


def encode_json(value: object) -> str:
    """Return the canonical JSON text of a value about to be stored in a JSON column."""
    return canonical_json(value).decode("utf-8")


def decode_object(text: str | bytes, *, what: str) -> Mapping[str, JSON]:
    """Parse a stored JSON object column.

    A column that no longer parses is returned as ``{"$corrupt": <text>}`` rather than raised:
    the record's hash then fails to match, so ``verify_run`` can name the record and a read of it
    fails with ``IntegrityError``, instead of the whole run becoming unreadable.
    """
    value = _lenient(text)
    if not isinstance(value, dict):
        return {"$corrupt": _text(text), "$column": what}
    return cast("Mapping[str, JSON]", value)


def decode_refs(text: str | bytes, *, what: str) -> tuple[str, ...]:
    """Parse a stored JSON array of reference strings (leniently, as ``decode_object``)."""
    value = _lenient(text)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return (f"$corrupt {what}: {_text(text)}",)
    return tuple(cast("list[str]", value))


def _text(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")


def _lenient(text: str | bytes) -> Any:
    try:
        return _parse(text)
    except (CanonicalJsonError, ValueError):
        return None
