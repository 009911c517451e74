"""What each capability of a phase covers, in one line each: the boundary before it bites.

A host learns from ``effectivePermissions`` which capabilities it has, but not what they mean:
that ``shell.inspect`` is six typed reads and running a test is ``shell.execute``, that only the
exact allowlisted commands run, that reading a file outside the read scopes is outside the
phase. ``boundary`` says so for each capability a permission set grants, before the host acts;
the server puts it beside every phase ``nextAction`` (``docs/protocol.md`` §3.2). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from telic.permissions._targets import TYPED_INSPECT_TARGETS
from telic.protocol import PermissionSet

__all__ = ["boundary"]


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def boundary(permissions: PermissionSet) -> dict[str, str]:
    """Capability → one line saying what it covers, for each capability ``permissions`` grants.

    ``repository.read`` is always present: with no read scope it says that reading files
    natively is outside the phase, which a serial host would otherwise not learn.
    """
    lines: dict[str, str] = {}
    repository, shell, runtime = permissions.repository, permissions.shell, permissions.runtime
    if repository.read:
        lines["repository.read"] = (
            f"Read only paths matching {_listed(repository.read)}; any other read is outside."
        )
    else:
        lines["repository.read"] = "None: read no file natively; use the inputRefs."
    if repository.write:
        lines["repository.write"] = f"Create or modify only {_listed(repository.write)}."
    if repository.delete:
        lines["repository.delete"] = f"Delete only {_listed(repository.delete)}."
    if shell.inspect:
        lines["shell.inspect"] = (
            f"Only the typed reads {_listed(TYPED_INSPECT_TARGETS)}; running any command, "
            "a test included, is shell.execute."
        )
    if shell.execute_allowlist:
        lines["shell.execute"] = (
            f"Only these exact commands: {_listed(shell.execute_allowlist)}; it counts as "
            "mutation (never before the diagnosis gate)."
        )
    if runtime.inspect:
        lines["runtime.inspect"] = f"Inspect only {_listed(runtime.inspect)}."
    if runtime.restart:
        lines["runtime.restart"] = f"Restart only {_listed(runtime.restart)}."
    if permissions.browser.inspect:
        lines["browser.inspect"] = "Read browser state only."
    if permissions.browser.mutate_state:
        lines["browser.mutate"] = "Change browser state."
    if permissions.network.read_domains:
        lines["network.read"] = f"Read only from {_listed(permissions.network.read_domains)}."
    if permissions.network.external_write:
        lines["external.write"] = "Write to external systems, as granted."
    subagents = permissions.subagents
    if subagents.spawn:
        lines["subagent.spawn"] = (
            f"Through telic_cast only: up to {subagents.maximum_children} children, "
            f"depth {subagents.maximum_depth}."
        )
    return lines
