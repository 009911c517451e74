"""The authority a RunEnvelope starts with: permission sets built from capabilities, and budgets.

Reference §3.1, "How the controller builds it": each granted capability maps to a scope or a
flag, the denied set uses ``["**"]`` for every list scope, and the budgets depend only on whether
the host has native subagents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telic.protocol import (
    BrowserPermissions,
    Capability,
    NativeSubagents,
    NetworkPermissions,
    PermissionSet,
    RepositoryPermissions,
    RuntimePermissions,
    ShellPermissions,
    SubagentPermissions,
)

__all__ = [
    "RunBudgets",
    "default_budgets",
    "denied_permissions",
    "permission_set",
    "permissions_from_capabilities",
]

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

    def scope(capability: Capability, value: Sequence[str]) -> list[str]:
        return list(value) if capability in caps else []

    spawn = "subagent.spawn" in caps
    return PermissionSet(
        repository=RepositoryPermissions(
            read=scope("repository.read", repository),
            write=scope("repository.write", repository),
            delete=scope("repository.delete", repository),
        ),
        shell=ShellPermissions(
            inspect="shell.inspect" in caps,
            execute_allowlist=scope("shell.execute", allowlist),
        ),
        runtime=RuntimePermissions(
            inspect=scope("runtime.inspect", runtime), restart=scope("runtime.restart", runtime)
        ),
        browser=BrowserPermissions(
            inspect="browser.inspect" in caps, mutate_state="browser.mutate" in caps
        ),
        network=NetworkPermissions(
            read_domains=scope("network.read", domains), external_write="external.write" in caps
        ),
        subagents=SubagentPermissions(
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


@dataclass(frozen=True, slots=True)
class RunBudgets:
    """The budgets a RunEnvelope starts with."""

    prompt_revisions: int
    post_execution_remediations: int
    maximum_parallel_workers: int
    maximum_subagent_depth: int


def default_budgets(native_subagents: NativeSubagents) -> RunBudgets:
    """Return the start budgets: parallelism 3 and depth 1 only with native subagents available."""
    available = native_subagents == "available"
    return RunBudgets(
        prompt_revisions=1,
        post_execution_remediations=1,
        maximum_parallel_workers=3 if available else 1,
        maximum_subagent_depth=1 if available else 0,
    )
