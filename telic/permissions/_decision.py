"""Layers of grants and the pure evaluation of one attempted action to a ``Decision``.

The algebra has three terms. A ``Grant`` names a capability and, optionally, the scopes it
covers (no scopes: any target). A ``Layer`` is a named permission source — the mode, the run
authorization, a TaskContract, a WorkPlan node, a work order — holding allow and deny grants.
``authorize_action`` evaluates a capability and target against a sequence of layers:

1. the target is normalised for its capability; a malformed or escaping target is refused
   before any layer is asked (``deciding_layer`` is ``None``);
2. a write or delete of a protected path (``_protected.PROTECTED_PATHS``: git directories,
   ``.github``, env files) is denied by the ``protected`` layer unless one of the user's
   explicit ``protected_granted`` patterns covers it — and even then every layer must allow it;
3. a deny grant that matches in *any* layer decides (deny overrides allow);
4. otherwise the first layer that does not allow decides;
5. otherwise the action is allowed.

So adding a layer can only turn an allow into a deny, never the reverse; an explicit protected
grant only lifts step 2 and never allows what a layer does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from telic._errors import UsageError
from telic.permissions._modes import MODE_POLICIES
from telic.permissions._paths import (
    Refusal,
    Resolver,
    glob_match,
    repository_target,
    resolve_real_path as _resolve_real_path,
)
from telic.permissions._protected import (
    MUTATING_REPOSITORY,
    protected_pattern,
    protection_lifted,
)
from telic.permissions._targets import (
    TYPED_INSPECT_TARGETS,
    canonical_host,
    network_trace_target,
    shell_command_problem,
    url_host,
)
from telic.protocol import CAPABILITIES, MAX_SUMMARY, MAX_TARGET, Capability, Mode

if TYPE_CHECKING:
    from telic.protocol import PermissionSet


_USERINFO: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


@dataclass(frozen=True, slots=True)
class Grant:
    """One capability, limited to ``scopes`` when given (``None``: any target)."""

    capability: Capability
    scopes: tuple[str, ...] | None = None


def _grants(permissions: PermissionSet) -> tuple[Grant, ...]:
    from telic.permissions._sets import grant_of  # with the models: off the hook's path

    grants: list[Grant] = []
    for capability in CAPABILITIES:
        value = grant_of(permissions, capability)
        if isinstance(value, list) and value:
            grants.append(Grant(capability, tuple(value)))
        elif value is True:
            grants.append(Grant(capability))
    return tuple(grants)


def _grants_from_json(value: object) -> tuple[Grant, ...]:
    if not isinstance(value, list):
        raise UsageError("a stored layer's grants are a list")
    grants: list[Grant] = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and item[0] in CAPABILITIES):
            raise UsageError("a stored grant is [capability, scopes or null]")
        capability, scopes = item
        if scopes is None:
            grants.append(Grant(capability))
        elif isinstance(scopes, list) and all(isinstance(s, str) for s in scopes):
            grants.append(Grant(capability, tuple(scopes)))
        else:
            raise UsageError("a stored grant's scopes are a list of strings or null")
    return tuple(grants)


@dataclass(frozen=True, slots=True)
class Layer:
    """A named permission source: what it allows and what it explicitly denies."""

    name: str
    allow: tuple[Grant, ...] = ()
    deny: tuple[Grant, ...] = ()

    @classmethod
    def from_permissions(
        cls, name: str, permissions: PermissionSet, *, denied: PermissionSet | None = None
    ) -> Layer:
        """Build a layer allowing ``permissions`` and denying ``denied`` (when given)."""
        return cls(name, _grants(permissions), () if denied is None else _grants(denied))

    @classmethod
    def for_mode(cls, mode: Mode, name: str = "mode") -> Layer:
        """Build the mode-policy layer: ``repository.*`` scoped to ``**``, the rest unscoped."""
        policy = MODE_POLICIES[mode]
        allow = tuple(
            Grant(c, ("**",) if c.startswith("repository.") else None)
            for c in CAPABILITIES
            if c in policy.allow
        )
        return cls(name, allow, tuple(Grant(c) for c in sorted(policy.deny)))

    def to_json(self) -> dict[str, object]:
        """Return the layer as plain JSON: ``{"name", "allow", "deny"}``, each grant a
        ``[capability, scopes or null]`` pair. ``from_json`` reads it back unchanged."""

        def pairs(grants: tuple[Grant, ...]) -> list[object]:
            return [[g.capability, None if g.scopes is None else list(g.scopes)] for g in grants]

        return {"name": self.name, "allow": pairs(self.allow), "deny": pairs(self.deny)}

    @classmethod
    def from_json(cls, value: object) -> Layer:
        """Read a layer written by ``to_json``.

        Raises:
            UsageError: the value is not a layer in that form (an unknown capability, a scope
                that is not a string, a missing or extra key).
        """
        if not isinstance(value, dict) or set(value) != {"name", "allow", "deny"}:
            raise UsageError("a stored permission layer is {name, allow, deny}")
        name = value["name"]
        if not isinstance(name, str) or not name:
            raise UsageError("a stored permission layer needs a name")
        return cls(name, _grants_from_json(value["allow"]), _grants_from_json(value["deny"]))


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one attempted action, and which layer decided it and why."""

    allowed: bool
    capability: str
    scope: str | None
    """The normalised target; for network reads only the bare host, never credentials."""
    deciding_layer: str | None
    """The layer that denied; ``None`` when allowed or when the target itself was refused."""
    reason: str
    code: str
    """A stable code. Layer outcomes: ``allowed``, ``explicitly_denied``, ``not_granted``,
    ``out_of_scope``, ``target_required``, ``protected_path`` (decided by the ``protected``
    layer); the controller adds ``mutation_not_allowed`` (the ``mode`` layer) for an action
    declared mutating where the run may not mutate. Refusals before any layer:
    ``unknown_capability``, ``not_repository_relative``,
    ``path_traversal``, ``encoded_traversal``, ``invalid_path``, ``path_escape``,
    ``symlink_escape``, ``inexact_command``, ``untyped_inspect_target``, ``url_scheme``,
    ``url_userinfo``, ``invalid_url``, ``invalid_host``."""

    def __bool__(self) -> bool:
        """Refuse truth-testing: ``if decision:`` would read a deny as true. Use ``allowed``."""
        raise TypeError("test Decision.allowed, not the Decision itself")

    @property
    def verdict(self) -> Literal["allow", "deny"]:
        """The trace spelling of the outcome."""
        return "allow" if self.allowed else "deny"


def permission_record(
    verdict: Literal["allow", "deny"],
    capability: str,
    scope: str | None,
    reason: str,
    policy_refs: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``permissionDecision`` a trace event records for one decision.

    A missing scope falls back to the capability; the scope and the reason are cut to the
    trace's bounds, so a caller redacts before (a secret is never cut in half), never after.
    """
    return {
        "decision": verdict,
        "capability": capability,
        "scope": (scope or capability)[:MAX_TARGET],
        "policyRefs": list(policy_refs),
        "rationaleSummary": reason[:MAX_SUMMARY],
    }


def _prepare(
    capability: Capability, target: str, root: str, resolve: Resolver
) -> tuple[str | None, Refusal | None]:
    """Return ``(scope, refusal)`` for a non-empty target."""
    if capability.startswith("repository."):
        if not root.startswith("/"):
            raise UsageError("repository_root must be an absolute path")
        path = repository_target(target, root, resolve)
        return (target, path) if isinstance(path, Refusal) else (path, None)
    if capability == "shell.execute":
        problem = shell_command_problem(target)
        return target, None if problem is None else Refusal("inexact_command", problem)
    if capability == "shell.inspect" and target not in TYPED_INSPECT_TARGETS:
        return target, Refusal("untyped_inspect_target", "not one of the six typed targets")
    if capability == "network.read":
        host = url_host(target)
        return (network_trace_target(target), host) if isinstance(host, Refusal) else (host, None)
    if capability.startswith(("browser.", "external.", "subagent.")):
        # Matched by flag only, so the scope is for the trace: keep URL credentials out of it.
        return _USERINFO.sub(r"\1", target), None
    return target, None


def _matches(capability: Capability, pattern: str, scope: str) -> bool:
    if pattern == "**":
        return True
    if capability.startswith("repository."):
        return glob_match(pattern, scope)
    if capability == "network.read":
        return canonical_host(pattern, allow_trailing_dot=True) == scope
    return pattern == scope


def _grant_matches(grant: Grant, capability: Capability, scope: str | None) -> bool:
    """Tell whether a grant of ``capability`` covers ``scope`` (the caller matched the name)."""
    if grant.scopes is None:
        return True
    return scope is not None and any(_matches(capability, s, scope) for s in grant.scopes)


def authorize_action(
    capability: Capability,
    target: str | None,
    layers: Sequence[Layer],
    *,
    repository_root: str,
    resolve: Resolver = _resolve_real_path,
    protected_granted: Sequence[str] = (),
) -> Decision:
    """Decide whether ``capability`` on ``target`` is allowed by every layer and denied by none.

    Args:
        target: the action's target; ``None`` or empty when it names none.
        layers: the permission sources, outermost first; at least one.
        repository_root: the absolute repository root that repository targets must stay inside.
        resolve: the filesystem seam (see ``resolve_real_path``); inject a fake to stay pure.
        protected_granted: the user's explicit grants of protected paths (start_run's
            ``protected_paths_granted``); without one, no write or delete reaches them.

    Raises:
        UsageError: with no layers, or a relative root for a repository capability.
    """
    if not layers:
        raise UsageError("authorize_action needs at least one layer")
    if capability not in CAPABILITIES:
        return Decision(False, capability, None, None, "unknown capability", "unknown_capability")
    scope: str | None = None
    if not target and capability == "shell.inspect":
        reason = "a shell.inspect action must name one of the six typed targets"
        return Decision(False, capability, None, None, reason, "untyped_inspect_target")
    if target:
        scope, refusal = _prepare(capability, target, repository_root, resolve)
        if refusal is not None:
            return Decision(False, capability, scope, None, refusal.reason, refusal.code)
    if scope is not None and capability in MUTATING_REPOSITORY:
        protected = protected_pattern(scope)
        if protected is not None and not protection_lifted(scope, protected_granted):
            reason = (
                f"the target is a protected path ({protected}); {capability} needs an explicit "
                "protected_paths_granted entry from the user"
            )
            return Decision(False, capability, scope, "protected", reason, "protected_path")
    for layer in layers:
        for grant in layer.deny:
            # A scoped deny also matches a missing target: it cannot be shown to lie outside.
            if grant.capability == capability and (
                scope is None or _grant_matches(grant, capability, scope)
            ):
                reason = f"{capability} is explicitly denied by the {layer.name} layer"
                return Decision(False, capability, scope, layer.name, reason, "explicitly_denied")
    for layer in layers:
        grants = [g for g in layer.allow if g.capability == capability]
        if any(_grant_matches(g, capability, scope) for g in grants):
            continue
        if not grants:
            code, reason = "not_granted", f"the {layer.name} layer does not grant {capability}"
        elif scope is None:
            code, reason = "target_required", f"the {layer.name} layer's grant needs a target"
        else:
            code, reason = "out_of_scope", f"the target is outside the {layer.name} layer's scope"
        return Decision(False, capability, scope, layer.name, reason, code)
    names = ", ".join(layer.name for layer in layers)
    return Decision(True, capability, scope, None, f"allowed by every layer ({names})", "allowed")
