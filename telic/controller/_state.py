"""The run state the pure core works on: the run row plus the run's artifacts, frozen.

``RunState`` is rebuilt by the driver from the ledger (the run record and every artifact with its
parsed body) and returned, one step further, by ``step``. Nothing in it is ever mutated; every
transition produces a new value with ``dataclasses.replace``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from telic.protocol._run import RunEnvelope
from telic.protocol._types import REFERENCE_URI_PATTERN, InternalPhase, InternalRunStatus, Mode

__all__ = [
    "BodyRef",
    "OutcomeHint",
    "Run",
    "RunState",
    "StoredArtifact",
    "TraceEntry",
    "artifact_uri",
    "body_refs",
    "parse_artifact_uri",
]

OutcomeHint = Literal["completed", "partial", "blocked"]
"""What the run is heading for, as reviews and audits have decided so far."""

_URI_RE: Final = re.compile(REFERENCE_URI_PATTERN)
_ARTIFACT_RE: Final = re.compile(r"^artifact://([^/]+)/(.+)$")
_SEQUENCE_RE: Final = re.compile(r"^event-(\d{4,})$")
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "partial", "blocked", "cancelled"})


def artifact_uri(run_id: str, artifact_id: str) -> str:
    """Return ``artifact://<runId>/<id>``."""
    return f"artifact://{run_id}/{artifact_id}"


def parse_artifact_uri(uri: str) -> tuple[str, str] | None:
    """Return ``(run_id, artifact_id)`` of an artifact URI, or None for any other reference."""
    match = _ARTIFACT_RE.match(uri)
    if match is None or match.group(1) == "system":
        return None
    return match.group(1), match.group(2)


BodyRef = tuple[str, str, str]
"""One reference found in a wire body: ``(path, field name, uri)``."""

_REF_SUFFIXES: Final = ("Ref", "Refs")


def _is_ref_key(key: str) -> bool:
    return key == "ref" or key.endswith(_REF_SUFFIXES) or key == "evidenceInspected"


def body_refs(value: object, path: str = "") -> tuple[BodyRef, ...]:
    """Return ``(path, field name, uri)`` for every valid reference under a reference field.

    A reference field is any ``ref``, ``…Ref``, ``…Refs`` or ``evidenceInspected`` key, at any
    depth of the wire body; values that are not valid reference URIs are skipped here (the schema
    has already judged them). In document order.
    """
    found: list[BodyRef] = []
    _collect(value, path, found)
    return tuple(found)


def _container(value: object) -> bool:
    return type(value) is dict or type(value) is list or isinstance(value, Mapping | list)


def _collect(value: object, path: str, found: list[BodyRef]) -> None:
    # Only containers are walked (a scalar holds no reference field), and a path is only built
    # for a container or a reference: a body's many plain strings cost one type check each.
    match = _URI_RE.match
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _is_ref_key(key):
                where = f"{path}.{key}" if path else key
                if isinstance(item, list):
                    for index, uri in enumerate(item):
                        if isinstance(uri, str) and match(uri):
                            found.append((f"{where}.{index}", key, uri))
                elif isinstance(item, str) and match(item):
                    found.append((where, key, item))
            elif _container(item):
                _collect(item, f"{path}.{key}" if path else str(key), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if _container(item):
                _collect(item, f"{path}.{index}" if path else str(index), found)


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    """One artifact of the run: metadata, the typed body and its wire form."""

    id: str
    type: str
    producer: str
    uri: str
    source_refs: tuple[str, ...]
    created_at: str
    body: Any
    """The typed body (a protocol model, or ``UserMessage``/``ContextDocument``)."""
    wire: Mapping[str, Any]
    """The camelCase JSON form the ledger stores and hashes."""
    sha256: str
    _refs: tuple[str, ...] | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def refs(self) -> tuple[str, ...]:
        """Every reference URI in the body's reference fields, then the metadata sourceRefs.

        Computed once per artifact: the body never changes, and a run's state keeps the same
        ``StoredArtifact`` from step to step.
        """
        if self._refs is None:
            self.remember_refs(body_refs(self.wire))
        assert self._refs is not None
        return self._refs

    def remember_refs(self, found: Iterable[BodyRef]) -> None:
        """Keep ``refs`` from ``found``, the ``body_refs`` of ``wire`` a caller already has."""
        object.__setattr__(self, "_refs", (*(uri for _, _, uri in found), *self.source_refs))


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """What the rules need to know about one stored trace event."""

    id: str
    sequence: int
    event_type: str
    """The internal event type (``permission_checked`` keeps its name)."""
    permission_decision: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """The controller columns of the run row (reference §5 ``runs``)."""

    run_id: str
    repository_root: str
    mode: Mode
    status: InternalRunStatus
    phase: InternalPhase
    resume_phase: InternalPhase | None
    version: int
    prompt_revisions_remaining: int
    remediations_remaining: int
    outcome_hint: OutcomeHint | None
    created_at: str
    updated_at: str
    controller_state: Mapping[str, Any] = field(default_factory=dict)
    """Opaque JSON kept on the run row for other layers; the controller carries it unchanged."""

    @property
    def terminal(self) -> bool:
        """Whether the run has ended (completed, partial, blocked or cancelled)."""
        return self.status in TERMINAL

    @property
    def action_id(self) -> str:
        """The current NextAction id, ``action:<runId>:<version>``."""
        return f"action:{self.run_id}:{self.version}"


@dataclass(frozen=True, slots=True)
class _Index:
    """A run state's artifacts by type and the index of each id (ids are unique within a run).

    Extending one copies two dicts in C, a few microseconds at 2,000 artifacts, instead of
    rescanning the run in Python.
    """

    types: dict[str, tuple[StoredArtifact, ...]]
    order: dict[str, int]
    """Artifact id → its index in the run's artifacts."""
    closures: dict[str, tuple[str, ...]]
    """Phase → its NextAction's mandatory input closure; Evidence never changes one, so it is
    carried over while only Evidence is appended."""

    @classmethod
    def of(cls, artifacts: tuple[StoredArtifact, ...]) -> _Index:
        grouped: dict[str, list[StoredArtifact]] = {}
        for artifact in artifacts:
            grouped.setdefault(artifact.type, []).append(artifact)
        types = {name: tuple(found) for name, found in grouped.items()}
        order = {a.id: index for index, a in enumerate(artifacts)}
        return cls(types, order, {})

    def extended(self, artifacts: tuple[StoredArtifact, ...]) -> _Index:
        if not artifacts:
            return self
        types, order = dict(self.types), dict(self.order)
        only_evidence = all(artifact.type == "Evidence" for artifact in artifacts)
        for artifact in artifacts:
            order[artifact.id] = len(order)
            types[artifact.type] = (*types.get(artifact.type, ()), artifact)
        return _Index(types, order, self.closures if only_evidence else {})


@dataclass(frozen=True, slots=True)
class RunState:
    """Everything the pure core knows about one run, in ledger order."""

    run: Run
    artifacts: tuple[StoredArtifact, ...]
    trace: tuple[TraceEntry, ...] = ()
    """The run's trace events before the submission (what trace references may name)."""
    _index: _Index | None = field(default=None, init=False, compare=False, repr=False)

    def extended(
        self,
        artifacts: tuple[StoredArtifact, ...],
        *,
        run: Run | None = None,
        trace: tuple[TraceEntry, ...] | None = None,
    ) -> RunState:
        """Return this state with ``artifacts`` appended (and ``run``/``trace`` replaced).

        The lookup index of this state, when built, is carried over and extended instead of
        being rebuilt from every artifact of the run.
        """
        new = RunState(
            run=self.run if run is None else run,
            artifacts=(*self.artifacts, *artifacts) if artifacts else self.artifacts,
            trace=self.trace if trace is None else trace,
        )
        if self._index is not None:
            object.__setattr__(new, "_index", self._index.extended(artifacts))
        return new

    def _lookup(self) -> _Index:
        if self._index is None:  # built once per state, on first use
            object.__setattr__(self, "_index", _Index.of(self.artifacts))
        assert self._index is not None
        return self._index

    @property
    def envelope(self) -> RunEnvelope:
        """The run's RunEnvelope (always the second artifact, after the request)."""
        for artifact in self.artifacts:
            if artifact.type == "RunEnvelope":
                body: RunEnvelope = artifact.body
                return body
        raise LookupError("run has no RunEnvelope")

    @property
    def request(self) -> StoredArtifact:
        """The UserMessage holding the original request (the run's first artifact)."""
        return self.artifacts[0]

    def by_uri(self, uri: str) -> StoredArtifact | None:
        """Return the artifact a same-run URI names, or None."""
        parsed = parse_artifact_uri(uri)
        if parsed is None or parsed[0] != self.run.run_id:
            return None
        return self.by_id(parsed[1])

    def by_id(self, artifact_id: str) -> StoredArtifact | None:
        """Return the artifact with ``artifact_id``, or None."""
        index = self._lookup().order.get(artifact_id)
        return None if index is None else self.artifacts[index]

    def all(self, artifact_type: str) -> tuple[StoredArtifact, ...]:
        """Return every artifact of ``artifact_type`` in ledger order."""
        return self._lookup().types.get(artifact_type, ())

    def latest(self, artifact_type: str) -> StoredArtifact | None:
        """Return the most recent artifact of ``artifact_type``, or None."""
        found = self._lookup().types.get(artifact_type)
        return found[-1] if found else None

    def closures(self) -> dict[str, tuple[str, ...]]:
        """The input closures computed for this state (see ``_Index.closures``)."""
        return self._lookup().closures

    def in_ledger_order(self, artifacts: Iterable[StoredArtifact]) -> list[StoredArtifact]:
        """Return ``artifacts`` (all of this run) sorted as the run stored them."""
        order = self._lookup().order
        return sorted(artifacts, key=lambda artifact: order[artifact.id])

    def trace_event(self, uri: str) -> TraceEntry | None:
        """Return the event ``trace://<runId>/<eventId or event-NNNN>`` names, or None."""
        prefix = f"trace://{self.run.run_id}/"
        if not uri.startswith(prefix):
            return None
        name = uri[len(prefix) :]
        match = _SEQUENCE_RE.match(name)
        for entry in self.trace:
            if entry.id == name or (match is not None and entry.sequence == int(match.group(1))):
                return entry
        return None

    def after(self, anchor: StoredArtifact | None) -> tuple[StoredArtifact, ...]:
        """Return the artifacts stored after ``anchor`` (all of them when it is None)."""
        if anchor is None:
            return self.artifacts
        return self.artifacts[self._lookup().order[anchor.id] + 1 :]

    def all_after(
        self, anchor: StoredArtifact | None, artifact_type: str
    ) -> tuple[StoredArtifact, ...]:
        """Return the artifacts of ``artifact_type`` stored after ``anchor`` (all when None)."""
        found = self.all(artifact_type)
        if anchor is None:
            return found
        order = self._lookup().order
        start = bisect.bisect_right(found, order[anchor.id], key=lambda a: order[a.id])
        return found[start:]
