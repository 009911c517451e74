"""Progress reports of a child: monotonic counters, and exhaustion when a cap is crossed."""

from __future__ import annotations

from dataclasses import dataclass, replace

from telic._errors import Issue, SchemaViolation
from telic.casting._book import OpenCast
from telic_packets import Counters, PacketRefusal, StopReason


@dataclass(frozen=True, slots=True)
class ProgressStatus:
    """Where a cast stands after a progress report."""

    open_cast: OpenCast
    """A copy of the cast as the report left it (its reported and observed spend)."""
    counters: Counters
    """The counters reached (never lower than any earlier report)."""
    stop_reason: StopReason | None
    """The cap this report crossed (an exhausted cast takes no more reports), or None."""

    @property
    def cast_id(self) -> str:
        """The cast's id."""
        return self.open_cast.cast_id

    @property
    def calls_through_telic(self) -> int:
        """Calls the child made through Telic for this cast: accepted progress reports and casts."""
        return self.open_cast.calls_through_telic

    @property
    def exhausted(self) -> bool:
        """Whether this report crossed a cap: the child must now return a partial."""
        return self.stop_reason is not None

    def to_wire(self) -> dict[str, object]:
        """Return the camelCase status a tool result carries.

        ``counters`` is the packet contract's shape (turns and tool calls: the larger of the
        reported and the observed); ``spend`` says which of it Telic measured (wall time, calls
        through Telic, and a native child's turns and tool calls its host's hook showed it) and
        which the child reported about itself (turns, tool calls, tokens).
        """
        counters, cast = self.counters, self.open_cast
        return {
            "castId": self.cast_id,
            "counters": counters.to_wire(),
            "spend": {
                "measured": {
                    "wallMs": counters.wall_ms,
                    "callsThroughTelic": self.calls_through_telic,
                    "turnsObserved": cast.observed_turns,
                    "toolCallsObserved": cast.observed_tool_calls,
                },
                "selfReported": {
                    "turns": cast.turns,
                    "toolCalls": cast.tool_calls,
                    "inputTokens": counters.input_tokens,
                    "outputTokens": counters.output_tokens,
                    "totalTokens": counters.total_tokens,
                },
            },
            "exhausted": self.exhausted,
            "stopReason": self.stop_reason,
        }


def _count(name: str, value: object) -> int:
    if type(value) is not int or value < 0:
        message = f"{name} must be a non-negative integer"
        raise SchemaViolation(message, issues=(Issue(name, "not_a_count", message),))
    return value


def record_progress(
    open_cast: OpenCast,
    *,
    turns: int,
    tool_calls: int,
    input_tokens: int,
    output_tokens: int,
    now: float,
) -> ProgressStatus:
    """Apply a cumulative progress report to ``open_cast``; counters never go down.

    Raises:
        PacketRefusal: ``budget_exhausted_requires_partial`` once the cast is exhausted: no
            more progress is taken, only a partial return.
        SchemaViolation: a counter is not a non-negative integer.
    """
    reported = {
        "turns": _count("turns", turns),
        "tool_calls": _count("tool_calls", tool_calls),
        "input_tokens": _count("input_tokens", input_tokens),
        "output_tokens": _count("output_tokens", output_tokens),
    }
    if open_cast.exhausted:
        raise PacketRefusal(
            "budget_exhausted_requires_partial",
            f"the cast is exhausted ({open_cast.stop_reason}); return a partial packet",
        )
    for name, value in reported.items():
        setattr(open_cast, name, max(getattr(open_cast, name), value))
    counters, stop = open_cast.spent(now)
    open_cast.stop_reason = stop
    open_cast.reports += 1
    return ProgressStatus(replace(open_cast), counters, stop)
