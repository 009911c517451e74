"""A native child held to its cast: binding, scope, observed spend and the return check. Pure.

A host that runs subagents itself (Claude Code's ``Agent`` tool, Codex's spawned threads) sends
its hook every tool call of a child with the child's ``agent_id``, and a ``SubagentStart`` /
``SubagentStop`` event around its life. These functions turn those payloads into facts of the
cast the child serves, kept in the run's trace (so in the hash chain, on every ledger backend,
and seen by a restarted or a second server) as canonical-JSON summaries:

- ``cast_handoff``: the parent's spawn call carried the handoff of this open cast;
- ``cast_bound``: the child ``agentId`` serves this cast (made at the child's start);
- ``cast_call``: one call of the bound child was observed (cumulative ``turns``, ``toolCalls``);
- ``cast_exhausted`` (``telic.casting._durable``): the observed turns went past the budget;
- ``cast_stopped``: the child stopped, with or without returning a packet.

``children_of`` folds those events back into ``Children``; ``judge_child_call`` decides one call
of a bound child.

Turns are observed, not reported: every tool call a child asks for needs one model turn, so each
observed call counts one turn. A host that asks for several calls in one turn is charged one turn
per call, so the observed count can only run ahead of the true one: Telic cuts a child off no
later than its budget says. Standard library and ``telic.permissions`` only, so that the hook's
fresh process pays for no pydantic model.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from telic.permissions import Layer, authorize_action

HANDOFF_EVENT: Final = "cast_handoff"
BOUND_EVENT: Final = "cast_bound"
CALL_EVENT: Final = "cast_call"
STOPPED_EVENT: Final = "cast_stopped"
EXHAUSTED_EVENT: Final = "cast_exhausted"
"""The trace event recording the cap a cast went past (written by ``telic.casting._durable``)."""
STARTED_EVENT: Final = "cast_started"
"""The trace event of an admitted cast: input refs the plan then the handoff's pointers."""
SEALED_EVENT: Final = "packet_sealed"
"""The trace event the run actor writes when it seals a cast's EvidencePacket."""
CHILD_EVENTS: Final = frozenset({HANDOFF_EVENT, BOUND_EVENT, CALL_EVENT, STOPPED_EVENT})
"""The trace events a host's hook writes about native children."""

_REPO: Final = "repo://"
_PATH_CAPABILITIES: Final = frozenset({"repository.read", "repository.write", "repository.delete"})


def _summary(fields: Mapping[str, object]) -> str:
    """Canonical JSON as the other cast events write it: keys sorted, no whitespace."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def handoff_summary(cast_id: str, agent_type: str) -> str:
    """The ``cast_handoff`` summary: the cast whose handoff a spawn call carried."""
    return _summary({"castId": cast_id, "agentType": agent_type[:64]})


def bound_summary(cast_id: str, agent_id: str) -> str:
    """The ``cast_bound`` summary: the child ``agent_id`` serves ``cast_id``."""
    return _summary({"castId": cast_id, "agentId": agent_id[:128]})


class Observed(NamedTuple):
    """What Telic saw a child spend: its tool calls, and the turns they took."""

    turns: int = 0
    tool_calls: int = 0


def call_summary(cast_id: str, agent_id: str, observed: Observed, *, allowed: bool) -> str:
    """The ``cast_call`` summary: the cumulative observed spend after one call."""
    return _summary(
        {
            "castId": cast_id,
            "agentId": agent_id[:128],
            "turns": observed.turns,
            "toolCalls": observed.tool_calls,
            "allowed": allowed,
        }
    )


def stopped_summary(cast_id: str, agent_id: str, *, returned: bool) -> str:
    """The ``cast_stopped`` summary: whether the child's last message was a packet."""
    return _summary({"castId": cast_id, "agentId": agent_id[:128], "returned": returned})


@dataclass(frozen=True, slots=True)
class Children:
    """The native children of a run, as its trace records them."""

    handed: tuple[tuple[str, str], ...] = ()
    """(cast id, agent type) of every spawn call that carried a handoff, oldest first."""
    bound: Mapping[str, str] = field(default_factory=dict)
    """agent id → cast id."""
    observed: Mapping[str, Observed] = field(default_factory=dict)
    """cast id → the spend observed so far."""
    exhausted: frozenset[str] = frozenset()
    """Casts that went past a budget cap (by a report or by observation)."""
    stopped: Mapping[str, bool] = field(default_factory=dict)
    """cast id → whether its child's last message was a packet."""

    def cast_of(self, agent_id: str) -> str | None:
        """The cast the child ``agent_id`` is bound to, if any."""
        return self.bound.get(agent_id)

    def spend_of(self, cast_id: str) -> Observed:
        """The spend observed for ``cast_id`` (zero when none was)."""
        return self.observed.get(cast_id, Observed())


def count_of(value: object) -> int:
    """``value`` when it is a non-negative int, else 0 (a summary field read back)."""
    return value if type(value) is int and value >= 0 else 0


def children_of(events: Iterable[tuple[str, str]]) -> Children:
    """Fold ``(event_type, decision_summary)`` pairs of a run's trace, oldest first, into its
    children. Events of other types, and summaries that are not such JSON, are skipped."""
    handed: list[tuple[str, str]] = []
    bound: dict[str, str] = {}
    observed: dict[str, Observed] = {}
    exhausted: set[str] = set()
    stopped: dict[str, bool] = {}
    for event_type, summary in events:
        if event_type not in CHILD_EVENTS and event_type != EXHAUSTED_EVENT:
            continue
        try:
            fields = json.loads(summary)
        except ValueError:
            continue
        if not isinstance(fields, dict) or not isinstance(fields.get("castId"), str):
            continue
        cast_id: str = fields["castId"]
        agent_id = fields.get("agentId")
        if event_type == HANDOFF_EVENT:
            handed.append((cast_id, str(fields.get("agentType", ""))))
        elif event_type == BOUND_EVENT and isinstance(agent_id, str):
            bound.setdefault(agent_id, cast_id)
        elif event_type == CALL_EVENT:
            seen = Observed(count_of(fields.get("turns")), count_of(fields.get("toolCalls")))
            known = observed.get(cast_id, Observed())
            observed[cast_id] = Observed(
                max(known.turns, seen.turns), max(known.tool_calls, seen.tool_calls)
            )
        elif event_type == EXHAUSTED_EVENT:
            exhausted.add(cast_id)
        elif event_type == STOPPED_EVENT:
            stopped[cast_id] = fields.get("returned") is True
    return Children(tuple(handed), bound, observed, frozenset(exhausted), stopped)


def open_casts_of(events: Iterable[tuple[str, Sequence[str], Sequence[str]]]) -> tuple[str, ...]:
    """The ids of a run's open casts, oldest first, from ``(event_type, input_refs,
    output_refs)`` of its trace: each ``cast_started`` names its cast as its output ref, each
    ``packet_sealed`` the cast it closed as its input ref."""
    opened: dict[str, None] = {}
    for event_type, input_refs, output_refs in events:
        if event_type == STARTED_EVENT and output_refs:
            opened[output_refs[0].rsplit("/", 1)[-1]] = None
        elif event_type == SEALED_EVENT and input_refs:
            opened.pop(input_refs[0].rsplit("/", 1)[-1], None)
    return tuple(opened)


def handed_cast(text: str, open_casts: Collection[str], children: Children) -> str | None:
    """The one open, not yet bound cast whose id the spawn call's ``text`` names; ``None`` when
    it names none or several (the parent passes exactly one handoff per child)."""
    taken = set(children.bound.values())
    named = [c for c in open_casts if _names(text, c) and c not in taken]
    return named[0] if len(named) == 1 else None


_ID_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _names(text: str, cast_id: str) -> bool:
    """Whether ``text`` names ``cast_id`` as a whole id (``cast-1`` is not in ``cast-12``)."""
    start = text.find(cast_id)
    while start >= 0:
        end = start + len(cast_id)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if before not in _ID_CHARS and (after not in _ID_CHARS or after == "."):
            return True
        start = text.find(cast_id, start + 1)
    return False


def bind_target(
    children: Children, agent_id: str, agent_type: str, open_casts: Collection[str]
) -> str | None:
    """The cast a starting child serves: the one it is bound to already, else the oldest open
    cast handed off to a spawn call of its agent type that no child has taken yet."""
    known = children.cast_of(agent_id)
    if known is not None:
        return known
    taken = set(children.bound.values())
    for cast_id, handed_type in children.handed:
        if cast_id in open_casts and cast_id not in taken and handed_type in ("", agent_type):
            return cast_id
    return None


def pointer_paths(pointers: Iterable[str]) -> tuple[str, ...]:
    """The repository paths among a handoff's pointers (``repo://src/a.py`` → ``src/a.py``)."""
    paths = []
    for pointer in pointers:
        if pointer.startswith(_REPO):
            path = pointer[len(_REPO) :].strip("/")
            if path:
                paths.append(path)
    return tuple(paths)


class ChildScope(NamedTuple):
    """What a bound child may do: its cast's budget, permissions and pointers."""

    cast_id: str
    max_turns: int
    read_only: bool
    layer: Layer
    """The child's own permissions (its caller's, without writes for a read-only type)."""
    pointers: tuple[str, ...] | None
    """The repository paths its reads are narrowed to; ``None``: not narrowed."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON; ``from_json`` reads it back unchanged."""
        return {
            "castId": self.cast_id,
            "maxTurns": self.max_turns,
            "readOnly": self.read_only,
            "layer": self.layer.to_json(),
            "pointers": None if self.pointers is None else list(self.pointers),
        }

    @classmethod
    def from_json(cls, raw: object) -> ChildScope:
        """Read ``to_json``'s output back.

        Raises:
            ValueError: ``raw`` is not such a document.
        """
        if not isinstance(raw, dict):
            raise ValueError("a child scope is a JSON object")
        pointers = raw.get("pointers")
        if pointers is not None and (
            not isinstance(pointers, list) or not all(isinstance(p, str) for p in pointers)
        ):
            raise ValueError("a child scope's pointers are a list of paths or null")
        cast_id, max_turns, read_only = raw.get("castId"), raw.get("maxTurns"), raw.get("readOnly")
        if not isinstance(cast_id, str) or type(max_turns) is not int or max_turns < 1:
            raise ValueError("a child scope names its cast and a positive turn budget")
        if not isinstance(read_only, bool):
            raise ValueError("a child scope says whether it is read-only")
        layer = raw.get("layer")
        if not isinstance(layer, dict):
            raise ValueError("a child scope holds its permission layer")
        return cls(
            cast_id,
            max_turns,
            read_only,
            Layer.from_json(layer),
            None if pointers is None else tuple(pointers),
        )


def _inside(path: str, pointers: Sequence[str]) -> bool:
    clean = path.strip("/")
    return any(clean == p or clean.startswith(p + "/") or p in (".", "") for p in pointers)


class ChildJudgement(NamedTuple):
    """The decision on one call of a bound child, and the spend it leaves."""

    allowed: bool
    reason: str
    layer: str | None
    """The layer that denied (``cast_budget``, ``cast_pointers``, ``cast``, a run layer, or
    ``target`` for a target refused before any layer); ``None`` when allowed."""
    code: str
    observed: Observed
    """The spend after this call (the call counts whether or not it is allowed)."""
    newly_exhausted: bool
    """This call went past the turn budget: the cast is now exhausted (``turn_capped``)."""
    scope: str | None = None
    """The normalised target the decision names (the first refused, else the first asked)."""


def _named_target(
    asks: Sequence[tuple[str, str | None]], layer: Layer, repository_root: str
) -> str | None:
    """The first ask's target as the layers name it (repository-relative), for a call denied
    for its spend before any layer looked: the trace never holds the path as the host typed
    it."""
    if not asks or not asks[0][1]:
        return None
    capability, target = asks[0]
    return authorize_action(
        capability,  # type: ignore[arg-type]  # an unknown one names no scope
        target,
        (layer,),
        repository_root=repository_root,
    ).scope


def judge_child_call(
    scope: ChildScope,
    observed: Observed,
    asks: Sequence[tuple[str, str | None]],
    run_layers: Sequence[Layer],
    *,
    exhausted: bool,
    repository_root: str,
    protected_granted: Sequence[str] = (),
) -> ChildJudgement:
    """Decide one call of a bound child against its cast, never the parent's phase.

    ``asks`` are the call's (capability, target) pairs, every one of which must be allowed;
    ``run_layers`` the run's own layers (mode, authorization, the executing node's permissions),
    to which the cast's layer is added, so the child never exceeds its caller. Order: spend
    (an exhausted cast, or a call past ``max_turns``, is denied by ``cast_budget``), then the
    layers, then the pointers (a repository path outside them is denied by ``cast_pointers``).
    """
    after = Observed(observed.turns + 1, observed.tool_calls + 1)  # a turn per call, see above

    def deny(why: str, layer: str, code: str, named: str | None) -> ChildJudgement:
        reason = f"cast {scope.cast_id} {why} (layer: {layer}; {code})"
        return ChildJudgement(False, reason, layer, code, after, code == "turn_capped", named)

    if exhausted or after.turns > scope.max_turns:
        why = (
            f"is exhausted ({observed.turns} turns observed of {scope.max_turns}): return the "
            "typed partial packet now, with no more tool calls"
            if exhausted
            else f"has spent its budget of {scope.max_turns} turns (this call would be turn "
            f"{after.turns}, observed by Telic): return the typed partial packet now "
            "(stopReason turn_capped), with no more tool calls"
        )
        code = "cast_exhausted" if exhausted else "turn_capped"
        return deny(why, "cast_budget", code, _named_target(asks, scope.layer, repository_root))
    layers = (*run_layers, scope.layer)
    reasons = []
    scopes: list[str | None] = []
    for capability, target in asks:
        decision = authorize_action(
            capability,  # type: ignore[arg-type]  # unknown ones are refused by the decision
            target,
            layers,
            repository_root=repository_root,
            protected_granted=protected_granted,
        )
        what = f"{capability} on {decision.scope or target or '(no target)'}"
        if not decision.allowed:
            layer = decision.deciding_layer or "target"
            return deny(f"denies {what}: {decision.reason}", layer, decision.code, decision.scope)
        if (
            scope.pointers is not None
            and capability in _PATH_CAPABILITIES
            and not _inside(decision.scope or "", scope.pointers)
        ):
            named = ", ".join(f"repo://{p}" for p in scope.pointers)
            why = f"denies {what}: it lies outside the cast's pointers ({named})"
            return deny(why, "cast_pointers", "out_of_scope", decision.scope)
        scopes.append(decision.scope)
        reasons.append(f"{what} is {decision.reason}")
    reason = (
        f"cast {scope.cast_id} (turn {after.turns} of {scope.max_turns}, observed): "
        + "; ".join(reasons)
    )
    return ChildJudgement(
        True, reason, None, "allowed", after, False, scopes[0] if scopes else None
    )


def returned_packet(last_message: str | None) -> bool:
    """Whether a child's last message is a packet for its parent to return: one JSON object
    with a claim (the cast agent's contract). Prose, or nothing, is not; the parent's
    ``telic_cast_return`` then checks the packet itself."""
    if not last_message:
        return False
    text = last_message.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("claim"), str)
