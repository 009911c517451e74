"""The error tree of ``telic``.

Every error Telic raises on purpose descends from ``TelicError`` and carries a stable ``code``
that the MCP adapter puts into the error envelope::

    TelicError
    ├── UsageError              a developer mistake in how the library is called
    ├── SchemaViolation         a body does not match its strict schema (carries ``issues``)
    ├── RuleViolation           a cross-artifact invariant failed (carries rule ids and ``issues``)
    │   └── LineageRefused      prior_run_id names no run this one may follow (``RUN-PRIOR-*``)
    ├── InvalidTransition       the submission is not legal in the run's current state
    ├── StaleToken              expected_run_version or action_id is not the current one
    ├── PermissionDenied        an action is outside the effective authority (carries the decision)
    ├── LimitExceeded           a quota or budget would be exceeded
    ├── NotFound                a run or artifact does not exist (in this run)
    ├── SecretDetected          a submission holds likely secret material
    ├── ContextSecurityError    a path escapes the repository or the state dir is unsafe
    ├── LedgerError             storage failures
    │   ├── LedgerConflict      a concurrent writer won, or an id was reused with other content
    │   ├── IntegrityError      stored bytes no longer match their digest or chain
    │   └── StoreVersionError   the store was written by a newer, incompatible version
    └── (elsewhere in telic)
        ├── telic.protocol.CanonicalJsonError  a SchemaViolation: a value has no canonical JSON
        └── telic.demo.TelicCallError          a tool answered an error envelope (its ``code``)

The standalone ``telic_packets`` and ``telic_actors`` distributions keep their own error roots,
told apart by type, never by module name (docs/design.md, ``telic._errors``).

Messages never include submitted values, because a rejected body may hold a secret.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_MESSAGE_CHARS = 800
MAX_ISSUES = 32
MAX_ISSUE_MESSAGE_CHARS = 400


def squash(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Replace CR, LF and TAB with spaces and cut to ``limit`` characters."""
    flat = message.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Issue:
    """One precise problem: where (dot-joined path), what kind (code), and a short message."""

    path: str
    code: str
    message: str
    rule: str | None = None
    expected: object = None
    """What would pass at ``path`` (an exact value, id set, map or allowed values), when the
    controller can compute it; None otherwise. A JSON value, bounded on the wire."""

    def to_wire(self) -> dict[str, object]:
        """Return the ``{path, code, message}`` envelope entry (``rule`` and ``expected`` when
        there are some); a large ``expected`` is cut to fit and the message says so."""
        message = self.message
        expected = None
        if self.expected is not None:
            expected, note = _bounded_expected(self.expected)
            message = f"{message} {note}" if note else message
        entry: dict[str, object] = {
            "path": self.path,
            "code": self.code,
            "message": squash(message, MAX_ISSUE_MESSAGE_CHARS),
        }
        if self.rule is not None:
            entry["rule"] = self.rule
        if expected is not None:
            entry["expected"] = expected
        return entry


_MAX_EXPECTED_BYTES = 1024
"""An issue's ``expected`` value stays under this many bytes of compact JSON, so a refusal with
several such issues stays within a couple of kilobytes."""


_MAX_EXPECTED_TOTAL = 1200
"""All the ``expected`` values of one refusal together stay under this many bytes of JSON."""


def issues_to_wire(issues: tuple[Issue, ...]) -> list[dict[str, object]]:
    """Return the envelope entries of ``issues``, their ``expected`` values sharing one budget.

    Each entry's ``expected`` is already cut to 1 KB; once the refusal's values together reach
    ``_MAX_EXPECTED_TOTAL`` bytes, later entries leave theirs out and say so, so a semantic
    refusal with several such issues stays short.
    """
    entries: list[dict[str, object]] = []
    used = 0
    for issue in issues:
        entry = issue.to_wire()
        if "expected" in entry:
            size = _json_size(entry["expected"])
            if used + size > _MAX_EXPECTED_TOTAL:
                del entry["expected"]
                note = " (expected left out to keep the refusal short; fix the others first)"
                entry["message"] = squash(f"{entry['message']}{note}", MAX_ISSUE_MESSAGE_CHARS)
            else:
                used += size
        entries.append(entry)
    return entries


def _json_size(value: object) -> int:
    import json

    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _bounded_expected(value: object) -> tuple[object, str]:
    """Return ``value`` cut to at most ``_MAX_EXPECTED_BYTES`` of JSON, and a note saying what was
    cut ("" when nothing was). A list keeps its first items; a map keeps its first keys; anything
    else too large is dropped (None) with a note."""
    if _json_size(value) <= _MAX_EXPECTED_BYTES:
        return value, ""
    if isinstance(value, list):
        kept: list[object] = []
        for item in value:
            if _json_size([*kept, item]) > _MAX_EXPECTED_BYTES:
                break
            kept.append(item)
        return kept, f"(expected shows the first {len(kept)} of {len(value)})"
    if isinstance(value, dict):
        part: dict[str, object] = {}
        for key, item in value.items():
            if _json_size({**part, key: item}) > _MAX_EXPECTED_BYTES:
                break
            part[key] = item
        return part, f"(expected shows {len(part)} of its {len(value)} keys)"
    return None, "(the expected value is too large to show)"


class TelicError(Exception):
    """Root of every error Telic raises on purpose."""

    code: str = "telic_error"
    """The stable wire code; a class constant, except where an error relays a code it received."""

    def __init__(self, message: str, *, issues: tuple[Issue, ...] = ()) -> None:
        self.message = squash(message)
        super().__init__(self.message)
        self.issues = issues[:MAX_ISSUES]

    @property
    def rules(self) -> tuple[str, ...]:
        """Rule ids named by the issues, in order, without repeats."""
        return tuple(dict.fromkeys(i.rule for i in self.issues if i.rule is not None))


class UsageError(TelicError):
    """The library was called in a way its API does not allow."""

    code = "usage_error"


class SchemaViolation(TelicError):
    """A body does not match its strict schema."""

    code = "schema_violation"


class RuleViolation(TelicError):
    """A cross-artifact invariant failed; ``rules`` names each failed rule id."""

    code = "invariant_violation"


class LineageRefused(RuleViolation):
    """``telic_start_run`` was given a ``prior_run_id`` this run may not follow: no such run in
    this ledger, another repository, a run still in progress, or one that fails verification.
    Nothing is stored."""

    code = "lineage_refused"


class InvalidTransition(TelicError):
    """The submission is not legal in the run's current phase or status."""

    code = "invalid_transition"


class StaleToken(TelicError):
    """The caller's expected_run_version or action_id is not the current one."""

    code = "stale_token"


class PermissionDenied(TelicError):
    """An action lies outside the effective authority."""

    code = "permission_denied"


class LimitExceeded(TelicError):
    """A quota or budget would be exceeded."""

    code = "limit_exceeded"


class NotFound(TelicError):
    """A run or artifact does not exist (artifact ids are scoped to their run)."""

    code = "not_found"


class SecretDetected(TelicError):
    """A submission holds likely secret material and must be redacted first."""

    code = "secret_detected"


class ContextSecurityError(TelicError):
    """A path escapes the repository root, or a state directory is unsafe."""

    code = "context_security"


class LedgerError(TelicError):
    """A storage failure."""

    code = "ledger_error"


class LedgerConflict(LedgerError):
    """Another writer won this step, or an id was reused with different content."""

    code = "ledger_conflict"


class IntegrityError(LedgerError):
    """Stored bytes no longer match their digest, or the run's hash chain is broken."""

    code = "integrity_error"


class StoreVersionError(LedgerError):
    """The store was written by a newer schema version than this code understands."""

    code = "store_version"
