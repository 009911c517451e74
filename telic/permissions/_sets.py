"""Permission sets as values: intersection, the subset order and the effective authority.

Scopes are compared conservatively (docs/protocol.md §3.5): a parent scope covers a child scope when
the parent is ``**``, is equal, or — for repository globs only — is ``prefix/**`` and the child
starts with ``prefix/`` with no later segment starting with ``.`` (glob wildcards do not match
dot-files, so ``src/**`` does not cover ``src/.env``). Domains are compared in canonical host
form; shell commands and runtime targets by equality. Under these rules the order is sound for
``authorize_action``: whatever a subset's layer allows, its superset's layer allows too.
Intersection keeps every scope of either side that the other side covers, so the result is a
subset of both operands by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from telic.permissions._modes import ALWAYS_MUTATING, mode_ceiling
from telic.permissions._targets import canonical_host
from telic.protocol import Capability, Mode, PermissionSet, SubagentPermissions

FIELDS: Final[dict[Capability, tuple[str, str]]] = {
    "repository.read": ("repository", "read"),
    "repository.write": ("repository", "write"),
    "repository.delete": ("repository", "delete"),
    "shell.inspect": ("shell", "inspect"),
    "shell.execute": ("shell", "execute_allowlist"),
    "runtime.inspect": ("runtime", "inspect"),
    "runtime.restart": ("runtime", "restart"),
    "browser.inspect": ("browser", "inspect"),
    "browser.mutate": ("browser", "mutate_state"),
    "network.read": ("network", "read_domains"),
    "external.write": ("network", "external_write"),
}
"""Where each capability but ``subagent.spawn`` (the ``subagents`` part) lives in a
``PermissionSet``: its part and field, a list of scopes or a flag, in ``CAPABILITIES`` order."""


def grant_of(permissions: PermissionSet, capability: Capability) -> list[str] | bool:
    """Return the scopes (or the flag) ``permissions`` holds for ``capability``."""
    if capability == "subagent.spawn":
        return permissions.subagents.spawn
    part, name = FIELDS[capability]
    value: list[str] | bool = getattr(getattr(permissions, part), name)
    return value


def build(
    values: Mapping[Capability, list[str] | bool], subagents: SubagentPermissions
) -> PermissionSet:
    """Build the set holding ``values`` (every capability of ``FIELDS``) and ``subagents``."""
    parts: dict[str, dict[str, object]] = {}
    for capability, (part, name) in FIELDS.items():
        parts.setdefault(part, {})[name] = values[capability]
    return PermissionSet.model_validate({**parts, "subagents": subagents})


def scope_covers(capability: Capability, parent: str, child: str) -> bool:
    """Tell whether the ``parent`` scope conservatively covers the ``child`` scope."""
    if parent in ("**", child):
        return True
    if capability == "network.read":
        canonical = canonical_host(parent, allow_trailing_dot=True)
        return canonical is not None and canonical == canonical_host(child, allow_trailing_dot=True)
    if not (capability.startswith("repository.") and parent.endswith("/**")):
        return False
    prefix = parent[:-2]
    rest = child[len(prefix) :].split("/")
    return child.startswith(prefix) and not any(segment.startswith(".") for segment in rest)


def _covered(capability: Capability, child: Sequence[str], parent: Sequence[str]) -> bool:
    return all(any(scope_covers(capability, p, c) for p in parent) for c in child)


def intersect(left: PermissionSet, right: PermissionSet) -> PermissionSet:
    """Return the greatest set this algebra can prove is within both ``left`` and ``right``."""
    values: dict[Capability, list[str] | bool] = {}
    for capability in FIELDS:
        mine, theirs = grant_of(left, capability), grant_of(right, capability)
        if isinstance(mine, bool) or isinstance(theirs, bool):
            values[capability] = bool(mine) and bool(theirs)
        else:
            kept = [s for s in mine if any(scope_covers(capability, p, s) for p in theirs)]
            kept += [s for s in theirs if any(scope_covers(capability, p, s) for p in mine)]
            values[capability] = list(dict.fromkeys(kept))
    ls, rs = left.subagents, right.subagents
    return build(
        values,
        SubagentPermissions(
            spawn=ls.spawn and rs.spawn,
            maximum_children=min(ls.maximum_children, rs.maximum_children),
            maximum_depth=min(ls.maximum_depth, rs.maximum_depth),
        ),
    )


def exceeding(child: PermissionSet, parent: PermissionSet) -> tuple[Capability, ...]:
    """Return the capabilities in which ``child`` is not provably within ``parent``, in order.

    Subagent children and depth count as ``subagent.spawn``. Empty exactly when ``is_subset``.
    """
    out: list[Capability] = []
    for capability in FIELDS:
        mine, theirs = grant_of(child, capability), grant_of(parent, capability)
        if isinstance(mine, bool) or isinstance(theirs, bool):
            within = bool(theirs) or not mine
        else:
            within = _covered(capability, mine, theirs)
        if not within:
            out.append(capability)
    c, p = child.subagents, parent.subagents
    if not (
        (p.spawn or not c.spawn)
        and c.maximum_children <= p.maximum_children
        and c.maximum_depth <= p.maximum_depth
    ):
        out.append("subagent.spawn")
    return tuple(out)


def is_subset(child: PermissionSet, parent: PermissionSet) -> bool:
    """Tell whether ``child`` is provably no wider than ``parent`` (flags only narrow)."""
    return not exceeding(child, parent)


def effective_authorization(
    mode: Mode, granted: PermissionSet, denied: PermissionSet
) -> PermissionSet:
    """Return mode ceiling ∩ granted, with every capability the denied set touches dropped.

    A capability is dropped entirely as soon as the denied set holds anything for it: a
    non-empty list or a true flag; for ``subagent.spawn``, any of spawn, children or depth.
    """
    meet = intersect(mode_ceiling(mode), granted)
    values: dict[Capability, list[str] | bool] = {}
    for capability in FIELDS:
        kept, refused = grant_of(meet, capability), grant_of(denied, capability)
        if isinstance(kept, bool):
            values[capability] = kept and not refused
        else:
            values[capability] = [] if refused else list(kept)
    d = denied.subagents
    drop_children = d.spawn or d.maximum_children or d.maximum_depth
    return build(
        values,
        SubagentPermissions(spawn=False, maximum_children=0, maximum_depth=0)
        if drop_children
        else meet.subagents,
    )


def capability_is_mutating(capability: Capability) -> bool | None:
    """Return the mutation class: ``None`` for ``shell.execute``, which may be either."""
    if capability == "shell.execute":
        return None
    return capability in ALWAYS_MUTATING


def capability_backed(capability: Capability, permissions: PermissionSet) -> bool:
    """Tell whether ``permissions`` can back ``capability`` (TaskContract "backed", §3.4)."""
    if capability == "subagent.spawn":
        return permissions.subagents.spawn and permissions.subagents.maximum_children > 0
    return bool(grant_of(permissions, capability))
