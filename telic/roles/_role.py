"""The five role actors: each checks its own phase's submissions through the pure core.

A role actor holds no run state. It receives a ``Validate`` message that points, by digest, at
the phase's projection (the run state at the caller's token) and at the staged submission,
refuses a submission of a phase it does not own, and runs ``step`` — schema, cross-artifact
invariants, permissions — to say whether the run actor may commit. It never writes: an accepted
step travels back in the reply and the run actor commits exactly that step.
"""

from __future__ import annotations

from typing import Final, Literal, cast

from telic._errors import InvalidTransition, Issue, TelicError
from telic.controller import (
    PHASES,
    Accepted,
    Rejection,
    RunState,
    SubmitArtifact,
    Token,
    step,
)
from telic.roles._blobs import BlobStage
from telic.roles._messages import Outcome, Validate
from telic_actors import Actor

__all__ = ["ROLES", "Role", "RoleActor"]

Role = Literal[
    "scenario_author", "task_compiler", "quality_controller", "executor", "release_auditor"
]
"""The five logical roles the host's model plays."""

ROLES: Final[tuple[Role, ...]] = (
    "scenario_author",
    "task_compiler",
    "quality_controller",
    "executor",
    "release_auditor",
)


class RoleActor(Actor[Validate]):
    """One logical role: validates submissions of the phases it owns."""

    def __init__(self, role: Role, stage: BlobStage) -> None:
        self.role = role
        self._stage = stage
        self.validated = 0
        """Submissions this incarnation checked."""

    async def on_message(self, message: Validate) -> Outcome[Accepted | Rejection]:
        """Check one submission; the reply carries the refusal, if any."""
        self.validated += 1
        try:
            state = cast(RunState, self._stage.get(message.projection))
            payload = cast(dict[str, object], self._stage.get(message.payload))
            spec = PHASES.get(state.run.phase)
            if spec is None or spec.role != self.role or message.role != self.role:
                text = f"the {self.role} role does not own phase {state.run.phase}"
                raise InvalidTransition(text, issues=(Issue("", "role", text, "RUN-PHASE-TYPE"),))
            refs = payload.get("sourceRefs", [])
            submission = SubmitArtifact(
                Token(message.action_id, message.expected_run_version),
                message.artifact_type,
                payload.get("body"),
                tuple(cast(list[str], refs)),
                message.now,
            )
            outcome = step(state, submission)
        except TelicError as error:
            return Outcome(error=error)
        # A rejection travels back whole: it may carry DENY records the run must persist.
        return Outcome(value=outcome)
