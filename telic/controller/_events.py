"""What ``step`` consumes (submissions) and what it returns (an acceptance or a rejection).

Every submission carries the caller's concurrency token and the time the driver observed, so the
core never reads a clock. An ``Accepted`` lists exactly the artifacts and trace events the driver
must commit in one transaction; a ``Rejection`` carries the typed error naming its rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from telic._errors import TelicError
from telic.controller._state import RunState, StoredArtifact
from telic.protocol import ContextDocument, ContextManifest


@dataclass(frozen=True, slots=True)
class Token:
    """The optimistic-concurrency token a state-changing call must present."""

    action_id: str
    expected_run_version: int


@dataclass(frozen=True, slots=True)
class Ground:
    """Accept a grounded ContextManifest and the ContextDocuments it derives from."""

    token: Token
    manifest: ContextManifest
    documents: tuple[ContextDocument, ...]
    now: str


@dataclass(frozen=True, slots=True)
class SubmitArtifact:
    """A host submission: a type name, an untrusted JSON body and the caller's sourceRefs."""

    token: Token
    artifact_type: str
    body: object
    source_refs: tuple[str, ...]
    now: str


@dataclass(frozen=True, slots=True)
class AnswerClarification:
    """The user's answer to the pending ClarificationRequest: exactly one choice id."""

    token: Token
    response: str
    message_id: str
    """Id of the UserMessage that will hold the answer (the driver mints it)."""
    now: str
    elicited: bool = False
    """The user chose it in the client's own form (MCP elicitation), not the host's model."""


@dataclass(frozen=True, slots=True)
class Cancel:
    """Cancel the run (a terminal run is returned unchanged)."""

    token: Token
    now: str


Submission = Ground | SubmitArtifact | AnswerClarification | Cancel
"""Everything that can move a run."""


@dataclass(frozen=True, slots=True)
class TraceNote:
    """A trace event to append, named by its internal event type."""

    event_type: str
    actor: str
    phase: str
    input_refs: tuple[str, ...] = ()
    output_refs: tuple[str, ...] = ()
    permission_decision: Mapping[str, Any] | None = None
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Accepted:
    """The submission is legal: the new state and the records that make it durable."""

    state: RunState
    artifacts: tuple[StoredArtifact, ...] = ()
    events: tuple[TraceNote, ...] = ()
    supporting: bool = False
    """A stored Evidence or ScenarioSpec (the version does not move)."""
    replay_of: str | None = None
    """The id of the stored artifact an identical replay repeats (its metadata is returned)."""
    changed: bool = True
    """False when the run is returned unchanged (cancel of a terminal run, a replay)."""
    escalated: TelicError | None = None
    """Set when the submission was not stored but moved the run up a topology (a
    pre-escalation, docs/protocol.md §3.7): the driver commits the move, then raises this."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """The submission is refused; the run is unchanged. ``error`` names the failed rules.

    ``events`` holds the only records a rejection ever persists: DENY ``permission_checked``
    decisions for mutations a read-only WorkResult attempted (docs/protocol.md §3.4 WorkResult).
    """

    error: TelicError
    events: tuple[TraceNote, ...] = ()
