"""The hook's side of a native child: read its cast's facts beside an SQLite ledger, decide.

A host's subagent is held to the cast it serves (``telic.casting._child``). The hook reads the
run's cast events straight from the ``trace_events`` table (the same blocking SQLite door as the
run rows), and keeps each bound cast's scope — its budget, permissions and pointers, computed
once through the controller (``compute_scope``, the slow path) — in a file beside the database.
A cast's scope never changes after admission, so a stored one is good for as long as the cast
is open; one that is missing or unreadable is computed again. The decisions return the verdict
and the ``(event_type, summary)`` pairs to append; the hook writes them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from telic.casting import (
    BOUND_EVENT,
    CALL_EVENT,
    CHILD_EVENTS,
    EXHAUSTED_EVENT,
    HANDOFF_EVENT,
    SEALED_EVENT,
    STARTED_EVENT,
    STOPPED_EVENT,
    Children,
    ChildScope,
    bind_target,
    bound_summary,
    call_summary,
    children_of,
    handed_cast,
    handoff_summary,
    judge_child_call,
    open_casts_of,
    returned_packet,
    stopped_summary,
)
from telic.hosts._dialects import Call, Verdict
from telic.hosts._layers import Authority, Store, state_file, write_private
from telic.ledger import BlockingLedger

if TYPE_CHECKING:
    from telic.ledger import Ledger


SCOPES_DIR: Final = "hook-casts"
_FORMAT: Final = "telic.hook-cast/1"
_EVENTS: Final = (*sorted(CHILD_EVENTS), EXHAUSTED_EVENT, STARTED_EVENT, SEALED_EVENT)


class CastFacts(NamedTuple):
    """A run's casts as its trace says: the open ones, and its native children."""

    open_casts: tuple[str, ...]
    children: Children


class Decided(NamedTuple):
    """A verdict and the cast events it records (``(event_type, summary)``, in order)."""

    verdict: Verdict
    events: tuple[tuple[str, str], ...] = ()
    scope: str | None = None
    """The normalised target of a judged call (what the trace names), when one was decided."""


def read_cast_facts(ledger: BlockingLedger, run_id: str) -> CastFacts:
    """Read ``run_id``'s cast events from the ledger (one query, in sequence order)."""
    rows = ledger.events_of(run_id, _EVENTS)
    refs = [(str(r[0]), json.loads(r[2]), json.loads(r[3])) for r in rows]
    return CastFacts(open_casts_of(refs), children_of((str(r[0]), str(r[1])) for r in rows))


def read_scope(state_dir: Path, run_id: str, cast_id: str) -> ChildScope | None:
    """The stored scope of a cast; ``None`` when absent or unreadable (then computed)."""
    try:
        stored = json.loads(state_file(state_dir, SCOPES_DIR, f"{run_id}\n{cast_id}").read_bytes())
        if not isinstance(stored, dict) or stored.get("format") != _FORMAT:
            return None
        if stored.get("runId") != run_id:
            return None
        scope = ChildScope.from_json(stored.get("scope"))
    except (OSError, ValueError):
        return None
    return scope if scope.cast_id == cast_id else None


def write_scope(state_dir: Path, run_id: str, scope: ChildScope) -> None:
    """Store a cast's scope (atomically, mode 0600; the last writer wins)."""
    document = {"format": _FORMAT, "runId": run_id, "scope": scope.to_json()}
    write_private(state_file(state_dir, SCOPES_DIR, f"{run_id}\n{scope.cast_id}"), document)


def compute_scope(store: Store, run_id: str, cast_id: str) -> ChildScope | None:
    """Load the cast's scope through the controller (the slow path); ``None``: not open.

    The registry is the one the server casts against: the state directory's configuration
    file under the run's own cast types.

    Raises:
        TelicError: the run cannot be loaded, or the configuration cannot be read.
    """
    from telic.casting import find_config, load_cast_types, load_child_scope

    configured = find_config(store.state_dir, Path(store.root))
    server = load_cast_types(configured) if configured is not None else ()

    async def load(ledger: Ledger) -> ChildScope | None:
        return await load_child_scope(ledger, run_id, cast_id, server_cast_types=server)

    return store.run(load)


def _scope(store: Store, run_id: str, cast_id: str) -> ChildScope | None:
    stored = read_scope(store.state_dir, run_id, cast_id)
    if stored is not None:
        return stored
    scope = compute_scope(store, run_id, cast_id)
    if scope is not None:
        with contextlib.suppress(OSError):  # a scope not stored costs the next call time only
            write_scope(store.state_dir, run_id, scope)
    return scope


def spawn_handoff(call: Call, facts: CastFacts, where: str) -> Decided:
    """A parent's spawn call that every layer allowed: it must carry one open cast's handoff,
    so that the child it starts can be bound; the handoff is recorded for that start."""
    cast_id = handed_cast(call.spawn_text or "", facts.open_casts, facts.children)
    if cast_id is None:
        reason = (
            f"{where} denies {call.tool}: a subagent started while the run is live must serve "
            "one open cast, and this call's prompt names none that is open and not taken "
            "(cast it with telic_cast and pass the handoff it returns, castId included, in "
            "the prompt) (layer: cast_binding; no_handoff)"
        )
        return Decided(Verdict("deny", reason))
    reason = f"{where}: {call.tool} starts the child of cast {cast_id}"
    summary = handoff_summary(cast_id, call.agent_type or _spawned_type(call))
    return Decided(Verdict("allow", reason), ((HANDOFF_EVENT, summary),))


def _spawned_type(call: Call) -> str:
    """The agent type a spawn call asks for: the target the tool table read (its
    ``subagent_type``), when the call named one."""
    if isinstance(call.asks, tuple) and call.asks and call.asks[0].target:
        return call.asks[0].target
    return ""


def child_start(call: Call, facts: CastFacts, where: str, store: Store, run_id: str) -> Decided:
    """A starting subagent: bind it to the cast its spawn call handed off (or, on a host whose
    hook never sees the spawn call, to the run's only open cast no child holds). Its answer is
    context for the child: the host cannot refuse a start, only its calls."""
    agent_id, agent_type = call.agent_id or "", call.agent_type or ""
    cast_id = bind_target(facts.children, agent_id, agent_type, facts.open_casts)
    if cast_id is None and not call.spawn_seen:
        taken = set(facts.children.bound.values())
        free = [c for c in facts.open_casts if c not in taken]
        cast_id = free[0] if len(free) == 1 else None
    if cast_id is None:
        reason = (
            f"{where}: this subagent ({agent_type or 'untyped'} {agent_id}) serves no open "
            "Telic cast, so every tool call it makes while the run is live is denied. Reply "
            "to your parent at once that you could not be bound to a cast."
        )
        return Decided(Verdict("deny", reason))
    scope = _scope(store, run_id, cast_id)
    if scope is None:
        reason = f"{where}: cast {cast_id} is not open any more; every tool call is denied"
        return Decided(Verdict("deny", reason))
    events = (
        ()
        if facts.children.cast_of(agent_id) == cast_id
        else ((BOUND_EVENT, bound_summary(cast_id, agent_id)),)
    )
    reads = (
        "reads only inside " + ", ".join(f"repo://{p}" for p in scope.pointers)
        if scope.pointers is not None
        else "what its permissions allow"
    )
    reason = (
        f"{where}: you serve Telic cast {cast_id}. Telic counts each of your tool calls as a "
        f"turn, and allows at most {scope.max_turns}; it allows "
        + ("no change (read-only), " if scope.read_only else "")
        + f"{reads}. Return one evidence packet as your last message."
    )
    return Decided(Verdict("allow", reason), events)


def child_call(
    call: Call,
    facts: CastFacts,
    where: str,
    store: Store,
    run_id: str,
    authority: Authority,
) -> Decided:
    """One call of a subagent: judged against the cast it is bound to, never the parent's
    phase; a subagent bound to no open cast is denied."""
    agent_id = call.agent_id or ""
    cast_id = facts.children.cast_of(agent_id)
    if cast_id is None or cast_id not in facts.open_casts:
        why = "is bound to no cast" if cast_id is None else f"served cast {cast_id}, now closed"
        reason = (
            f"{where} denies {call.tool} of subagent {agent_id}: it {why}, and while the run "
            "is live a subagent acts only for an open cast its parent handed it "
            "(layer: cast_binding; unbound_child)"
        )
        return Decided(Verdict("deny", reason))
    scope = _scope(store, run_id, cast_id)
    if scope is None:
        reason = f"{where} denies {call.tool}: cast {cast_id} is not open any more"
        return Decided(Verdict("deny", reason))
    asks: Sequence[tuple[str, str | None]] = (
        [(m.capability, m.target) for m in call.asks] if isinstance(call.asks, tuple) else []
    )
    if not asks:
        reason = (
            f"{where} denies {call.tool} of cast {cast_id}: Telic cannot map the tool to a "
            "capability (layer: cast; unmapped)"
        )
        return Decided(Verdict("deny", reason))
    judged = judge_child_call(
        scope,
        facts.children.spend_of(cast_id),
        asks,
        authority.layers,
        exhausted=cast_id in facts.children.exhausted,
        repository_root=store.root,
        protected_granted=authority.protected_granted,
    )
    events = [
        (CALL_EVENT, call_summary(cast_id, agent_id, judged.observed, allowed=judged.allowed))
    ]
    if judged.newly_exhausted:
        exhausted = json.dumps(
            {"castId": cast_id, "stopReason": "turn_capped"}, sort_keys=True, separators=(",", ":")
        )
        events.append((EXHAUSTED_EVENT, exhausted))
    verdict = Verdict("allow" if judged.allowed else "deny", f"{where}: {judged.reason}")
    return Decided(verdict, tuple(events), judged.scope)


def child_stop(call: Call, facts: CastFacts, where: str) -> Decided:
    """A stopping subagent: its last message must be a packet. One that is not is kept going
    once with the repair (``not_a_packet``); after that it may stop, and its cast stays open
    for the parent's return, the deadline keeper or the node's end — never completed."""
    agent_id = call.agent_id or ""
    cast_id = facts.children.cast_of(agent_id)
    if cast_id is None:
        return Decided(Verdict("allow", f"{where}: subagent {agent_id} served no cast"))
    returned = returned_packet(call.last_message)
    events = ((STOPPED_EVENT, stopped_summary(cast_id, agent_id, returned=returned)),)
    if returned or call.stop_active or cast_id not in facts.open_casts:
        return Decided(Verdict("allow", f"{where}: cast {cast_id}'s child stopped"), events)
    partial = cast_id in facts.children.exhausted
    reason = (
        f"{where}: cast {cast_id} needs one evidence packet as your last message "
        "(not_a_packet): reply with exactly one JSON object — claim, evidence, completed"
        + (", remaining (your budget is spent: a partial)" if partial else "")
        + " — and no prose around it"
    )
    return Decided(Verdict("deny", reason), events)
