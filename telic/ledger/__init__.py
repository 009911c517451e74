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

from ._base import Ledger as Ledger
from ._engine import utc_now as utc_now
from ._open import DATABASE_URL_ENV as DATABASE_URL_ENV
from ._open import STATE_DIR_ENV as STATE_DIR_ENV
from ._open import open_ledger as open_ledger
from ._open import resolve_url as resolve_url
from ._paths import default_state_dir as default_state_dir
from ._records import JSON as JSON
from ._records import ArtifactBody as ArtifactBody
from ._records import ArtifactRecord as ArtifactRecord
from ._records import BrokenRecord as BrokenRecord
from ._records import CanonicalBody as CanonicalBody
from ._records import Commit as Commit
from ._records import Limits as Limits
from ._records import NewArtifact as NewArtifact
from ._records import NewTraceEvent as NewTraceEvent
from ._records import RunChanges as RunChanges
from ._records import RunRecord as RunRecord
from ._records import RunSummary as RunSummary
from ._records import TracePage as TracePage
from ._records import TraceRecord as TraceRecord
from ._records import VerifyReport as VerifyReport

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
