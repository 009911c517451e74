"""The five intent-mode policies, their default grants and their permission ceilings.

A mode policy is the outermost permission layer (docs/protocol.md §3.5). It allows a fixed set of
capabilities, ``repository.*`` scoped to ``**`` and the rest unscoped, and explicitly denies
the mutations the mode must never perform. ``analyze_only`` allows ``shell.execute`` so that a
diagnosis can run a command the user granted exactly (the run authorization holds the exact
allowlist; the mode only stops refusing it); the command must still be non-mutating. No mode
ever allows ``runtime.restart``, ``browser.mutate`` or ``external.write``: those can never be
exercised under protocol 1.0, even when a host grants them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from telic.protocol import Capability, Mode

if TYPE_CHECKING:
    from telic.protocol import PermissionSet


@dataclass(frozen=True, slots=True)
class ModePolicy:
    """What one intent mode allows and what it explicitly denies."""

    mode: Mode
    allow: frozenset[Capability]
    deny: frozenset[Capability]

    def allows(self, capability: Capability) -> bool:
        """Tell whether the mode allows ``capability`` (and does not deny it)."""
        return capability in self.allow and capability not in self.deny


_PLAN: Final[frozenset[Capability]] = frozenset({"repository.read", "subagent.spawn"})
_ANALYZE: Final[frozenset[Capability]] = _PLAN | {
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
    "browser.inspect",
    "network.read",
}
_FIX: Final[frozenset[Capability]] = _PLAN | {
    "repository.write",
    "repository.delete",
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
}
ALWAYS_MUTATING: Final[frozenset[Capability]] = frozenset(
    {
        "repository.write",
        "repository.delete",
        "runtime.restart",
        "browser.mutate",
        "external.write",
    }
)
"""The capabilities that always mutate (``shell.execute`` may or may not): read-only modes deny
them."""
_FIX_DENY: Final[frozenset[Capability]] = frozenset({"external.write"})

MODE_POLICIES: Final[dict[Mode, ModePolicy]] = {
    "report_only": ModePolicy("report_only", frozenset(), ALWAYS_MUTATING),
    "plan_only": ModePolicy("plan_only", _PLAN, ALWAYS_MUTATING),
    "analyze_only": ModePolicy("analyze_only", _ANALYZE, ALWAYS_MUTATING),
    "fix_only": ModePolicy("fix_only", _FIX, _FIX_DENY),
    "analyze_and_fix": ModePolicy("analyze_and_fix", _ANALYZE | _FIX, _FIX_DENY),
}
"""The policy of every mode, exactly as docs/protocol.md §3.5."""

DEFAULT_GRANTS: Final[dict[Mode, tuple[Capability, ...]]] = {
    "report_only": (),
    "plan_only": ("repository.read",),
    "analyze_only": ("repository.read", "shell.inspect", "runtime.inspect", "browser.inspect"),
    "fix_only": ("repository.read", "repository.write", "shell.inspect", "runtime.inspect"),
    "analyze_and_fix": ("repository.read", "repository.write", "shell.inspect", "runtime.inspect"),
}
"""What start_run grants when ``authorization_granted`` is omitted (docs/protocol.md §2 tool 1)."""


def mode_ceiling(mode: Mode) -> PermissionSet:
    """Return the widest permission set ``mode`` allows: ``**`` scopes and true flags.

    Intersecting any set with this projects it onto the mode; subagent limits are the schema
    maxima (16 children, depth 4), so only the other operand narrows them.
    """
    # Imported here, not above: the policy table feeds the pure decision that ``telic hook``
    # runs in a fresh process per tool call, which must not pay for building the models.
    from telic.permissions._envelope import permission_set

    policy = MODE_POLICIES[mode]
    every = ("**",)
    return permission_set(
        policy.allow - policy.deny,
        allowlist=every,
        domains=every,
        runtime=every,
        repository=every,
        children=16,
        depth=4,
    )


def plan_ceiling(mode: Mode, *, fix_unlocked: bool) -> PermissionSet:
    """Return the ceiling of WorkPlan node permissions.

    In ``analyze_and_fix`` before the diagnosis gate unlocks the fix, the ceiling is the
    ``analyze_only`` projection, so a diagnosis plan can never write.
    """
    if mode == "analyze_and_fix" and not fix_unlocked:
        return mode_ceiling("analyze_only")
    return mode_ceiling(mode)
