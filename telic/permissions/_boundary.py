"""What each capability of a phase covers, in one line each: the boundary before it bites.

The server puts ``boundary`` beside every phase ``nextAction`` (``docs/protocol.md`` §3.2). Pure.
"""

from __future__ import annotations

from telic.permissions._targets import TYPED_INSPECT_TARGETS
from telic.protocol import PermissionSet


def boundary(permissions: PermissionSet) -> dict[str, str]:
    """Capability → one line saying what it covers, for each granted capability whose reach its
    scope does not already say.

    ``effectivePermissions`` lists the paths, targets and hosts of most capabilities, and a line
    repeating them would cost bytes on every result; those get none. The lines are for what a
    scope cannot say: that ``shell.inspect`` is six typed reads and a test run is
    ``shell.execute``, that only the exact allowlisted commands run, that a cast is the only
    way to spawn, and — when there is no read scope — that reading files natively is outside
    the phase, which a serial host would otherwise not learn.
    """
    lines: dict[str, str] = {}
    if not permissions.repository.read:
        lines["repository.read"] = "None: no native file reads."
    shell = permissions.shell
    if shell.inspect:
        lines["shell.inspect"] = (
            f"Only the typed reads {', '.join(TYPED_INSPECT_TARGETS)}; running any command, "
            "a test included, is shell.execute."
        )
    if shell.execute_allowlist:
        lines["shell.execute"] = (
            f"Only these exact commands: {', '.join(shell.execute_allowlist)}. Report each run's "
            "mutating flag truly: before a fix may write (analyze_only, a diagnosis) only a run "
            "that changes no file is allowed, as mutating false."
        )
    subagents = permissions.subagents
    if subagents.spawn:
        lines["subagent.spawn"] = (
            f"Through telic_cast only: up to {subagents.maximum_children} children, "
            f"depth {subagents.maximum_depth}."
        )
    return lines
