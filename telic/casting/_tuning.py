"""The digest across runs: how often packets go unused, and what each verdict costs, for tuning.

``packet_stats`` is a pure function over every packet of a repository's runs with its
consumption record (or none yet); ``render_stats`` writes it as text. A packet is *consumed*
when its parent's next decision cited it, *unconsumed* when that decision did not, and *pending*
while no decision has been checked against it yet; the unconsumed rate of a cast type and need
code is unconsumed / (consumed + unconsumed), pending packets left out. Tokens and turns are the
children's own reports (self-reported); wall time is what Telic measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields

from pydantic.alias_generators import to_camel

from telic_packets import ConsumptionRecord, Packet


def _wire(stats: RouteStats | VerdictSpend | PacketStats) -> dict[str, object]:
    """The fields of ``stats`` in order, by their camelCase names."""
    return {to_camel(f.name): getattr(stats, f.name) for f in fields(stats)}


@dataclass(slots=True)
class RouteStats:
    """Consumption of one cast type serving one need code."""

    cast_type: str
    need_code: str
    consumed: int = 0
    unconsumed: int = 0
    pending: int = 0

    @property
    def unconsumed_rate(self) -> float | None:
        """Unconsumed packets among those a decision was checked against, or None if none was."""
        judged = self.consumed + self.unconsumed
        return None if judged == 0 else self.unconsumed / judged

    def to_wire(self) -> dict[str, object]:
        """Return the camelCase form."""
        return {**_wire(self), "unconsumedRate": self.unconsumed_rate}


@dataclass(slots=True)
class VerdictSpend:
    """What the packets of one verdict cost."""

    verdict: str
    packets: int = 0
    self_reported_tokens: int = 0
    self_reported_turns: int = 0
    measured_wall_ms: int = 0

    def to_wire(self) -> dict[str, object]:
        """Return the camelCase form."""
        return _wire(self)


@dataclass(slots=True)
class PacketStats:
    """Packets across runs: consumption per cast type and need code, spend per verdict."""

    runs: int
    packets: int = 0
    routes: list[RouteStats] = field(default_factory=list)
    verdicts: list[VerdictSpend] = field(default_factory=list)

    def to_wire(self) -> dict[str, object]:
        """Return the camelCase form."""
        return {
            **_wire(self),
            "routes": [route.to_wire() for route in self.routes],
            "verdicts": [spend.to_wire() for spend in self.verdicts],
        }


_VERDICT_ORDER = ("verified", "partially_verified", "unverified", "rejected")


def packet_stats(
    runs: Iterable[Mapping[str, tuple[Packet, ConsumptionRecord | None]]],
) -> PacketStats:
    """Aggregate the packets of ``runs`` (each: packet id → packet and its record, if any).

    Routes are ordered by unconsumed rate, highest first (unjudged last), then by name;
    verdicts in the order verified, partially_verified, unverified, rejected.
    """
    routes: dict[tuple[str, str], RouteStats] = {}
    verdicts: dict[str, VerdictSpend] = {}
    count = 0
    total = 0
    for run in runs:
        count += 1
        for packet, record in run.values():
            total += 1
            key = (packet.cast_type, packet.routing.need_code)
            route = routes.setdefault(key, RouteStats(*key))
            if record is None:
                route.pending += 1
            elif record.cited:
                route.consumed += 1
            else:
                route.unconsumed += 1
            spend = verdicts.setdefault(packet.verdict, VerdictSpend(packet.verdict))
            spend.packets += 1
            spend.self_reported_tokens += packet.counters.total_tokens
            spend.self_reported_turns += packet.counters.turns
            spend.measured_wall_ms += packet.counters.wall_ms
    ordered = sorted(
        routes.values(),
        key=lambda r: (
            r.unconsumed_rate is None,
            -(r.unconsumed_rate or 0.0),
            r.cast_type,
            r.need_code,
        ),
    )
    spends = sorted(verdicts.values(), key=lambda s: _VERDICT_ORDER.index(s.verdict))
    return PacketStats(runs=count, packets=total, routes=ordered, verdicts=spends)


def render_stats(stats: PacketStats) -> str:
    """Render ``stats`` as plain text, one line per route and per verdict."""
    lines = [f"{stats.packets} packets in {stats.runs} runs"]
    if stats.routes:
        lines.append("Unconsumed rate by cast type and need code:")
    for route in stats.routes:
        rate = route.unconsumed_rate
        shown = "n/a" if rate is None else f"{rate:.0%}"
        lines.append(
            f"  {route.cast_type}/{route.need_code}: {shown} unconsumed "
            f"({route.unconsumed} of {route.consumed + route.unconsumed} judged; "
            f"{route.pending} pending)"
        )
    if stats.verdicts:
        lines.append("Spend by verdict:")
    for spend in stats.verdicts:
        lines.append(
            f"  {spend.verdict}: {spend.packets} packets, "
            f"{spend.self_reported_tokens} tokens and {spend.self_reported_turns} turns "
            f"self-reported, {spend.measured_wall_ms} ms wall measured"
        )
    return "\n".join(lines)
