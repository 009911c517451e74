"""The permission algebra of Telic 1.0: pure, total and I/O-free apart from one injectable seam.

Terms and laws (docs/protocol.md §3.5):

* ``ModePolicy`` — what each intent mode allows and explicitly denies; ``mode_ceiling`` and
  ``plan_ceiling`` project it onto a ``PermissionSet``.
* ``PermissionSet`` values — built from capabilities (``permissions_from_capabilities``,
  ``denied_permissions``), combined with ``intersect``, ordered by ``is_subset``, and reduced to
  the run's authority by ``effective_authorization`` (mode ceiling ∩ granted ∖ denied).
* ``Layer`` / ``Grant`` — named permission sources; ``authorize_action`` evaluates an attempted
  action against them to a ``Decision`` that names the deciding layer. Deny overrides allow, and
  adding a layer never widens a decision. Writes and deletes never reach a protected path
  (``PROTECTED_PATHS``) without the user's explicit grant of it.
* start_run inputs — ``start_run_authority`` and its ``check_*`` functions report ``SR-*`` rules.

The filesystem is touched only through a ``Resolver`` (default ``resolve_real_path``), so tests
and the controller core can evaluate decisions without I/O.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.permissions._decision import Decision as Decision
    from telic.permissions._decision import Grant as Grant
    from telic.permissions._decision import Layer as Layer
    from telic.permissions._decision import authorize_action as authorize_action
    from telic.permissions._envelope import RunBudgets as RunBudgets
    from telic.permissions._envelope import default_budgets as default_budgets
    from telic.permissions._envelope import denied_permissions as denied_permissions
    from telic.permissions._envelope import (
        permissions_from_capabilities as permissions_from_capabilities,
    )
    from telic.permissions._modes import DEFAULT_GRANTS as DEFAULT_GRANTS
    from telic.permissions._modes import MODE_POLICIES as MODE_POLICIES
    from telic.permissions._modes import ModePolicy as ModePolicy
    from telic.permissions._modes import default_grants as default_grants
    from telic.permissions._modes import mode_ceiling as mode_ceiling
    from telic.permissions._modes import mode_policy as mode_policy
    from telic.permissions._modes import plan_ceiling as plan_ceiling
    from telic.permissions._paths import Resolver as Resolver
    from telic.permissions._paths import glob_match as glob_match
    from telic.permissions._paths import resolve_real_path as resolve_real_path
    from telic.permissions._protected import PROTECTED_PATHS as PROTECTED_PATHS
    from telic.permissions._protected import protected_pattern as protected_pattern
    from telic.permissions._sets import capability_backed as capability_backed
    from telic.permissions._sets import capability_is_mutating as capability_is_mutating
    from telic.permissions._sets import effective_authorization as effective_authorization
    from telic.permissions._sets import intersect as intersect
    from telic.permissions._sets import is_subset as is_subset
    from telic.permissions._sets import scope_covers as scope_covers
    from telic.permissions._start import START_RULES as START_RULES
    from telic.permissions._start import StartRunAuthority as StartRunAuthority
    from telic.permissions._start import check_capabilities as check_capabilities
    from telic.permissions._start import check_grants_on_host as check_grants_on_host
    from telic.permissions._start import check_network_domains as check_network_domains
    from telic.permissions._start import check_protected_grants as check_protected_grants
    from telic.permissions._start import check_shell_allowlist as check_shell_allowlist
    from telic.permissions._start import intersect_with_host as intersect_with_host
    from telic.permissions._start import is_capability as is_capability
    from telic.permissions._start import normalize_domains as normalize_domains
    from telic.permissions._start import start_run_authority as start_run_authority
    from telic.permissions._targets import TYPED_INSPECT_TARGETS as TYPED_INSPECT_TARGETS
    from telic.permissions._targets import canonical_host as canonical_host
    from telic.permissions._targets import domain_problem as domain_problem
    from telic.permissions._targets import network_trace_target as network_trace_target
    from telic.permissions._targets import shell_command_problem as shell_command_problem

__all__ = [
    "DEFAULT_GRANTS",
    "MODE_POLICIES",
    "PROTECTED_PATHS",
    "START_RULES",
    "TYPED_INSPECT_TARGETS",
    "Decision",
    "Grant",
    "Layer",
    "ModePolicy",
    "Resolver",
    "RunBudgets",
    "StartRunAuthority",
    "authorize_action",
    "canonical_host",
    "capability_backed",
    "capability_is_mutating",
    "check_capabilities",
    "check_grants_on_host",
    "check_network_domains",
    "check_protected_grants",
    "check_shell_allowlist",
    "default_budgets",
    "default_grants",
    "denied_permissions",
    "domain_problem",
    "effective_authorization",
    "glob_match",
    "intersect",
    "intersect_with_host",
    "is_capability",
    "is_subset",
    "mode_ceiling",
    "mode_policy",
    "network_trace_target",
    "normalize_domains",
    "permissions_from_capabilities",
    "plan_ceiling",
    "protected_pattern",
    "resolve_real_path",
    "scope_covers",
    "shell_command_problem",
    "start_run_authority",
]

_EXPORTS: typing.Final = {
    "telic.permissions._decision": (
        "Decision",
        "Grant",
        "Layer",
        "authorize_action",
    ),
    "telic.permissions._envelope": (
        "RunBudgets",
        "default_budgets",
        "denied_permissions",
        "permissions_from_capabilities",
    ),
    "telic.permissions._modes": (
        "DEFAULT_GRANTS",
        "MODE_POLICIES",
        "ModePolicy",
        "default_grants",
        "mode_ceiling",
        "mode_policy",
        "plan_ceiling",
    ),
    "telic.permissions._paths": (
        "Resolver",
        "glob_match",
        "resolve_real_path",
    ),
    "telic.permissions._protected": (
        "PROTECTED_PATHS",
        "protected_pattern",
    ),
    "telic.permissions._sets": (
        "capability_backed",
        "capability_is_mutating",
        "effective_authorization",
        "intersect",
        "is_subset",
        "scope_covers",
    ),
    "telic.permissions._start": (
        "START_RULES",
        "StartRunAuthority",
        "check_capabilities",
        "check_protected_grants",
        "check_grants_on_host",
        "check_network_domains",
        "check_shell_allowlist",
        "intersect_with_host",
        "is_capability",
        "normalize_domains",
        "start_run_authority",
    ),
    "telic.permissions._targets": (
        "TYPED_INSPECT_TARGETS",
        "canonical_host",
        "domain_problem",
        "network_trace_target",
        "shell_command_problem",
    ),
}
"""Where each exported name lives: loaded on first use, so importing one module of
this package does not import them all."""

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(__name__, _EXPORTS, globals())
