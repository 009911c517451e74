"""start_run authority: default grants, the silent host intersection and input validation.

Each check is a pure function that returns ``Issue`` values naming a stable rule id (reference
§2 tool 1). ``start_run_authority`` runs them in the service's order — mode defaults, silent
intersection of the grants with the host capabilities, then every check — and raises one
``RuleViolation`` listing every problem. Messages name the offending position, never the
submitted value, because a rejected input may hold a secret.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeGuard

from telic._errors import Issue, RuleViolation
from telic.permissions._envelope import denied_permissions, permissions_from_capabilities
from telic.permissions._modes import DEFAULT_GRANTS
from telic.permissions._protected import MUTATING_REPOSITORY, protected_grant_problem
from telic.permissions._targets import canonical_host, domain_problem, shell_command_problem
from telic.protocol import CAPABILITIES, Capability, Mode, PermissionSet

__all__ = [
    "START_RULES",
    "StartRunAuthority",
    "check_capabilities",
    "check_grants_on_host",
    "check_network_domains",
    "check_protected_grants",
    "check_shell_allowlist",
    "intersect_with_host",
    "is_capability",
    "normalize_domains",
    "start_run_authority",
]

START_RULES: Final[dict[str, str]] = {
    "SR-UNKNOWN-CAPABILITY": "every capability is one of the twelve protocol capabilities",
    "SR-GRANT-NOT-ON-HOST": "every granted capability is a host capability",
    "SR-ALLOWLIST-UNAUTHORIZED": "a shell allowlist needs shell.execute on the host and granted",
    "SR-ALLOWLIST-COMMAND": "allowlist entries are exact non-compound commands without globs",
    "SR-DOMAINS-UNAUTHORIZED": "network domains need network.read on the host and granted",
    "SR-DOMAIN-FORM": "domains are bare DNS names, IP addresses or localhost",
    "SR-PROTECTED-UNAUTHORIZED": "protected-path grants need repository.write or .delete granted",
    "SR-PROTECTED-FORM": "protected-path grants are literal-first repo-relative protected paths",
}
"""Rule id → the behaviour it enforces, for every start_run check."""


def is_capability(value: str) -> TypeGuard[Capability]:
    """Tell whether ``value`` names one of the twelve protocol capabilities."""
    return value in CAPABILITIES


def check_capabilities(field: str, values: Sequence[str]) -> tuple[Issue, ...]:
    """Report every entry of the ``field`` list that is not a protocol capability."""
    return tuple(
        Issue(f"{field}.{i}", "unknown_capability", "unknown capability", "SR-UNKNOWN-CAPABILITY")
        for i, value in enumerate(values)
        if not is_capability(value)
    )


def intersect_with_host(
    granted: Sequence[Capability], host_capabilities: Sequence[Capability]
) -> tuple[Capability, ...]:
    """Silently drop grants the host cannot exercise (the service step before validation)."""
    host = frozenset(host_capabilities)
    return tuple(dict.fromkeys(c for c in granted if c in host))


def check_grants_on_host(
    granted: Sequence[Capability], host_capabilities: Sequence[Capability]
) -> tuple[Issue, ...]:
    """Report grants that are not host capabilities."""
    host = frozenset(host_capabilities)
    message = "granted capability is unavailable on this host"
    return tuple(
        Issue(f"authorization_granted.{i}", "grant_unavailable", message, "SR-GRANT-NOT-ON-HOST")
        for i, capability in enumerate(granted)
        if capability not in host
    )


def _enabled(
    capability: Capability, host: Sequence[Capability], granted: Sequence[Capability]
) -> bool:
    return capability in host and capability in granted


def check_shell_allowlist(
    allowlist: Sequence[str],
    *,
    host_capabilities: Sequence[Capability],
    granted: Sequence[Capability],
) -> tuple[Issue, ...]:
    """Check the allowlist is authorized and holds only exact non-compound commands."""
    issues: list[Issue] = []
    if allowlist and not _enabled("shell.execute", host_capabilities, granted):
        message = "an allowlist needs shell.execute in host capabilities and granted"
        issues.append(
            Issue(
                "shell_execute_allowlist",
                "allowlist_unauthorized",
                message,
                "SR-ALLOWLIST-UNAUTHORIZED",
            )
        )
    for i, command in enumerate(allowlist):
        problem = shell_command_problem(command)
        if problem is not None:
            path = f"shell_execute_allowlist.{i}"
            issues.append(Issue(path, "inexact_command", problem, "SR-ALLOWLIST-COMMAND"))
    return tuple(issues)


def check_network_domains(
    domains: Sequence[str],
    *,
    host_capabilities: Sequence[Capability],
    granted: Sequence[Capability],
) -> tuple[Issue, ...]:
    """Check the domain list is authorized and holds only bare host names."""
    issues: list[Issue] = []
    if domains and not _enabled("network.read", host_capabilities, granted):
        message = "a domain list needs network.read in host capabilities and granted"
        issues.append(
            Issue(
                "network_read_domains", "domains_unauthorized", message, "SR-DOMAINS-UNAUTHORIZED"
            )
        )
    for i, domain in enumerate(domains):
        problem = domain_problem(domain)
        if problem is not None:
            path = f"network_read_domains.{i}"
            issues.append(Issue(path, "invalid_domain", problem, "SR-DOMAIN-FORM"))
    return tuple(issues)


def check_protected_grants(
    patterns: Sequence[str], *, granted: Sequence[Capability]
) -> tuple[Issue, ...]:
    """Check explicit protected-path grants: a mutating repository grant, and each one's form."""
    issues: list[Issue] = []
    if patterns and not MUTATING_REPOSITORY & set(granted):
        message = "protected-path grants need repository.write or repository.delete granted"
        issues.append(
            Issue(
                "protected_paths_granted",
                "protected_unauthorized",
                message,
                "SR-PROTECTED-UNAUTHORIZED",
            )
        )
    for i, pattern in enumerate(patterns):
        problem = protected_grant_problem(pattern)
        if problem is not None:
            path = f"protected_paths_granted.{i}"
            issues.append(Issue(path, "invalid_protected_grant", problem, "SR-PROTECTED-FORM"))
    return tuple(issues)


def normalize_domains(domains: Sequence[str]) -> tuple[str, ...]:
    """Lower-case (IPv6: compress, unbracket), de-duplicate and sort valid domains."""
    canonical = (canonical_host(d) for d in domains if domain_problem(d) is None)
    return tuple(sorted({d for d in canonical if d is not None}))


@dataclass(frozen=True, slots=True)
class StartRunAuthority:
    """The validated authority of a new run, ready for its RunEnvelope."""

    mode: Mode
    host_capabilities: tuple[Capability, ...]
    granted: tuple[Capability, ...]
    denied: tuple[Capability, ...]
    shell_execute_allowlist: tuple[str, ...]
    network_read_domains: tuple[str, ...]
    protected_paths_granted: tuple[str, ...] = ()
    """The user's explicit grants of protected paths, de-duplicated and sorted."""

    def granted_permissions(self) -> PermissionSet:
        """Return the envelope's ``authorization.granted`` set."""
        return permissions_from_capabilities(
            self.granted,
            shell_execute_allowlist=self.shell_execute_allowlist,
            network_read_domains=self.network_read_domains,
        )

    def denied_permissions(self) -> PermissionSet:
        """Return the envelope's ``authorization.denied`` set."""
        return denied_permissions(self.denied)


def start_run_authority(
    *,
    mode: Mode,
    host_capabilities: Sequence[str] = ("repository.read",),
    authorization_granted: Sequence[str] | None = None,
    authorization_denied: Sequence[str] = (),
    shell_execute_allowlist: Sequence[str] = (),
    network_read_domains: Sequence[str] = (),
    protected_paths_granted: Sequence[str] = (),
) -> StartRunAuthority:
    """Validate start_run authority inputs and return the run's authority.

    Raises:
        RuleViolation: naming every failed ``SR-*`` rule, with the position of each problem.
    """
    issues = check_capabilities("host_capabilities", host_capabilities)
    granted_in = DEFAULT_GRANTS[mode] if authorization_granted is None else authorization_granted
    issues += check_capabilities("authorization_granted", granted_in)
    issues += check_capabilities("authorization_denied", authorization_denied)
    host = tuple(dict.fromkeys(c for c in host_capabilities if is_capability(c)))
    known = tuple(c for c in granted_in if is_capability(c))
    granted = intersect_with_host(known, host)
    issues += check_grants_on_host(granted, host)
    issues += check_shell_allowlist(
        shell_execute_allowlist, host_capabilities=host, granted=granted
    )
    issues += check_network_domains(network_read_domains, host_capabilities=host, granted=granted)
    issues += check_protected_grants(protected_paths_granted, granted=granted)
    if issues:
        rules = ", ".join(dict.fromkeys(i.rule for i in issues if i.rule))
        raise RuleViolation(f"start_run authority rejected ({rules})", issues=issues)
    return StartRunAuthority(
        mode=mode,
        host_capabilities=host,
        granted=granted,
        denied=tuple(dict.fromkeys(c for c in authorization_denied if is_capability(c))),
        shell_execute_allowlist=tuple(shell_execute_allowlist),
        network_read_domains=normalize_domains(network_read_domains),
        protected_paths_granted=tuple(sorted(set(protected_paths_granted))),
    )
