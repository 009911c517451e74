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

from collections.abc import Sequence

from telic.permissions._modes import mode_ceiling
from telic.permissions._targets import canonical_host
from telic.protocol import (
    BrowserPermissions,
    Capability,
    Mode,
    NetworkPermissions,
    PermissionSet,
    RepositoryPermissions,
    RuntimePermissions,
    ShellPermissions,
    SubagentPermissions,
)

__all__ = [
    "capability_backed",
    "capability_is_mutating",
    "effective_authorization",
    "exceeding",
    "intersect",
    "is_subset",
    "scope_covers",
]

_ALWAYS_MUTATING = frozenset(
    {"repository.write", "repository.delete", "runtime.restart", "browser.mutate", "external.write"}
)


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
    # Wildcards never match a dot-segment, so ``src/**`` cannot stand for ``src/.env``.
    rest = child[len(prefix) :].split("/")
    return child.startswith(prefix) and not any(segment.startswith(".") for segment in rest)


def _meet(capability: Capability, left: Sequence[str], right: Sequence[str]) -> list[str]:
    kept = [s for s in left if any(scope_covers(capability, p, s) for p in right)]
    kept += [s for s in right if any(scope_covers(capability, p, s) for p in left)]
    return list(dict.fromkeys(kept))


def _covered(capability: Capability, child: Sequence[str], parent: Sequence[str]) -> bool:
    return all(any(scope_covers(capability, p, c) for p in parent) for c in child)


def intersect(left: PermissionSet, right: PermissionSet) -> PermissionSet:
    """Return the greatest set this algebra can prove is within both ``left`` and ``right``."""
    lr, rr = left.repository, right.repository
    return PermissionSet(
        repository=RepositoryPermissions(
            read=_meet("repository.read", lr.read, rr.read),
            write=_meet("repository.write", lr.write, rr.write),
            delete=_meet("repository.delete", lr.delete, rr.delete),
        ),
        shell=ShellPermissions(
            inspect=left.shell.inspect and right.shell.inspect,
            execute_allowlist=_meet(
                "shell.execute", left.shell.execute_allowlist, right.shell.execute_allowlist
            ),
        ),
        runtime=RuntimePermissions(
            inspect=_meet("runtime.inspect", left.runtime.inspect, right.runtime.inspect),
            restart=_meet("runtime.restart", left.runtime.restart, right.runtime.restart),
        ),
        browser=BrowserPermissions(
            inspect=left.browser.inspect and right.browser.inspect,
            mutate_state=left.browser.mutate_state and right.browser.mutate_state,
        ),
        network=NetworkPermissions(
            read_domains=_meet(
                "network.read", left.network.read_domains, right.network.read_domains
            ),
            external_write=left.network.external_write and right.network.external_write,
        ),
        subagents=SubagentPermissions(
            spawn=left.subagents.spawn and right.subagents.spawn,
            maximum_children=min(left.subagents.maximum_children, right.subagents.maximum_children),
            maximum_depth=min(left.subagents.maximum_depth, right.subagents.maximum_depth),
        ),
    )


def exceeding(child: PermissionSet, parent: PermissionSet) -> tuple[Capability, ...]:
    """Return the capabilities in which ``child`` is not provably within ``parent``, in order.

    Subagent children and depth count as ``subagent.spawn``. Empty exactly when ``is_subset``.
    """
    c, p = child, parent
    within: dict[Capability, bool] = {
        "repository.read": _covered("repository.read", c.repository.read, p.repository.read),
        "repository.write": _covered("repository.write", c.repository.write, p.repository.write),
        "repository.delete": _covered(
            "repository.delete", c.repository.delete, p.repository.delete
        ),
        "shell.inspect": p.shell.inspect or not c.shell.inspect,
        "shell.execute": _covered(
            "shell.execute", c.shell.execute_allowlist, p.shell.execute_allowlist
        ),
        "runtime.inspect": _covered("runtime.inspect", c.runtime.inspect, p.runtime.inspect),
        "runtime.restart": _covered("runtime.restart", c.runtime.restart, p.runtime.restart),
        "browser.inspect": p.browser.inspect or not c.browser.inspect,
        "browser.mutate": p.browser.mutate_state or not c.browser.mutate_state,
        "network.read": _covered("network.read", c.network.read_domains, p.network.read_domains),
        "external.write": p.network.external_write or not c.network.external_write,
        "subagent.spawn": (p.subagents.spawn or not c.subagents.spawn)
        and c.subagents.maximum_children <= p.subagents.maximum_children
        and c.subagents.maximum_depth <= p.subagents.maximum_depth,
    }
    return tuple(capability for capability, ok in within.items() if not ok)


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
    d = denied

    def keep(scopes: Sequence[str], denied_scopes: Sequence[str]) -> list[str]:
        return [] if denied_scopes else list(scopes)

    drop_children = d.subagents.spawn or d.subagents.maximum_children or d.subagents.maximum_depth
    return PermissionSet(
        repository=RepositoryPermissions(
            read=keep(meet.repository.read, d.repository.read),
            write=keep(meet.repository.write, d.repository.write),
            delete=keep(meet.repository.delete, d.repository.delete),
        ),
        shell=ShellPermissions(
            inspect=meet.shell.inspect and not d.shell.inspect,
            execute_allowlist=keep(meet.shell.execute_allowlist, d.shell.execute_allowlist),
        ),
        runtime=RuntimePermissions(
            inspect=keep(meet.runtime.inspect, d.runtime.inspect),
            restart=keep(meet.runtime.restart, d.runtime.restart),
        ),
        browser=BrowserPermissions(
            inspect=meet.browser.inspect and not d.browser.inspect,
            mutate_state=meet.browser.mutate_state and not d.browser.mutate_state,
        ),
        network=NetworkPermissions(
            read_domains=keep(meet.network.read_domains, d.network.read_domains),
            external_write=meet.network.external_write and not d.network.external_write,
        ),
        subagents=SubagentPermissions(spawn=False, maximum_children=0, maximum_depth=0)
        if drop_children
        else meet.subagents,
    )


def capability_is_mutating(capability: Capability) -> bool | None:
    """Return the mutation class: ``None`` for ``shell.execute``, which may be either."""
    if capability == "shell.execute":
        return None
    return capability in _ALWAYS_MUTATING


def capability_backed(capability: Capability, permissions: PermissionSet) -> bool:
    """Tell whether ``permissions`` can back ``capability`` (TaskContract "backed", §3.4)."""
    p = permissions
    backing: dict[Capability, bool] = {
        "repository.read": bool(p.repository.read),
        "repository.write": bool(p.repository.write),
        "repository.delete": bool(p.repository.delete),
        "shell.inspect": p.shell.inspect,
        "shell.execute": bool(p.shell.execute_allowlist),
        "runtime.inspect": bool(p.runtime.inspect),
        "runtime.restart": bool(p.runtime.restart),
        "browser.inspect": p.browser.inspect,
        "browser.mutate": p.browser.mutate_state,
        "network.read": bool(p.network.read_domains),
        "external.write": p.network.external_write,
        "subagent.spawn": p.subagents.spawn and p.subagents.maximum_children > 0,
    }
    return backing[capability]
