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
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Final, get_args

from telic.casting._admit import _max_depth, child_permissions
from telic.casting._book import OpenCast
from telic.casting._child import (
    EXHAUSTED_EVENT,
    STARTED_EVENT,
    ChildScope,
    children_of,
    count_of,
    pointer_paths,
)
from telic.casting._config import effective_registry
from telic.casting._observe import parent_casts, read_trace
from telic.controller import Controller, RunState
from telic.ledger import Ledger, TraceRecord
from telic.permissions import Layer
from telic.protocol import PermissionSet
from telic_packets import CastType, CastTypeRegistry, StopReason, canonical_json

PROGRESS_EVENT: Final = "cast_progress"
"""The trace event holding a cast's counters after an accepted progress report."""


_STOP_REASONS: Final[tuple[StopReason, ...]] = get_args(StopReason)


def parse_time(timestamp: str) -> datetime:
    """Return the aware datetime of a ledger timestamp (``…Z``)."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def seconds(timestamp: str) -> float:
    """Return a ledger timestamp (``…Z``) as POSIX seconds: the clock casts measure wall time in."""
    return parse_time(timestamp).timestamp()


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


def _stop(facts: dict[str, object]) -> StopReason | None:
    return next((r for r in _STOP_REASONS if r == facts.get("stopReason")), None)


def _pointers(events: Iterable[TraceRecord]) -> dict[str, tuple[str, ...]]:
    """Cast id → its handoff's pointers: a ``cast_started`` event's input refs after the plan,
    its output ref the cast's URI (``artifact://run/<cast id>``)."""
    found: dict[str, tuple[str, ...]] = {}
    for event in events:
        if event.event_type == STARTED_EVENT and event.output_refs:
            found[event.output_refs[0].rsplit("/", 1)[-1]] = tuple(event.input_refs[1:])
    return found


def child_scope(
    state: RunState, events: Iterable[TraceRecord], *, registry: CastTypeRegistry, cast_id: str
) -> ChildScope | None:
    """The scope a native child of the open cast ``cast_id`` is held to, or ``None`` when the
    cast is not open: its turn budget, its permissions as a layer (read-only for a read-only
    type, as at admission) and, for a read-only type whose handoff points into the repository,
    those paths (a read-only child looks where it was sent; a writing one may need to go
    further)."""
    open_cast = reopen_casts(state, events, registry=registry).get(cast_id)
    if open_cast is None:
        return None
    entry = registry.get(open_cast.cast.cast_type)
    read_only = entry is None or entry.read_only
    paths = pointer_paths(open_cast.pointers)
    return ChildScope(
        cast_id,
        open_cast.cast.budget.max_turns,
        read_only,
        Layer.from_permissions("cast", open_cast.permissions),
        paths if read_only and paths else None,
    )


def reopen_casts(
    state: RunState, events: Iterable[TraceRecord], *, registry: CastTypeRegistry
) -> dict[str, OpenCast]:
    """Return cast id → ``OpenCast`` for every cast of the run that has no packet yet.

    ``events`` is the run's whole trace. A cast whose work node or cast type cannot be found
    any more keeps no permissions (it can still return; it can cast nothing).
    """
    sealed = {artifact.body.cast_id for artifact in state.all("EvidencePacket")}
    events = list(events)
    facts = _facts(events)
    children = children_of((e.event_type, e.decision_summary) for e in events)
    pointers = _pointers(events)
    parents = parent_casts(state)
    built: dict[str, OpenCast] = {}
    # Oldest first: a parent is always built before its children.
    for record in state.all("CastRecord"):
        cast = record.body
        parent_id = parents[record.id]
        parent = built.get(parent_id or "")
        plan_uri = record.source_refs[0] if record.source_refs else ""
        plan = state.by_uri(plan_uri) if plan_uri else None
        node = None
        if plan is not None and plan.type == "WorkPlan":
            node = next((n for n in plan.body.nodes if n.id == cast.work_node_id), None)
        entry = registry.get(cast.cast_type)
        permissions = PermissionSet.empty()
        depth = 1 if parent is None else parent.depth + 1
        if node is not None and (parent is not None or parent_id is None):
            caller = node.permissions if parent is None else parent.permissions
            permissions = child_permissions(
                caller,
                read_only=entry is None or entry.read_only,
                depth=depth,
                max_depth=_max_depth(state, node.permissions),
            )
        known, seen = facts.get(cast.cast_id, {}), children.spend_of(cast.cast_id)
        open_cast = OpenCast(
            cast=cast,
            permissions=permissions,
            depth=depth,
            plan_uri=plan_uri,
            started_at=seconds(record.created_at),
            parent_cast_id=parent_id,
            turns=count_of(known.get("turns")),
            tool_calls=count_of(known.get("toolCalls")),
            input_tokens=count_of(known.get("inputTokens")),
            output_tokens=count_of(known.get("outputTokens")),
            stop_reason=_stop(known),
            reports=count_of(known.get("reports")),
            pointers=pointers.get(cast.cast_id, ()),
            observed_turns=seen.turns,
            observed_tool_calls=seen.tool_calls,
        )
        built[cast.cast_id] = open_cast
        if parent is not None:
            parent.children += 1
    return {cast_id: cast for cast_id, cast in built.items() if cast_id not in sealed}


async def load_child_scope(
    ledger: Ledger,
    run_id: str,
    cast_id: str,
    *,
    server_cast_types: Sequence[CastType] = (),
) -> ChildScope | None:
    """``child_scope`` read from the ledger: the run through the controller, its whole trace,
    and the registry the run casts against (``server_cast_types`` under the run's own).

    Raises:
        TelicError: the run cannot be loaded.
    """
    state = await Controller(ledger).load(run_id)
    events = await read_trace(ledger, run_id)
    registry = effective_registry(server_cast_types, state)
    return child_scope(state, events, registry=registry, cast_id=cast_id)
