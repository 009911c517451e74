"""The ledger's secret backstop: no record holding a likely secret is ever committed.

The gates above the ledger (``telic.controller``: submissions, run arguments, casts, returns;
redaction of traced targets) refuse or redact what a host hands in, with the protocol's rule ids.
This module is the floor under them, for every write path, present and future: before a mutation
runs, every string it would store is scanned with ``telic._secrets`` — the run row (the
repository root, phase and status, ``controller_state``), each artifact (id, type, producer,
schema version, ``source_refs``, quota key and every string of its body, object keys included)
and each trace event (actor, phase, type, references, the permission decision, the summary and
the budget snapshot). A hit raises ``SecretRefused`` naming the record and the field path, never
the text, before the backend is asked for anything, so the ledger is unchanged.

All the strings of a mutation are scanned as one text; the walk with paths runs only after a
hit. A string a gate has just found clean is answered from the detector's memo, so the second
scan of the same text costs a lookup (``benchmarks/controller.py``, ``benchmarks/README.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from telic._errors import Issue
from telic._secrets import first_secret_in

from ._errors import SecretRefused
from ._records import NewArtifact, NewTraceEvent, RunRecord

__all__ = ["RULE", "refuse_secrets"]

RULE: Final = "LEDGER-NO-SECRETS"
"""The rule id a ``SecretRefused`` issue carries."""

_RUN_FIELDS: Final = (
    "run_id",
    "schema_version",
    "repository_root",
    "requested_mode",
    "status",
    "phase",
    "resume_phase",
    "outcome_hint",
    "created_at",
    "updated_at",
    "controller_state",
)
_ARTIFACT_FIELDS: Final = (
    "artifact_id",
    "type",
    "schema_version",
    "producer",
    "source_refs",
    "quota_key",
    "created_at",
    "body",
)
_EVENT_FIELDS: Final = (
    "event_id",
    "actor",
    "phase",
    "event_type",
    "input_refs",
    "output_refs",
    "permission_decision",
    "decision_summary",
    "budget_snapshot",
    "timestamp",
)
_OWN_NAMES: Final = frozenset(
    ("run", "artifacts", "events", *_RUN_FIELDS, *_ARTIFACT_FIELDS, *_EVENT_FIELDS)
)


def _fields(
    run: RunRecord | None, artifacts: Sequence[NewArtifact], events: Sequence[NewTraceEvent]
) -> Iterator[tuple[str, object]]:
    if run is not None:
        for name in _RUN_FIELDS:
            yield f"run.{name}", getattr(run, name)
    for index, artifact in enumerate(artifacts):
        for name in _ARTIFACT_FIELDS:
            yield f"artifacts.{index}.{name}", getattr(artifact, name)
    for index, event in enumerate(events):
        for name in _EVENT_FIELDS:
            yield f"events.{index}.{name}", getattr(event, name)


def _shown(key: str) -> bool:
    # Only on a hit: the schemas' field names (an import the clean path never pays).
    from telic.protocol import wire_names

    return key in _OWN_NAMES or key in wire_names()


def refuse_secrets(
    run: RunRecord | None,
    artifacts: Sequence[NewArtifact] = (),
    events: Sequence[NewTraceEvent] = (),
) -> None:
    """Refuse a mutation any of whose records holds a likely secret.

    Raises:
        SecretRefused: naming the record kind, the field path (object keys the schemas do not
            define stand as ``(key)``) and the kind of secret, never its text.
    """
    hit = first_secret_in(_fields(run, artifacts, events), shown=_shown)
    if hit is None:
        return
    path, finding = hit
    head = path.split(".", 1)[0]
    record = {"run": "a run row", "artifacts": "an artifact", "events": "a trace event"}[head]
    message = (
        f"The ledger refused to store {record} holding likely secret material "
        f"({finding.kind}) at {path}; nothing was written"
    )
    raise SecretRefused(message, issues=(Issue(path, "secret_detected", message, RULE),))
