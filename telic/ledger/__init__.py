"""The ledger: content-addressed, hash-chained, crash-safe storage of runs.

One narrow async interface, ``Ledger``, with three backends chosen by URL in ``open_ledger``:
``memory://`` (the reference semantics), ``sqlite:///…`` (embedded default) and
``postgresql://…`` (several servers sharing one database). Bodies are canonical JSON addressed by
sha256 and re-verified on every read; each run's artifact records and trace events form one hash
chain that ``verify_run`` walks. Every mutation is one transaction, fenced by the run version,
with quotas checked inside it: it is stored entirely or not at all.

Errors (from ``telic._errors``): ``LedgerConflict`` (a concurrent writer won, or an id was reused
with other content), ``IntegrityError`` (stored bytes or records no longer match their hashes),
``StoreVersionError`` (a newer store), ``LimitExceeded`` (a quota), ``NotFound``,
``ContextSecurityError`` (an unsafe state directory) and ``UsageError``.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.ledger._base import Ledger as Ledger
    from telic.ledger._engine import utc_now as utc_now
    from telic.ledger._open import DATABASE_URL_ENV as DATABASE_URL_ENV
    from telic.ledger._open import STATE_DIR_ENV as STATE_DIR_ENV
    from telic.ledger._open import open_ledger as open_ledger
    from telic.ledger._open import resolve_url as resolve_url
    from telic.ledger._paths import default_state_dir as default_state_dir
    from telic.ledger._records import JSON as JSON
    from telic.ledger._records import ArtifactBody as ArtifactBody
    from telic.ledger._records import ArtifactRecord as ArtifactRecord
    from telic.ledger._records import BrokenRecord as BrokenRecord
    from telic.ledger._records import CanonicalBody as CanonicalBody
    from telic.ledger._records import Commit as Commit
    from telic.ledger._records import Limits as Limits
    from telic.ledger._records import NewArtifact as NewArtifact
    from telic.ledger._records import NewTraceEvent as NewTraceEvent
    from telic.ledger._records import RunChanges as RunChanges
    from telic.ledger._records import RunRecord as RunRecord
    from telic.ledger._records import RunSummary as RunSummary
    from telic.ledger._records import TracePage as TracePage
    from telic.ledger._records import TraceRecord as TraceRecord
    from telic.ledger._records import VerifyReport as VerifyReport

__all__ = [
    "DATABASE_URL_ENV",
    "JSON",
    "STATE_DIR_ENV",
    "ArtifactBody",
    "ArtifactRecord",
    "BrokenRecord",
    "CanonicalBody",
    "Commit",
    "Ledger",
    "Limits",
    "NewArtifact",
    "NewTraceEvent",
    "RunChanges",
    "RunRecord",
    "RunSummary",
    "TracePage",
    "TraceRecord",
    "VerifyReport",
    "default_state_dir",
    "open_ledger",
    "resolve_url",
    "utc_now",
]

_EXPORTS: typing.Final = {
    "telic.ledger._base": ("Ledger",),
    "telic.ledger._engine": ("utc_now",),
    "telic.ledger._open": (
        "DATABASE_URL_ENV",
        "STATE_DIR_ENV",
        "open_ledger",
        "resolve_url",
    ),
    "telic.ledger._paths": ("default_state_dir",),
    "telic.ledger._records": (
        "JSON",
        "ArtifactBody",
        "ArtifactRecord",
        "BrokenRecord",
        "CanonicalBody",
        "Commit",
        "Limits",
        "NewArtifact",
        "NewTraceEvent",
        "RunChanges",
        "RunRecord",
        "RunSummary",
        "TracePage",
        "TraceRecord",
        "VerifyReport",
    ),
}
"""Where each exported name lives: loaded on first use, so importing one module of
this package does not import them all."""

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(__name__, _EXPORTS, globals())
