"""Durable cast state: what the ledger records of an open cast, and reopening casts from it.

An open cast's facts are all in the run's hash chain, so ``telic verify`` covers them and a
restart loses nothing: the ``CastRecord`` artifact (its creation time starts the wall clock),
a ``cast_progress`` event per accepted progress report (the child's self-reported counters as
canonical JSON), a ``cast_exhausted`` event when a cap is crossed (the stop reason as JSON) and
the ``EvidencePacket`` once sealed. ``reopen_casts`` rebuilds the in-memory ``OpenCast`` of
every cast without a packet from those records, purely: its counters, its stop reason, its
children, its depth and the child's permissions (recomputed from its node and cast type as at
admission), so a child can still report and return after the server restarted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Final, get_args

from telic.casting._admit import _max_depth, child_permissions
from telic.casting._book import OpenCast
from telic.controller import RunState, StoredArtifact
from telic.ledger import TraceRecord
from telic.protocol import PermissionSet
from telic_packets import CastTypeRegistry, StopReason, canonical_json

__all__ = [
    "EXHAUSTED_EVENT",
    "PROGRESS_EVENT",
    "exhausted_summary",
    "progress_summary",
    "reopen_casts",
    "seconds",
]

PROGRESS_EVENT: Final = "cast_progress"
"""The trace event holding a cast's counters after an accepted progress report."""

EXHAUSTED_EVENT: Final = "cast_exhausted"
"""The trace event recording the cap a cast went past."""


_STOP_REASONS: Final[tuple[StopReason, ...]] = get_args(StopReason)


def seconds(timestamp: str) -> float:
    """Return a ledger timestamp (``…Z``) as POSIX seconds: the clock casts measure wall time in."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def progress_summary(open_cast: OpenCast) -> str:
    """Return the ``cast_progress`` summary: the cast id and its counters, canonical JSON."""
    return canonical_json(
        {
            "castId": open_cast.cast_id,
            "turns": open_cast.turns,
            "toolCalls": open_cast.tool_calls,
            "inputTokens": open_cast.input_tokens,
            "outputTokens": open_cast.output_tokens,
        }
    ).decode("utf-8")


def exhausted_summary(open_cast: OpenCast) -> str:
    """Return the ``cast_exhausted`` summary: the cast id and the cap it went past."""
    return canonical_json(
        {"castId": open_cast.cast_id, "stopReason": open_cast.stop_reason}
    ).decode("utf-8")


def _facts(events: Iterable[TraceRecord]) -> dict[str, dict[str, object]]:
    """Cast id → the latest counters and stop reason its events recorded, and its reports."""
    facts: dict[str, dict[str, object]] = {}
    for event in events:
        if event.event_type not in (PROGRESS_EVENT, EXHAUSTED_EVENT):
            continue
        try:
            summary = json.loads(event.decision_summary)
        except ValueError:
            continue  # an event written before casts were durable: a sentence, not JSON
        if not isinstance(summary, dict) or not isinstance(summary.get("castId"), str):
            continue
        known = facts.setdefault(summary["castId"], {"reports": 0})
        reports = known["reports"]
        known.update(summary)
        assert isinstance(reports, int)
        known["reports"] = reports + (event.event_type == PROGRESS_EVENT)
    return facts


def _count(facts: dict[str, object], name: str) -> int:
    value = facts.get(name, 0)
    return value if type(value) is int and value >= 0 else 0


def _stop(facts: dict[str, object]) -> StopReason | None:
    value = facts.get("stopReason")
    for reason in _STOP_REASONS:
        if value == reason:
            return reason
    return None


def _parent_id(record: StoredArtifact) -> str | None:
    if len(record.source_refs) < 2:
        return None
    return record.source_refs[1].rsplit("/", 1)[-1]


def reopen_casts(
    state: RunState, events: Iterable[TraceRecord], *, registry: CastTypeRegistry
) -> dict[str, OpenCast]:
    """Return cast id → ``OpenCast`` for every cast of the run that has no packet yet.

    ``events`` is the run's whole trace. A cast whose work node or cast type cannot be found
    any more keeps no permissions (it can still return; it can cast nothing).
    """
    records = list(state.all("CastRecord"))
    sealed = {artifact.body.cast_id for artifact in state.all("EvidencePacket")}
    facts = _facts(events)
    built: dict[str, OpenCast] = {}
    for record in records:  # oldest first: a parent is always built before its children
        cast = record.body
        parent = built.get(_parent_id(record) or "")
        plan = state.by_uri(record.source_refs[0]) if record.source_refs else None
        node = None
        if plan is not None and plan.type == "WorkPlan":
            node = next((n for n in plan.body.nodes if n.id == cast.work_node_id), None)
        entry = registry.get(cast.cast_type)
        permissions = PermissionSet.empty()
        depth = 1 if parent is None else parent.depth + 1
        if node is not None and (parent is not None or _parent_id(record) is None):
            caller = node.permissions if parent is None else parent.permissions
            permissions = child_permissions(
                caller,
                read_only=entry is None or entry.read_only,
                depth=depth,
                max_depth=_max_depth(state, node.permissions),
            )
        known = facts.get(cast.cast_id, {})
        open_cast = OpenCast(
            cast=cast,
            permissions=permissions,
            depth=depth,
            plan_uri=record.source_refs[0] if record.source_refs else "",
            started_at=seconds(record.created_at),
            parent_cast_id=_parent_id(record),
            turns=_count(known, "turns"),
            tool_calls=_count(known, "toolCalls"),
            input_tokens=_count(known, "inputTokens"),
            output_tokens=_count(known, "outputTokens"),
            stop_reason=_stop(known),
            reports=_count(known, "reports"),
        )
        built[cast.cast_id] = open_cast
        if parent is not None:
            parent.children += 1
    return {cast_id: cast for cast_id, cast in built.items() if cast_id not in sealed}
