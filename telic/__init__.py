"""Telic: a model-free workflow controller and evidence ledger for AI coding agents.

The host's own model plays five roles and submits one typed artifact per phase; Telic validates
each against strict schemas and cross-artifact rules, enforces every permission layer and budget,
stores everything in a tamper-evident ledger and names the single legal next step. The packages:
``telic.protocol`` (wire schemas), ``telic.permissions``, ``telic.ledger``, ``telic.controller``.
This facade exports the error tree every package raises.
"""

from __future__ import annotations

from telic._lazy import lazy_facade as _lazy_facade

TYPE_CHECKING = False  # not ``typing``'s: the resident shim's path imports no ``typing``

if TYPE_CHECKING:
    from telic._errors import (
        ContextSecurityError as ContextSecurityError,
        IntegrityError as IntegrityError,
        InvalidTransition as InvalidTransition,
        Issue as Issue,
        LedgerConflict as LedgerConflict,
        LedgerError as LedgerError,
        LimitExceeded as LimitExceeded,
        LineageRefused as LineageRefused,
        NotFound as NotFound,
        PermissionDenied as PermissionDenied,
        RuleViolation as RuleViolation,
        SchemaViolation as SchemaViolation,
        SecretDetected as SecretDetected,
        StaleToken as StaleToken,
        StoreVersionError as StoreVersionError,
        TelicError as TelicError,
        UsageError as UsageError,
    )

__version__ = "0.1.0"

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
del TYPE_CHECKING  # not an export
