"""The authority a RunEnvelope starts with: permission sets built from capabilities, and budgets.

Reference §3.1, "How the controller builds it": each granted capability maps to a scope or a
flag, the denied set uses ``["**"]`` for every list scope, and the budgets depend only on whether
the host has native subagents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from telic.permissions._sets import FIELDS, build
from telic.protocol import (
    Capability,
    NativeSubagents,
    PermissionSet,
    RunBudgets,
    SubagentPermissions,
)

_EVERY = ("**",)


def permission_set(
    capabilities: Iterable[Capability],
    *,
    allowlist: Sequence[str],
    domains: Sequence[str],
    runtime: Sequence[str],
    repository: Sequence[str],
    children: int = 3,
    depth: int = 1,
) -> PermissionSet:
    """The set granting ``capabilities``: each list scope given, each flag set, and with
    ``subagent.spawn`` up to ``children`` children at ``depth``."""
    caps = frozenset(capabilities)
    scopes: dict[Capability, Sequence[str]] = {
        "repository.read": repository,
        "repository.write": repository,
        "repository.delete": repository,
        "shell.execute": allowlist,
        "runtime.inspect": runtime,
        "runtime.restart": runtime,
        "network.read": domains,
    }
    values: dict[Capability, list[str] | bool] = {
        c: (list(scopes[c]) if c in caps else []) if c in scopes else c in caps for c in FIELDS
    }
    spawn = "subagent.spawn" in caps
    return build(
        values,
        SubagentPermissions(
            spawn=spawn,
            maximum_children=children if spawn else 0,
            maximum_depth=depth if spawn else 0,
        ),
    )


def permissions_from_capabilities(
    capabilities: Iterable[Capability],
    *,
    shell_execute_allowlist: Sequence[str] = (),
    network_read_domains: Sequence[str] = (),
) -> PermissionSet:
    """Build the granted set of a RunEnvelope (docs/protocol.md §3.1).

    ``repository.*`` → ``["**"]``; ``shell.execute`` → the exact allowlist; ``runtime.*`` →
    ``["local"]``; ``network.read`` → the domains; ``subagent.spawn`` → spawn with 3 children at
    depth 1; every other capability sets its flag.
    """
    return permission_set(
        capabilities,
        allowlist=shell_execute_allowlist,
        domains=network_read_domains,
        runtime=("local",),
        repository=_EVERY,
    )


def denied_permissions(capabilities: Iterable[Capability]) -> PermissionSet:
    """Build the denied set of a RunEnvelope: ``["**"]`` for every list scope, flags true."""
    return permission_set(
        capabilities, allowlist=_EVERY, domains=_EVERY, runtime=_EVERY, repository=_EVERY
    )


def default_budgets(native_subagents: NativeSubagents) -> RunBudgets:
    """Return the start budgets: parallelism 3 and depth 1 only with native subagents available."""
    available = native_subagents == "available"
    return RunBudgets(
        prompt_revisions=1,
        post_execution_remediations=1,
        maximum_parallel_workers=3 if available else 1,
        maximum_subagent_depth=1 if available else 0,
    )
