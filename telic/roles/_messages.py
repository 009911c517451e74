"""The bounded messages that carry every state change, and the replies they get.

Each message is a frozen dataclass of small scalars: ids, tokens, counters and the digests of
what was staged in the ``BlobStage``. ``message_size`` measures the canonical JSON a message
would be on the wire, which the mailboxes bound at ``MAX_MESSAGE_BYTES``. Replies are
``Outcome`` values: an error of the run is a reply, not an actor failure, so a refused submission
never restarts anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Final, Generic, TypeVar, cast

from telic.casting import Admission, ProgressStatus
from telic.controller import Accepted, Rejection, StepResult
from telic.permissions import BrokerDecision
from telic.protocol import canonical_json
from telic_actors import Ask
from telic_packets import Packet

__all__ = [
    "MAX_MESSAGE_BYTES",
    "Answer",
    "CancelRun",
    "CastChild",
    "CheckTool",
    "Expire",
    "GroundRun",
    "Outcome",
    "Progress",
    "ReturnPacket",
    "RunMessage",
    "StartRun",
    "Submit",
    "Validate",
    "message_size",
]

T = TypeVar("T")

MAX_MESSAGE_BYTES: Final = 8192
"""Largest message a mailbox accepts, in bytes of canonical JSON (a packet's bound)."""


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """A reply: the value, or the error the run refused the call with."""

    value: T | None = None
    error: Exception | None = None

    def unwrap(self) -> T:
        """Return the value or raise the error."""
        if self.error is not None:
            raise self.error
        return cast(T, self.value)


_SCALARS: Final = (str, int, float, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(field.name for field in fields(kind))
    return names


def message_size(message: object) -> int:
    """Return the size of ``message`` as canonical JSON, in bytes.

    Messages are flat records of scalars, read field by field; anything nested goes through
    ``asdict``, which copies it deeply.
    """
    kind = type(message)
    values = {name: getattr(message, name) for name in _field_names(kind)}
    if not all(isinstance(value, _SCALARS) for value in values.values()):
        values = asdict(message)  # type: ignore[call-overload]
    return len(canonical_json({"type": kind.__name__, **values}))


@dataclass(frozen=True, slots=True)
class StartRun(Ask[Outcome[StepResult]]):
    """Start a run; ``payload`` stages the request, mode, authority and cast types."""

    payload: str


@dataclass(frozen=True, slots=True)
class GroundRun(Ask[Outcome[StepResult]]):
    """Accept a grounding; ``payload`` stages ``{manifest, documents}`` in wire form."""

    run_id: str
    action_id: str
    expected_run_version: int
    payload: str


@dataclass(frozen=True, slots=True)
class Submit(Ask[Outcome[StepResult]]):
    """Submit an artifact; ``payload`` stages ``{body, sourceRefs}``."""

    run_id: str
    action_id: str
    expected_run_version: int
    artifact_type: str
    payload: str


@dataclass(frozen=True, slots=True)
class Answer(Ask[Outcome[StepResult]]):
    """Answer the pending clarification; ``payload`` stages ``{response, elicited}``."""

    run_id: str
    action_id: str
    expected_run_version: int
    payload: str


@dataclass(frozen=True, slots=True)
class CancelRun(Ask[Outcome[StepResult]]):
    """Cancel the run."""

    run_id: str
    action_id: str
    expected_run_version: int


@dataclass(frozen=True, slots=True)
class CastChild(Ask[Outcome[Admission]]):
    """Cast a child; ``payload`` stages the cast request."""

    run_id: str
    payload: str


@dataclass(frozen=True, slots=True)
class Progress(Ask[Outcome[ProgressStatus]]):
    """A child's cumulative progress report."""

    run_id: str
    cast_id: str
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class ReturnPacket(Ask[Outcome[Packet]]):
    """A child's return; ``payload`` stages ``{raw}``."""

    run_id: str
    cast_id: str
    payload: str


@dataclass(frozen=True, slots=True)
class CheckTool(Ask[Outcome[BrokerDecision]]):
    """A host hook's pre-action permission question; ``payload`` stages ``{capability, target}``
    and, in the original's dialect, ``token: [action_id, expected_run_version]``."""

    run_id: str
    payload: str


@dataclass(frozen=True, slots=True)
class Validate(Ask[Outcome[Accepted | Rejection]]):
    """Ask a role actor to check a submission against its phase's projection (both staged).

    The reply carries the step's outcome, which the run actor settles as it is: an accepted step
    is committed, a rejection persists its DENY records and raises. The submission is validated
    once.
    """

    role: str
    action_id: str
    expected_run_version: int
    artifact_type: str
    projection: str
    payload: str
    now: str


@dataclass(frozen=True, slots=True)
class Expire(Ask[Outcome[None]]):
    """The deadline keeper's nudge: a cast's wall budget or its grace ran out (``_expire`` runs
    before every message, so the message itself carries nothing)."""

    run_id: str


RunMessage = (
    GroundRun
    | Submit
    | Answer
    | CancelRun
    | CastChild
    | Progress
    | ReturnPacket
    | CheckTool
    | Expire
)
"""What a run actor's mailbox accepts."""
