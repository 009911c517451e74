"""The in-flight state of one cast: its admitted facts, its counters and whether it ran out.

An ``OpenCast`` is the run actor's in-memory copy of a cast from admission until its packet is
sealed; every fact of it is also in the ledger (``telic.casting._durable``), so a restarted
service reopens it. Counters only grow; the first report past a budget cap marks the cast
exhausted. Wall time is measured on the run's clock from the ``CastRecord``'s creation time, so
it survives a restart too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import telic_packets
from telic.protocol import PermissionSet
from telic_packets import Cast, Counters, StopReason

WALL_GRACE_MS: Final = telic_packets.WALL_GRACE_MS
"""How long past its wall-clock cap a child may still return its typed partial (the contract's
bound: at the first instant past cap + grace a cast nobody returned is sealed)."""


def stop_reason_of(*, turns: int, total_tokens: int, wall_ms: int, cast: Cast) -> StopReason | None:
    """Return the first budget cap the counters went past (turns, tokens, wall), or None."""
    budget = cast.budget
    if turns > budget.max_turns:
        return "turn_capped"
    if total_tokens > budget.max_total_tokens:
        return "token_capped"
    if budget.max_wall_ms is not None and wall_ms > budget.max_wall_ms:
        return "wall_capped"
    return None


def cap_reached(*, turns: int, total_tokens: int, wall_ms: int, cast: Cast) -> StopReason | None:
    """Return the first budget cap the counters reached (at or past it), or None."""
    # Counters are whole numbers: reaching a cap is going past it one unit later.
    return stop_reason_of(
        turns=turns + 1, total_tokens=total_tokens + 1, wall_ms=wall_ms + 1, cast=cast
    )


@dataclass(slots=True)
class OpenCast:
    """A cast whose child has not returned yet."""

    cast: Cast
    """The admitted facts copied into its packet."""
    permissions: PermissionSet
    """What the child may do: a subset of its caller's permissions."""
    depth: int
    """The child's cast depth (1 for a child of the work node's executor)."""
    plan_uri: str
    """The WorkPlan whose node the cast serves."""
    started_at: float
    """POSIX seconds of the run clock at admission (the CastRecord's creation time)."""
    parent_cast_id: str | None = None
    """The cast that cast this one, for nested casts."""
    children: int = 0
    """Casts this child started itself."""
    turns: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: StopReason | None = None
    """The cap the child went past; once set, only a partial return is accepted."""
    reports: int = 0
    """Progress reports accepted (each is a ``cast_progress`` event in the ledger)."""
    pointers: tuple[str, ...] = ()
    """The handoff's pointers (also the ``cast_started`` event's input refs after the plan)."""
    observed_turns: int = 0
    """Turns of a native child Telic observed through the host's hook (``cast_call`` events)."""
    observed_tool_calls: int = 0
    """Tool calls of a native child Telic observed through the host's hook."""

    @property
    def calls_through_telic(self) -> int:
        """Calls the child made through Telic, which Telic observes: reports and casts."""
        return self.reports + self.children

    @property
    def cast_id(self) -> str:
        """The cast's id."""
        return self.cast.cast_id

    @property
    def exhausted(self) -> bool:
        """Whether the child went past a budget cap."""
        return self.stop_reason is not None

    def wall_ms(self, now: float) -> int:
        """Milliseconds since admission at ``now`` (POSIX seconds of the run clock)."""
        return max(0, int((now - self.started_at) * 1000))

    def counters(self, now: float) -> Counters:
        """The counters reached so far (evidence counts are set when sealing).

        Turns and tool calls are the larger of what the child reported and what Telic observed
        of a native child, so a child cannot report itself under what it was seen to spend.
        """
        return Counters(
            turns=max(self.turns, self.observed_turns),
            tool_calls=max(self.tool_calls, self.observed_tool_calls),
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
            wall_ms=self.wall_ms(now),
            evidence_proposed=0,
            evidence_verified=0,
        )

    def spent(self, now: float) -> tuple[Counters, StopReason | None]:
        """The counters reached at ``now`` and the cap they went past (the recorded one first)."""
        c = self.counters(now)
        return c, self.stop_reason or stop_reason_of(
            turns=c.turns, total_tokens=c.total_tokens, wall_ms=c.wall_ms, cast=self.cast
        )
