"""The run state the pure core works on: the run row plus the run's artifacts, frozen.

``RunState`` is rebuilt by the driver from the ledger (the run's ``RunRecord`` and every artifact
with its parsed body) and returned, one step further, by ``step``. Nothing in it is ever mutated;
every transition produces a new value with ``dataclasses.replace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, cast

from telic.controller._log import Log
from telic.ledger import CanonicalBody, RunRecord
from telic.protocol import REFERENCE_URI_PATTERN, RunEnvelope, WireModel

_URI_RE: Final = re.compile(REFERENCE_URI_PATTERN)
_ARTIFACT_RE: Final = re.compile(r"^artifact://([^/]+)/(.+)$")
_SEQUENCE_RE: Final = re.compile(r"^event-(\d{4,})$")
_REF_KEYS: Final = frozenset({"ref", "evidenceInspected"})


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
            if key in _REF_KEYS or (isinstance(key, str) and key.endswith(("Ref", "Refs"))):
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
    canonical: CanonicalBody | None = field(default=None, compare=False, repr=False)
    """The canonical bytes ``sha256`` was computed from, for an artifact this process accepted
    (the ledger stores them without serialising the body again); None when read back."""
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


def stored_artifact(
    run_id: str,
    artifact_type: str,
    body: WireModel,
    producer: str,
    source_refs: tuple[str, ...],
    now: str,
    *,
    wire: Mapping[str, Any] | None = None,
    found: Iterable[BodyRef] | None = None,
) -> StoredArtifact:
    """The artifact record of a typed body: its wire form serialised once, hashed, addressed.

    ``wire`` is ``body.to_wire()`` and ``found`` its ``body_refs``, when the caller has them.
    Its id is the body's ``id`` (a RunEnvelope's is its run's id).
    """
    if wire is None:
        wire = body.to_wire()
    artifact_id = run_id if artifact_type == "RunEnvelope" else str(wire["id"])
    canonical = CanonicalBody(wire)  # serialised once: the ledger stores these very bytes
    artifact = StoredArtifact(
        id=artifact_id,
        type=artifact_type,
        producer=producer,
        uri=artifact_uri(run_id, artifact_id),
        source_refs=source_refs,
        created_at=now,
        body=body,
        wire=wire,
        sha256=canonical.sha256,
        canonical=canonical,
    )
    if found is not None:
        artifact.remember_refs(found)
    return artifact


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """What the rules need to know about one stored trace event."""

    id: str
    sequence: int
    event_type: str
    """The internal event type (``permission_checked`` keeps its name)."""
    permission_decision: Mapping[str, Any] | None = None
    actor: str = ""
    """Who caused the event (``host`` for a tool-action check)."""


@dataclass(frozen=True, slots=True)
class LinkedArtifact:
    """An artifact of another run that a submission cites, as the driver read it just now.

    Only the prior run's artifacts are read (with their digest and record re-verified); a
    reference into any other run is refused without a read.
    """

    uri: str
    type: str | None
    """Its artifact type; None when the prior run has no artifact with this id."""
    kind: str | None = None
    """An Evidence artifact's ``kind``; None for any other type."""
    intact: bool = True
    """False when its stored bytes or record failed re-verification on this read."""


def _artifact_keys(artifact: StoredArtifact) -> tuple[str]:
    return (artifact.id,)


def _artifact_group(artifact: StoredArtifact) -> str:
    return artifact.type


def _trace_keys(entry: TraceEntry) -> tuple[str, int]:
    return (entry.id, entry.sequence)


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RunState:
    """Everything the pure core knows about one run, in ledger order.

    ``artifacts`` and ``trace`` may be given as any sequences; they are kept as ``Log`` views
    (immutable sequences, indexed by id and type) that later states extend without copying.
    """

    run: RunRecord
    artifacts: Sequence[StoredArtifact]
    trace: Sequence[TraceEntry] = ()
    """The run's trace events before the submission (what trace references may name)."""
    links: Mapping[str, LinkedArtifact] = field(default_factory=dict)
    """The prior run's artifacts the submission in hand cites, by URI, read by the driver for
    this one step (``with_links``); a state after a step carries none."""
    _log: Log[StoredArtifact] = field(init=False, compare=False, repr=False)
    _events: Log[TraceEntry] = field(init=False, compare=False, repr=False)
    _carried: dict[Callable[..., object], object] = field(init=False, compare=False, repr=False)
    """Values derived from the artifacts other than Evidence (``carried``): appending only
    Evidence cannot change them, so the next state shares this dict; any other append starts
    an empty one."""

    def __post_init__(self) -> None:
        log = self.artifacts
        if not isinstance(log, Log):
            log = Log.of(log, _artifact_keys, _artifact_group)
        events = self.trace
        if not isinstance(events, Log):
            events = Log.of(events, _trace_keys)
        object.__setattr__(self, "artifacts", log)
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "trace", events)
        object.__setattr__(self, "_events", events)
        object.__setattr__(self, "_carried", {})

    def extended(
        self,
        artifacts: Sequence[StoredArtifact],
        *,
        run: RunRecord | None = None,
        trace: Sequence[TraceEntry] | None = None,
    ) -> RunState:
        """Return this state with ``artifacts`` appended (and ``run``/``trace`` replaced).

        Costs O(appended), whatever the run's length: the new state shares this state's logs
        (see ``Log``), and its derived values while only Evidence was appended.
        """
        new = RunState(
            run=self.run if run is None else run,
            artifacts=self._log.appended(artifacts),
            trace=self._events if trace is None else trace,
        )
        if all(artifact.type == "Evidence" for artifact in artifacts):
            object.__setattr__(new, "_carried", self._carried)
        return new

    def with_links(self, links: Mapping[str, LinkedArtifact]) -> RunState:
        """Return this state with ``links`` for the next step (logs and derived values shared)."""
        new = RunState(run=self.run, artifacts=self._log, trace=self._events, links=links)
        object.__setattr__(new, "_carried", self._carried)
        return new

    def with_trace(self, entries: Sequence[TraceEntry]) -> Log[TraceEntry]:
        """Return this state's trace with ``entries`` appended (for the next state)."""
        return self._events.appended(entries)

    def carried(self, derive: Callable[[RunState], _T]) -> _T:
        """Return ``derive(self)``, computed once for this state and the states after it that
        only appended Evidence. ``derive`` must read neither Evidence, the trace nor the run row.
        """
        if derive not in self._carried:
            self._carried[derive] = derive(self)
        return cast(_T, self._carried[derive])

    @property
    def envelope(self) -> RunEnvelope:
        """The run's RunEnvelope (always the second artifact, after the request)."""
        found = self._log.last("RunEnvelope")
        if not found:
            raise LookupError("run has no RunEnvelope")
        body: RunEnvelope = found[0].body
        return body

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
        return self._log.find(artifact_id)

    def all(self, artifact_type: str) -> tuple[StoredArtifact, ...]:
        """Return every artifact of ``artifact_type`` in ledger order."""
        return self._log.members(artifact_type)

    def recent(self, artifact_type: str, count: int) -> tuple[StoredArtifact, ...]:
        """Return the last ``count`` artifacts of ``artifact_type`` in ledger order."""
        return self._log.last(artifact_type, count)

    def latest(self, artifact_type: str) -> StoredArtifact | None:
        """Return the most recent artifact of ``artifact_type``, or None."""
        found = self._log.last(artifact_type)
        return found[0] if found else None

    def position(self, artifact: StoredArtifact) -> int:
        """Return the index of ``artifact`` (of this run) in ledger order. Raises ``KeyError``."""
        position = self._log.position(artifact.id)
        if position is None:
            raise KeyError(artifact.id)
        return position

    def trace_event(self, uri: str) -> TraceEntry | None:
        """Return the event ``trace://<runId>/<eventId or event-NNNN>`` names, or None."""
        prefix = f"trace://{self.run.run_id}/"
        if not uri.startswith(prefix):
            return None
        name = uri[len(prefix) :]
        # The first event in trace order that the name matches, by id or by sequence.
        match = _SEQUENCE_RE.match(name)
        found = [self._events.position(name)]
        if match is not None:
            found.append(self._events.position(int(match.group(1))))
        positions = [position for position in found if position is not None]
        return self._events[min(positions)] if positions else None

    def all_after(
        self, anchor: StoredArtifact | None, artifact_type: str
    ) -> tuple[StoredArtifact, ...]:
        """Return the artifacts of ``artifact_type`` stored after ``anchor`` (all when None)."""
        return self._log.members(artifact_type, -1 if anchor is None else self.position(anchor))
