"""Telic: a model-free workflow controller and evidence ledger for AI coding agents.

The host's own model plays five roles and submits one typed artifact per phase; Telic validates
each against strict schemas and cross-artifact rules, enforces every permission layer and budget,
stores everything in a tamper-evident ledger and names the single legal next step. The packages:
``telic.protocol`` (wire schemas), ``telic.permissions``, ``telic.ledger``, ``telic.controller``.
This facade exports the error tree every package raises.
"""

from __future__ import annotations

from telic._errors import (
    ContextSecurityError as ContextSecurityError,
)
from telic._errors import (
    IntegrityError as IntegrityError,
)
from telic._errors import (
    InvalidTransition as InvalidTransition,
)
from telic._errors import (
    Issue as Issue,
)
from telic._errors import (
    LedgerConflict as LedgerConflict,
)
from telic._errors import (
    LedgerError as LedgerError,
)
from telic._errors import (
    LimitExceeded as LimitExceeded,
)
from telic._errors import (
    NotFound as NotFound,
)
from telic._errors import (
    PermissionDenied as PermissionDenied,
)
from telic._errors import (
    RuleViolation as RuleViolation,
)
from telic._errors import (
    SchemaViolation as SchemaViolation,
)
from telic._errors import (
    SecretDetected as SecretDetected,
)
from telic._errors import (
    StaleToken as StaleToken,
)
from telic._errors import (
    StoreVersionError as StoreVersionError,
)
from telic._errors import (
    TelicError as TelicError,
)
from telic._errors import (
    UsageError as UsageError,
)

__version__ = "0.1.0"

__all__ = [
    "ContextSecurityError",
    "IntegrityError",
    "InvalidTransition",
    "Issue",
    "LedgerConflict",
    "LedgerError",
    "LimitExceeded",
    "NotFound",
    "PermissionDenied",
    "RuleViolation",
    "SchemaViolation",
    "SecretDetected",
    "StaleToken",
    "StoreVersionError",
    "TelicError",
    "UsageError",
]
