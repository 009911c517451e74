"""The permission algebra of Telic 1.0: pure, total and I/O-free apart from one injectable seam.

Terms and laws (docs/protocol.md §3.5):

* ``ModePolicy`` — what each intent mode allows and explicitly denies; ``mode_ceiling`` and
  ``plan_ceiling`` project it onto a ``PermissionSet``.
* ``PermissionSet`` values — built from capabilities (``permissions_from_capabilities``,
  ``denied_permissions``), combined with ``intersect``, ordered by ``is_subset`` (``exceeding``
  names where one set is not within another), and reduced to the run's authority by
  ``effective_authorization`` (mode ceiling ∩ granted ∖ denied).
* ``Layer`` / ``Grant`` — named permission sources; ``authorize_action`` evaluates an attempted
  action against them to a ``Decision`` that names the deciding layer. Deny overrides allow, and
  adding a layer never widens a decision. Writes and deletes never reach a protected path
  (``PROTECTED_PATHS``) without the user's explicit grant of it.
* ``broker_decision`` — the same decision answered in the original Telic's broker shape as
  well (``reasonCode``, the refusing policies' names, its ``permissionDecision``).
* start_run inputs — ``start_run_authority`` and its ``check_*`` functions report ``SR-*`` rules.

The filesystem is touched only through a ``Resolver`` (default ``resolve_real_path``), so tests
and the controller core can evaluate decisions without I/O.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.permissions._boundary import boundary as boundary
    from telic.permissions._broker import (
        BrokerDecision as BrokerDecision,
        broker_decision as broker_decision,
        policy_names as policy_names,
    )
    from telic.permissions._decision import (
        Decision as Decision,
        Grant as Grant,
        Layer as Layer,
        authorize_action as authorize_action,
        permission_record as permission_record,
    )
    from telic.permissions._envelope import (
        default_budgets as default_budgets,
        denied_permissions as denied_permissions,
        permissions_from_capabilities as permissions_from_capabilities,
    )
    from telic.permissions._modes import (
        DEFAULT_GRANTS as DEFAULT_GRANTS,
        MODE_POLICIES as MODE_POLICIES,
        ModePolicy as ModePolicy,
        mode_ceiling as mode_ceiling,
        plan_ceiling as plan_ceiling,
    )
    from telic.permissions._native import (
        READS_CLOSE_AT as READS_CLOSE_AT,
        reopens_read as reopens_read,
    )
    from telic.permissions._paths import (
        Resolver as Resolver,
        glob_match as glob_match,
        resolve_real_path as resolve_real_path,
    )
    from telic.permissions._protected import (
        MUTATING_REPOSITORY as MUTATING_REPOSITORY,
        PROTECTED_PATHS as PROTECTED_PATHS,
        protected_pattern as protected_pattern,
    )
    from telic.permissions._sets import (
        capability_backed as capability_backed,
        capability_is_mutating as capability_is_mutating,
        effective_authorization as effective_authorization,
        exceeding as exceeding,
        intersect as intersect,
        is_subset as is_subset,
        scope_covers as scope_covers,
    )
    from telic.permissions._start import (
        START_RULES as START_RULES,
        StartRunAuthority as StartRunAuthority,
        check_capabilities as check_capabilities,
        check_grants_on_host as check_grants_on_host,
        check_network_domains as check_network_domains,
        check_protected_grants as check_protected_grants,
        check_shell_allowlist as check_shell_allowlist,
        intersect_with_host as intersect_with_host,
        is_capability as is_capability,
        normalize_domains as normalize_domains,
        start_run_authority as start_run_authority,
    )
    from telic.permissions._targets import (
        TYPED_INSPECT_TARGETS as TYPED_INSPECT_TARGETS,
        canonical_host as canonical_host,
        domain_problem as domain_problem,
        network_trace_target as network_trace_target,
        shell_command_problem as shell_command_problem,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
