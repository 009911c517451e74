"""The ledger's secret gate: no record holding a likely secret is ever committed.

The gates above the ledger (``telic.controller``: submissions, run arguments, casts, returns;
redaction of traced targets) refuse or redact what a host hands in, with the protocol's rule ids.
This module is the floor under them, for every write path, present and future, on every backend
and in every process — the ``telic hook`` command's direct SQLite write included, since it builds
its rows with the same pure plans (``_plans``). It has two halves, both called from ``_plans``:

- ``redact_event`` runs where a trace event gets its id and time (``fix_events``), before the
  event is linked into the chain, as ``telic_check_tool_action`` redacts the target it traces:
  a decision stays auditable; a file name holding a token does not reach the ledger.
- ``refuse_secrets`` runs on every plan that writes rows (``_plans.plan``) and scans every
  string the plan would store (the run row when it is inserted or changed, object keys of
  bodies included), inside the transaction and before any row is written, so a hit leaves the
  ledger unchanged.

All the strings of a mutation are scanned as one text; the walk with paths runs only after a
hit. A string a gate has just found clean is answered from the detector's memo, so the second
scan of the same text costs a lookup (``benchmarks/controller.py``, ``benchmarks/README.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import fields, replace
from typing import Final

from telic._errors import Issue
from telic._secrets import cannot_hold_secret, first_secret_in
from telic.protocol import MAX_SUMMARY, MAX_TARGET

from ._errors import SecretRefused
from ._records import (
    JSON,
    MAX_DECISION_SUMMARY_CHARS,
    NewArtifact,
    NewTraceEvent,
    RunRecord,
    TraceRecord,
)

RULE: Final = "LEDGER-NO-SECRETS"
"""The rule id a ``SecretRefused`` issue carries."""

# Every field: one that cannot hold text (a count, a closed set) adds nothing to the scan.
_RUN_FIELDS: Final = tuple(f.name for f in fields(RunRecord))
_ARTIFACT_FIELDS: Final = tuple(f.name for f in fields(NewArtifact))
_EVENT_FIELDS: Final = tuple(f.name for f in fields(NewTraceEvent))
_OWN_NAMES: Final = frozenset(
    ("run", "artifacts", "events", *_RUN_FIELDS, *_ARTIFACT_FIELDS, *_EVENT_FIELDS)
)


def _redacted_text(text: str, bound: int) -> str:
    if cannot_hold_secret(text):  # no anchor, keyword or decodable run: nothing to load
        return text
    from telic._secrets import redact

    shown = redact(text)
    if len(shown) <= bound and len(shown.encode("utf-8")) <= bound:
        return shown
    # A marker can be longer than what it replaced: cut back to the field's bound (a cut marker
    # still holds no secret).
    return shown.encode("utf-8")[:bound].decode("utf-8", "ignore")[:bound]


def _redacted_json(value: JSON, bound: int) -> JSON:
    if isinstance(value, str):
        return _redacted_text(value, bound)
    if isinstance(value, list):
        return [_redacted_json(item, bound) for item in value]
    if isinstance(value, Mapping):
        return {
            key: _redacted_json(item, MAX_TARGET if key == "scope" else bound)
            for key, item in value.items()
        }
    return value


def redact_event(event: NewTraceEvent) -> NewTraceEvent:
    """Return ``event`` with each likely secret in Telic's own text about it redacted.

    That text is every string of the permission decision (its scope is the host's target, a
    command, URL or file name) and the summary. Identifiers, references, phases and the budget
    snapshot are left as they are: a secret there is refused by ``refuse_secrets``.
    """
    decision = event.permission_decision
    shown_decision = None if decision is None else _redacted_json(dict(decision), MAX_SUMMARY)
    summary = _redacted_text(event.decision_summary, MAX_DECISION_SUMMARY_CHARS)
    if shown_decision == decision and summary == event.decision_summary:
        return event
    assert shown_decision is None or isinstance(shown_decision, dict)
    return replace(event, permission_decision=shown_decision, decision_summary=summary)


def _fields(
    run: RunRecord | None,
    artifacts: Sequence[NewArtifact],
    events: Sequence[NewTraceEvent | TraceRecord],
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
    events: Sequence[NewTraceEvent | TraceRecord] = (),
) -> None:
    """Refuse a mutation any of whose records holds a likely secret (``run``: ``None`` when the
    mutation leaves the run row's fields as stored).

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
