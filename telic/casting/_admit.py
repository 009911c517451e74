"""Admitting a cast: the contract's checks against the run's state, purely (``admit_cast``).

A handoff's pointers obey the rules every other reference obeys: an ``artifact://`` pointer
names an existing artifact of this run (``REF-SAME-RUN``, ``REF-EXISTS``, no system
artifacts: ``REF-SYSTEM``); a ``repo://`` pointer names a path inside the repository (no ``..``
segment, no encoded separator, no symlink out of it) that the child may read and that the
current ContextManifest selected or pinned (``REF-REPO-SELECTED``). A nested cast's budget lies
within what its parent has left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import ValidationError

from telic._errors import Issue, NotFound, RuleViolation, SchemaViolation
from telic.casting._book import OpenCast
from telic.controller import RunState, StoredArtifact, layers, pending_node, selected_refs
from telic.permissions import (
    Resolver,
    authorize_action,
    intersect,
    is_subset,
    resolve_real_path,
)
from telic.protocol import PermissionSet, WorkNode
from telic_packets import (
    Cast,
    CastBudget,
    CastContext,
    CastGrant,
    CastRefusal,
    CastTypeRegistry,
    Handoff,
    PacketRefusal,
    check_cast,
)

_HANDOFF_KEYS: Final = frozenset({"castId", "brief", "pointers", "packetRefs"})


@dataclass(frozen=True, slots=True)
class CastRequest:
    """What a parent sends to cast a child (``routing`` and ``budget`` as decoded JSON)."""

    cast_type: str
    routing: object
    budget: object
    brief: str
    pointers: tuple[str, ...] = ()
    packet_refs: tuple[str, ...] = ()
    parent_cast_id: str | None = None

    def to_wire(self) -> dict[str, object]:
        """Return the request under the packet contract's names (what the secret scan walks)."""
        return {
            "castType": self.cast_type,
            "routing": self.routing,
            "budget": self.budget,
            "brief": self.brief,
            "pointers": list(self.pointers),
            "packetRefs": list(self.packet_refs),
            "parentCastId": self.parent_cast_id,
        }


@dataclass(frozen=True, slots=True)
class Admission:
    """An admitted cast: its facts, grant, handoff and the child's permissions."""

    cast: Cast
    grant: CastGrant
    handoff: Handoff
    permissions: PermissionSet
    depth: int
    plan_uri: str

    @property
    def cast_id(self) -> str:
        """The new cast's id."""
        return self.cast.cast_id

    def to_wire(self) -> dict[str, object]:
        """Return what the parent and its child receive: the handoff, budget and permissions."""
        return {
            "castId": self.cast.cast_id,
            "castType": self.cast.cast_type,
            "workNodeId": self.cast.work_node_id,
            "depth": self.depth,
            "routing": self.grant.routing.to_wire(),
            "budget": self.grant.budget.to_wire(),
            "handoff": self.handoff.to_wire(),
            "permissions": self.permissions.to_wire(),
        }


def parse_handoff(raw: Mapping[str, object]) -> Handoff:
    """Validate a handoff; a history, messages or transcript field is refused.

    Raises:
        PacketRefusal: ``unknown_field`` for any key outside castId, brief, pointers, packetRefs.
        SchemaViolation: any other fault (blank brief, a pointer that is not a ref, …).
    """
    extra = sorted(str(key) for key in raw if key not in _HANDOFF_KEYS)
    if extra:
        raise PacketRefusal(
            "unknown_field",
            f"a handoff has only castId, brief, pointers, packetRefs; not {extra[0][:40]!r} "
            "(children get fresh context, never the parent transcript)",
        )
    try:
        return Handoff.from_wire(raw)
    except ValidationError as exc:
        issues = tuple(
            Issue(".".join(str(p) for p in error["loc"]), error["type"], error["msg"])
            for error in exc.errors(include_url=False, include_input=False, include_context=False)
        )
        raise SchemaViolation(
            f"the handoff is not valid: {issues[0].path} {issues[0].message}", issues=issues
        ) from None


def child_permissions(
    caller: PermissionSet, *, read_only: bool, depth: int, max_depth: int
) -> PermissionSet:
    """Return a child's permissions: the caller's, without writes when the type is read-only,
    and able to cast further only while the depth allows it. Always a subset of ``caller``."""
    child = caller
    if read_only:
        child = child.model_copy(
            update={
                "repository": caller.repository.model_copy(update={"write": [], "delete": []}),
                "shell": caller.shell.model_copy(update={"execute_allowlist": []}),
                "runtime": caller.runtime.model_copy(update={"restart": []}),
                "browser": caller.browser.model_copy(update={"mutate_state": False}),
                "network": caller.network.model_copy(update={"external_write": False}),
            }
        )
    deeper = max(0, max_depth - depth)
    sub = caller.subagents
    child = child.model_copy(
        update={
            "subagents": sub.model_copy(
                update={
                    "spawn": sub.spawn and deeper > 0,
                    "maximum_depth": min(sub.maximum_depth, deeper),
                }
            )
        }
    )
    child = intersect(child, caller)
    assert is_subset(child, caller), "a child's permissions must lie within its caller's"
    return child


def spawn_problem(state: RunState, node: WorkNode) -> str | None:
    """Return why the executor of ``node`` (and every cast under it) may not cast, or ``None``.

    A cast is a ``subagent.spawn`` action of the node's executor, so it needs what any action
    of the node needs: the capability among the node's ``allowedTools`` (as
    ``WR-ACTION-ALLOWED-TOOL`` holds a recorded spawn to) and allowed by the mode, the run's
    authorization and the node's permissions. A nested cast is judged by the same node: its
    caller's own ``spawn`` is switched off only where the depth runs out, which
    ``depth_limit`` reports.
    """
    missing = []
    if not node.permissions.subagents.spawn:
        missing.append("its permissions do not set subagents.spawn")
    if "subagent.spawn" not in node.allowed_tools:
        missing.append("its allowedTools do not list subagent.spawn")
    if missing:
        return (
            f"work node {node.id!r} may not cast: {' and '.join(missing)}; a node casts only when "
            "its plan sets subagents.spawn in its permissions and lists subagent.spawn among its "
            "allowedTools"
        )
    decision = authorize_action(
        "subagent.spawn",
        None,
        layers(state, "caller", node.permissions),
        repository_root=state.run.repository_root,
    )
    if not decision.allowed:
        return f"subagent.spawn is not allowed for work node {node.id!r}: {decision.reason}"
    return None


def _pointer_problem(
    state: RunState, pointer: str, child: PermissionSet, resolve: Resolver
) -> tuple[str, str, str | None] | None:
    """Return ``(code, message, rule)`` of the first reference rule ``pointer`` breaks."""
    run_id = state.run.run_id
    if pointer.startswith("artifact://"):
        owner = pointer[len("artifact://") :].split("/", 1)[0]
        if owner == "system":
            return "system_ref", "a system reference is not a pointer", "REF-SYSTEM"
        if owner != run_id:
            return "other_run", "artifact references must stay inside this run", "REF-SAME-RUN"
        if state.by_uri(pointer) is None:
            return "not_found", "no artifact of this run has this reference", "REF-EXISTS"
        return None
    if pointer.startswith("repo://"):
        decision = authorize_action(
            "repository.read",
            pointer[len("repo://") :],
            layers(state, "child", child),
            repository_root=state.run.repository_root,
            resolve=resolve,
        )
        if not decision.allowed:
            reason = f"the child may not read it: {decision.reason}"
            return decision.code or "not_readable", reason, None
        if pointer not in selected_refs(state):
            message = "the current ContextManifest did not select or pin this file"
            return "not_selected", message, "REF-REPO-SELECTED"
        return None
    return "invalid_uri", "a pointer is an artifact:// or repo:// reference", None


def check_pointers(
    state: RunState,
    pointers: Sequence[str],
    child: PermissionSet,
    *,
    resolve: Resolver = resolve_real_path,
) -> None:
    """Refuse a handoff pointer that breaks a reference rule (see the module docstring).

    ``resolve`` is the filesystem seam that realpaths ``repo://`` paths.

    Raises:
        RuleViolation: one issue per bad pointer, each naming its rule (or refusal code).
    """
    issues: list[Issue] = []
    for index, pointer in enumerate(pointers):
        problem = _pointer_problem(state, pointer, child, resolve)
        if problem is not None:
            code, message, rule = problem
            issues.append(Issue(f"pointers.{index}", code, message, rule))
    if issues:
        first = issues[0]
        raise RuleViolation(
            f"handoff pointer {first.path} is refused: {first.message}", issues=tuple(issues)
        )


def executing_node(state: RunState) -> tuple[StoredArtifact, WorkNode] | None:
    """Return the WorkPlan and its work node executing now, or None: only such a node casts."""
    run, plan, node = state.run, state.latest("WorkPlan"), pending_node(state)
    if run.phase != "agent_4_execute" or run.status != "running" or plan is None or node is None:
        return None
    return plan, node


def _node_casts(state: RunState, plan_uri: str, node_id: str) -> int:
    """Casts the node's executor started itself (nested casts cite their parent cast too)."""
    return sum(
        1
        for record in state.all("CastRecord")
        if record.source_refs == (plan_uri,) and record.body.work_node_id == node_id
    )


# No node executes: after the request's own checks, only node_not_executing may apply.
_NOT_EXECUTING: Final = CastContext(
    node_executing=False, may_spawn=True, children=0, max_children=1, depth=0, max_depth=4
)


def admit_cast(
    state: RunState,
    request: CastRequest,
    *,
    registry: CastTypeRegistry,
    open_casts: Mapping[str, OpenCast],
    cast_id: str,
    resolve: Resolver = resolve_real_path,
    now: float = 0.0,
) -> Admission:
    """Admit ``request`` against the run's state or raise the refusal that applies.

    The contract's checks run in its precedence (``telic_packets.check_cast``): the request,
    ``node_not_executing``, ``spawn_not_permitted`` (``spawn_problem``), ``children_limit``
    (the node's ``maximumChildren``, or a calling cast's), ``depth_limit``, and
    ``children_limit`` for more casts open at once than the run's ``maximumParallelWorkers``.
    Then a nested cast's budget must fit in what its parent has left, the packet refs must name
    packets of this run, the handoff must validate and its pointers obey the reference rules.

    Raises:
        CastRefusal: one of the contract's cast refusal codes.
        PacketRefusal: ``unknown_field`` from the handoff.
        SchemaViolation: a malformed handoff.
        NotFound: a packet ref that is not a packet of this run.
        RuleViolation: a pointer that breaks a reference rule (``check_pointers``).

    ``resolve`` realpaths ``repo://`` pointers; ``now`` (anyio's clock) is when a parent's
    wall-clock budget is measured for a nested cast.
    """
    executing = executing_node(state)
    parent = open_casts.get(request.parent_cast_id) if request.parent_cast_id else None
    problem: str | None = None
    if executing is None or (request.parent_cast_id is not None and parent is None):
        context = _NOT_EXECUTING  # no node executes, or the calling child's cast is not open
    else:
        plan, node = executing
        problem = spawn_problem(state, node)
        context = CastContext(
            node_executing=True,
            may_spawn=problem is None,
            children=_node_casts(state, plan.uri, node.id) if parent is None else parent.children,
            max_children=(
                node.budgets.maximum_children
                if parent is None
                else parent.permissions.subagents.maximum_children
            ),
            depth=0 if parent is None else parent.depth,
            max_depth=_max_depth(state, node.permissions),
            in_flight=len(open_casts),
            max_in_flight=state.envelope.budgets.maximum_parallel_workers,
        )
    try:
        grant = check_cast(
            cast_type=request.cast_type,
            routing=request.routing,
            budget=request.budget,
            registry=registry,
            context=context,
        )
    except CastRefusal as refusal:
        if refusal.code == "spawn_not_permitted" and problem is not None:
            raise CastRefusal("spawn_not_permitted", problem) from None
        raise
    assert executing is not None  # check_cast refused a cast while no node executes
    plan, node = executing
    if parent is not None:
        _check_within_parent(grant.budget, parent, now)
    _check_packet_refs(state, request.packet_refs)
    handoff = parse_handoff(
        {
            "castId": cast_id,
            "brief": request.brief,
            "pointers": list(request.pointers),
            "packetRefs": list(request.packet_refs),
        }
    )
    caller_permissions = parent.permissions if parent is not None else node.permissions
    depth = context.depth + 1
    cast = Cast(
        run_id=state.run.run_id,
        cast_id=cast_id,
        cast_type=grant.cast_type.cast_type,
        work_node_id=node.id,
        routing=grant.routing,
        budget=grant.budget,
    )
    permissions = child_permissions(
        caller_permissions,
        read_only=grant.cast_type.read_only,
        depth=depth,
        max_depth=context.max_depth,
    )
    check_pointers(state, request.pointers, permissions, resolve=resolve)
    return Admission(cast, grant, handoff, permissions, depth, plan.uri)


def _check_within_parent(budget: CastBudget, parent: OpenCast, now: float) -> None:
    """A grandchild spends from its parent: its caps must fit in what the parent has left."""
    spent = parent.counters(now)
    left_turns = parent.cast.budget.max_turns - spent.turns
    left_tokens = parent.cast.budget.max_total_tokens - spent.total_tokens
    parent_wall = parent.cast.budget.max_wall_ms
    if budget.max_turns > left_turns or budget.max_total_tokens > left_tokens:
        raise CastRefusal(
            "budget_exceeds_ceiling",
            f"the parent cast has {max(left_turns, 0)} turns and {max(left_tokens, 0)} tokens "
            "left; a nested cast spends from them",
        )
    if parent_wall is not None:
        left_wall = parent_wall - spent.wall_ms
        if budget.max_wall_ms is None or budget.max_wall_ms > left_wall:
            raise CastRefusal(
                "budget_exceeds_ceiling",
                f"the parent cast has {max(left_wall, 0)} ms of wall clock left; a nested cast "
                "needs a maxWallMs within it",
            )


def _max_depth(state: RunState, node_permissions: PermissionSet) -> int:
    depth = state.envelope.budgets.maximum_subagent_depth
    plan = state.latest("WorkPlan")
    if plan is not None:
        depth = min(depth, plan.body.global_budgets.maximum_subagent_depth)
    return min(depth, node_permissions.subagents.maximum_depth)


def _check_packet_refs(state: RunState, packet_refs: Sequence[str]) -> None:
    known = {record.id for record in state.all("EvidencePacket")}
    for ref in packet_refs:
        if ref not in known:
            raise NotFound(f"packet {ref[:40]!r} is not a packet of this run")
