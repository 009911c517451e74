"""The typed records the ledger stores and returns, and the inputs it accepts.

Every record is frozen. JSON-valued fields (bodies, ``controller_state``, permission decisions,
budget snapshots) are kept by the backends as canonical JSON text, so what comes back is a fresh
parse of exactly the bytes that were hashed, never an object a caller could still be mutating.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, cast

from telic._errors import UsageError
from telic.protocol import (
    IDENTIFIER_PATTERN,
    MAX_IDENTIFIER,
    canonical_json,
    is_identifier,
    sha256_hex_digest,
)

if TYPE_CHECKING:  # the protocol's models (and pydantic) stay out of the ledger's imports
    from telic.protocol import InternalPhase, InternalRunStatus, Mode, Topology

    from ._wire import RunSummaryWire, RunWire, _Lineage, _Topology


JSON: TypeAlias = "bool | int | float | str | Sequence[JSON] | Mapping[str, JSON] | None"
"""A JSON value as Python holds it."""

OutcomeHint = Literal["completed", "partial", "blocked"]
"""What the run is heading for, as reviews and audits have decided so far."""

TERMINAL_STATUSES: Final = frozenset({"completed", "partial", "blocked", "cancelled"})
"""The statuses of a run that has ended."""

FIXED_RUN_FIELDS: Final = (
    "run_id",
    "schema_version",
    "repository_root",
    "requested_mode",
    "created_at",
    "prior_run_id",
)
"""The fields of a run set when it is created and never changed: ``commit_step`` refuses a new
value, and the update of a stored run leaves their columns alone."""

MAX_DECISION_SUMMARY_CHARS: Final = 800
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def check_id(kind: str, value: str) -> str:
    """Return ``value`` if it is a protocol identifier, else raise ``UsageError``."""
    if not is_identifier(value):
        raise UsageError(f"{kind} must match {IDENTIFIER_PATTERN} and be 1-{MAX_IDENTIFIER} chars")
    return value


def check_timestamp(kind: str, value: str) -> str:
    """Return ``value`` if it is a UTC timestamp with milliseconds, else raise ``UsageError``.

    One fixed layout (``2026-05-20T12:00:00.000Z``, as ECMAScript's ``toISOString``) keeps the
    text ordering of stored timestamps equal to their time ordering, which ``list_runs`` uses.
    """
    if not _TIMESTAMP.fullmatch(value):
        raise UsageError(f"{kind} must be a UTC timestamp like 2026-05-20T12:00:00.000Z")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Per-run quotas, checked inside the transaction that would exceed them.

    The defaults are the protocol's (§3.3); tests shrink them to reach the edges quickly.
    """

    max_artifacts: int = 2048
    """Artifacts per run."""
    max_events: int = 10_000
    """Trace events per run."""
    max_evidence_per_plan: int = 128
    """Evidence artifacts stored after the run's latest WorkPlan."""
    max_artifact_bytes: int = 2_097_152
    """Canonical JSON bytes of one artifact body."""
    evidence_type: str = "Evidence"
    """The artifact type counted by ``max_evidence_per_plan``."""
    plan_type: str = "WorkPlan"
    """The artifact type that starts a new Evidence allowance."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """A run: one row of the ``runs`` table, the controller's run, and its wire form.

    The ledger stores it, the controller steps it (``dataclasses.replace``), and ``to_wire``
    and ``summary_wire`` are what a host reads of it. ``controller_state`` is an opaque JSON
    object the controller may use for anything that has no column of its own; the ledger stores
    it verbatim and never looks inside.
    """

    run_id: str
    schema_version: str
    repository_root: str
    requested_mode: Mode
    status: InternalRunStatus
    phase: InternalPhase
    resume_phase: InternalPhase | None
    version: int
    prompt_revisions_remaining: int
    remediations_remaining: int
    outcome_hint: OutcomeHint | None
    created_at: str
    updated_at: str
    controller_state: Mapping[str, JSON] = field(default_factory=dict)
    topology: Topology | None = None
    """``micro``, ``standard`` or ``forensic`` (beyond Telic 1.0): the live value, which an
    escalation changes; ``None`` for a run that asked for none (it follows 1.0, as standard)."""
    escalation_count: int = 0
    """How many times the run's topology escalated (at most 2)."""
    prior_run_id: str | None = None
    """The terminal run this one was started to follow (``prior_run_id`` of
    ``telic_start_run``), or None; set when the run is created and never changed."""

    def __post_init__(self) -> None:
        check_id("run_id", self.run_id)
        if self.prior_run_id is not None:
            check_id("prior_run_id", self.prior_run_id)
        if self.topology not in (None, "micro", "standard", "forensic"):
            raise UsageError("topology must be micro, standard or forensic")
        if self.escalation_count < 0:
            raise UsageError("escalation_count cannot be negative")
        check_timestamp("created_at", self.created_at)
        check_timestamp("updated_at", self.updated_at)
        if self.version < 1:
            raise UsageError("a run version starts at 1")
        if self.prompt_revisions_remaining < 0 or self.remediations_remaining < 0:
            raise UsageError("remaining budgets cannot be negative")

    @property
    def terminal(self) -> bool:
        """Whether the run has ended (completed, partial, blocked or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def action_id(self) -> str:
        """The current NextAction id, ``action:<runId>:<version>``."""
        return f"action:{self.run_id}:{self.version}"

    def to_wire(self) -> RunWire:
        """The Telic 1.0 ``RunRecord`` (``docs/protocol.md`` §2): camelCase, the two counters
        inside ``budgets``, without ``controller_state``; the keys beyond 1.0 are ``RunWire``'s."""
        topology: _Topology = {}
        lineage: _Lineage = {}
        if self.topology is not None or self.prior_run_id is not None:
            topology = {"topology": self.topology or "standard"}
            lineage = {"priorRunId": self.prior_run_id, "escalationCount": self.escalation_count}
        return {
            "runId": self.run_id,
            "schemaVersion": self.schema_version,
            "repositoryRoot": self.repository_root,
            "requestedMode": self.requested_mode,
            **topology,
            "status": self.status,
            "phase": self.phase,
            "resumePhase": self.resume_phase,
            "version": self.version,
            "budgets": {
                "promptRevisionsRemaining": self.prompt_revisions_remaining,
                "postExecutionRemediationsRemaining": self.remediations_remaining,
            },
            "outcomeHint": self.outcome_hint,
            **lineage,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    def summary_wire(self) -> RunSummaryWire:
        """A ``telic_list_runs`` entry: ``to_wire`` without the repository root, the budgets and
        ``escalationCount``, and with ``priorRunId`` (ours) last."""
        wire: dict[str, object] = dict(self.to_wire())
        for key in ("repositoryRoot", "budgets", "escalationCount"):
            wire.pop(key, None)
        if "priorRunId" in wire:
            wire["priorRunId"] = wire.pop("priorRunId")
        return cast("RunSummaryWire", wire)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewArtifact:
    """An artifact to store: metadata plus the JSON body that is hashed and kept as a blob.

    ``quota_key`` makes the artifact unique by key within its run and type: at most one artifact
    of a type may carry a given key (the controller passes a ScenarioSpec's ``problemFrameRef``,
    so a ProblemFrame gets at most one ScenarioSpec). A second one raises ``LimitExceeded``.
    """

    artifact_id: str
    type: str
    schema_version: str
    producer: str
    body: Mapping[str, JSON]
    source_refs: tuple[str, ...] = ()
    redaction: Literal["none", "partial", "full"] = "none"
    quota_key: str | None = None
    created_at: str | None = None
    """When ``None`` the ledger stamps the commit time."""
    canonical: CanonicalBody | None = field(default=None, compare=False, repr=False)
    """``body``'s canonical form when the writer has it; the ledger then does not serialise the
    body again. It must be made from this very ``body`` object, or the ledger refuses it."""

    def __post_init__(self) -> None:
        check_id("artifact_id", self.artifact_id)
        if self.created_at is not None:
            check_timestamp("created_at", self.created_at)
        if self.redaction not in ("none", "partial", "full"):
            raise UsageError("redaction must be none, partial or full")
        if len(set(self.source_refs)) != len(self.source_refs):
            raise UsageError("source_refs must not repeat a reference")


@dataclass(frozen=True, slots=True, init=False)
class CanonicalBody:
    """A JSON body with its canonical bytes and their digest, computed together from the body
    (``NewArtifact.canonical``: the controller hashes every artifact it accepts, and the ledger
    then re-hashes these bytes instead of serialising the body a second time).

    Raises:
        CanonicalJsonError: the body has no canonical JSON form.
    """

    body: Mapping[str, JSON]
    data: bytes
    """The canonical JSON bytes of ``body``."""
    sha256: str
    """``sha256:`` digest of ``data``."""

    def __init__(self, body: Mapping[str, JSON]) -> None:
        data = canonical_json(body)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "sha256", sha256_hex_digest(data))


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactRecord:
    """An artifact's stored metadata, its place in the run and its link in the run's hash chain."""

    run_id: str
    artifact_id: str
    type: str
    schema_version: str
    producer: str
    sha256: str
    """``sha256:`` digest of the body's canonical JSON."""
    size_bytes: int
    source_refs: tuple[str, ...]
    redaction: str
    quota_key: str | None
    created_at: str
    position: int
    """1-based order of the artifact among its run's artifacts."""
    chain_index: int
    """1-based position in the run's hash chain, shared by artifacts and trace events."""
    previous_hash: str
    record_hash: str

    def to_wire(self) -> dict[str, JSON]:
        """The Telic 1.0 artifact metadata (the artifact's id is ``id``), then this ledger's own
        fields; ``quota_key`` is storage, never on the wire."""
        return {
            "id": self.artifact_id,
            "runId": self.run_id,
            "type": self.type,
            "schemaVersion": self.schema_version,
            "producer": self.producer,
            "sha256": self.sha256,
            "sourceRefs": list(self.source_refs),
            "redaction": self.redaction,
            "createdAt": self.created_at,
            "sizeBytes": self.size_bytes,
            "position": self.position,
            "chainIndex": self.chain_index,
            "previousHash": self.previous_hash,
            "recordHash": self.record_hash,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactBody:
    """A verified artifact: its record, its parsed body and the exact canonical bytes."""

    record: ArtifactRecord
    body: Mapping[str, JSON]
    canonical: bytes

    def to_wire(self) -> dict[str, JSON]:
        """The Telic 1.0 ``get_artifact`` object: the record's metadata with ``body`` inside it."""
        return self.record.to_wire() | {"body": self.body}


@dataclass(frozen=True, slots=True, kw_only=True)
class NewTraceEvent:
    """A trace event to append; the ledger assigns its sequence and chain link."""

    actor: str
    phase: str
    event_type: str
    """Internal event name (``run_started``, ``phase_submitted``, ``permission_checked``, ...)."""
    input_refs: tuple[str, ...] = ()
    output_refs: tuple[str, ...] = ()
    permission_decision: Mapping[str, JSON] | None = None
    decision_summary: str = ""
    budget_snapshot: Mapping[str, JSON] = field(default_factory=dict)
    event_id: str | None = None
    """When ``None`` the ledger assigns a random UUID."""
    timestamp: str | None = None
    """When ``None`` the ledger stamps the commit time."""

    def __post_init__(self) -> None:
        if len(self.decision_summary) > MAX_DECISION_SUMMARY_CHARS:
            raise UsageError(
                f"decision_summary is limited to {MAX_DECISION_SUMMARY_CHARS} characters"
            )
        if self.event_id is not None:
            check_id("event_id", self.event_id)
        if self.timestamp is not None:
            check_timestamp("timestamp", self.timestamp)


def budget_snapshot(prompt_revisions: int, remediations: int) -> dict[str, JSON]:
    """The ``budgetSnapshot`` every trace event carries: the run's two remaining budgets."""
    return {
        "promptRevisions": prompt_revisions,
        "postExecutionRemediations": remediations,
        "transportRetries": 0,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    """A stored trace event with its per-run sequence and its link in the run's hash chain."""

    event_id: str
    run_id: str
    sequence: int
    timestamp: str
    actor: str
    phase: str
    event_type: str
    input_refs: tuple[str, ...]
    output_refs: tuple[str, ...]
    permission_decision: Mapping[str, JSON] | None
    decision_summary: str
    budget_snapshot: Mapping[str, JSON]
    chain_index: int
    previous_hash: str
    record_hash: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TracePage:
    """One page of a run's trace, in sequence order."""

    events: tuple[TraceRecord, ...]
    has_more: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RunChanges:
    """What a run gained after a known point (``Ledger.read_changes``): its row, its counters
    (the run's totals in the same snapshot) and the appended records."""

    run: RunRecord
    artifact_count: int
    event_count: int
    artifacts: tuple[ArtifactBody, ...]
    """Verified artifacts positioned after the requested point, in commit order."""
    events: tuple[TraceRecord, ...]
    """Verified trace events with a sequence above the requested point, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    """What one mutation wrote: the run row after it, and the new records in chain order.

    ``replayed`` is true when ``store_supporting`` found an identical artifact already stored and
    wrote nothing; ``artifacts`` then holds the existing record.
    """

    run: RunRecord
    artifacts: tuple[ArtifactRecord, ...]
    events: tuple[TraceRecord, ...]
    replayed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokenRecord:
    """The first record of a run whose digest, link or position does not check out."""

    kind: Literal["artifact", "event", "run"]
    id: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """The outcome of ``verify_run``: every blob digest and chain link recomputed."""

    ok: bool
    records_checked: int
    first_broken: BrokenRecord | None
