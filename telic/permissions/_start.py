"""start_run authority: default grants, the silent host intersection and input validation.

Each check is a pure function that returns ``Issue`` values naming a stable rule id (reference
§2 tool 1). ``start_run_authority`` runs them in the service's order — mode defaults, silent
intersection of the grants with the host capabilities, then every check — and raises one
``RuleViolation`` listing every problem. Messages name the offending position, never the
submitted value, because a rejected input may hold a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeGuard

from telic._errors import Issue, RuleViolation
from telic.permissions._envelope import denied_permissions, permissions_from_capabilities
from telic.permissions._modes import DEFAULT_GRANTS
from telic.permissions._protected import MUTATING_REPOSITORY, protected_grant_problem
from telic.permissions._targets import canonical_host, domain_problem, shell_command_problem
from telic.protocol import CAPABILITIES, Capability, Mode, PermissionSet

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


def _check_list(
    values: Sequence[str],
    unauthorized: Issue | None,
    problem_of: Callable[[str], str | None],
    malformed: Issue,
) -> tuple[Issue, ...]:
    """Report ``unauthorized`` (None: the list is authorized) when there are ``values``, then
    ``malformed`` at each entry whose form ``problem_of`` refuses, with the problem as message.
    """
    issues = (unauthorized,) if values and unauthorized is not None else ()
    return issues + tuple(
        replace(malformed, path=f"{malformed.path}.{i}", message=problem)
        for i, problem in enumerate(map(problem_of, values))
        if problem is not None
    )


def check_shell_allowlist(
    allowlist: Sequence[str],
    *,
    host_capabilities: Sequence[Capability],
    granted: Sequence[Capability],
) -> tuple[Issue, ...]:
    """Check the allowlist is authorized and holds only exact non-compound commands."""
    field = "shell_execute_allowlist"
    message = "an allowlist needs shell.execute in host capabilities and granted"
    refused = Issue(field, "allowlist_unauthorized", message, "SR-ALLOWLIST-UNAUTHORIZED")
    enabled = _enabled("shell.execute", host_capabilities, granted)
    malformed = Issue(field, "inexact_command", "", "SR-ALLOWLIST-COMMAND")
    return _check_list(allowlist, None if enabled else refused, shell_command_problem, malformed)


def check_network_domains(
    domains: Sequence[str],
    *,
    host_capabilities: Sequence[Capability],
    granted: Sequence[Capability],
) -> tuple[Issue, ...]:
    """Check the domain list is authorized and holds only bare host names."""
    field = "network_read_domains"
    message = "a domain list needs network.read in host capabilities and granted"
    refused = Issue(field, "domains_unauthorized", message, "SR-DOMAINS-UNAUTHORIZED")
    enabled = _enabled("network.read", host_capabilities, granted)
    malformed = Issue(field, "invalid_domain", "", "SR-DOMAIN-FORM")
    return _check_list(domains, None if enabled else refused, domain_problem, malformed)


def check_protected_grants(
    patterns: Sequence[str], *, granted: Sequence[Capability]
) -> tuple[Issue, ...]:
    """Check explicit protected-path grants: a mutating repository grant, and each one's form."""
    field = "protected_paths_granted"
    message = "protected-path grants need repository.write or repository.delete granted"
    refused = Issue(field, "protected_unauthorized", message, "SR-PROTECTED-UNAUTHORIZED")
    enabled = bool(MUTATING_REPOSITORY & set(granted))
    malformed = Issue(field, "invalid_protected_grant", "", "SR-PROTECTED-FORM")
    return _check_list(patterns, None if enabled else refused, protected_grant_problem, malformed)


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
