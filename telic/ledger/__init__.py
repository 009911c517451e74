"""The ledger: content-addressed, hash-chained, crash-safe storage of runs.

One async class, ``Ledger``, keeps every rule over three backends chosen by URL in
``open_ledger``: ``memory://`` (the reference semantics), ``sqlite:///…`` (embedded default) and
``postgresql://…`` (several servers sharing one database). ``DirectLedger`` reads and appends
to an SQLite ledger synchronously, for a process that lives for one decision (``telic hook``);
``PortalLedger`` offers the same blocking calls (``BlockingLedger``) over any other store.
Bodies are canonical JSON addressed by sha256 and re-verified on every read; each run's artifact
records and trace events form one hash chain that ``verify_run`` walks. Every mutation is one
transaction, fenced by the run version, with quotas checked inside it: it is stored entirely or
not at all.

Errors (from ``telic._errors``): ``LedgerConflict`` (a concurrent writer won, or an id was reused
with other content), ``IntegrityError`` (stored bytes or records no longer match their hashes),
``StoreVersionError`` (a newer store), ``LimitExceeded`` (a quota), ``NotFound``,
``ContextSecurityError`` (an unsafe state directory) and ``UsageError``.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.ledger._clock import utc_now as utc_now
    from telic.ledger._direct import (
        LIVE_STATUSES as LIVE_STATUSES,
        BlockingLedger as BlockingLedger,
        DirectLedger as DirectLedger,
        LiveRun as LiveRun,
    )
    from telic.ledger._locate import (
        DATABASE_URL_ENV as DATABASE_URL_ENV,
        REPOSITORY_ROOT_ENV as REPOSITORY_ROOT_ENV,
        STATE_DIR_ENV as STATE_DIR_ENV,
        resolve_url as resolve_url,
        sqlite_paths as sqlite_paths,
    )
    from telic.ledger._open import (
        open_ledger as open_ledger,
    )
    from telic.ledger._paths import (
        DB_FILE_NAME as DB_FILE_NAME,
        default_state_dir as default_state_dir,
        ledger_file_problem as ledger_file_problem,
    )
    from telic.ledger._plans import Ledger as Ledger
    from telic.ledger._portal import (
        PortalLedger as PortalLedger,
    )
    from telic.ledger._records import (
        JSON as JSON,
        TERMINAL_STATUSES as TERMINAL_STATUSES,
        ArtifactBody as ArtifactBody,
        ArtifactRecord as ArtifactRecord,
        BrokenRecord as BrokenRecord,
        CanonicalBody as CanonicalBody,
        Commit as Commit,
        Limits as Limits,
        NewArtifact as NewArtifact,
        NewTraceEvent as NewTraceEvent,
        OutcomeHint as OutcomeHint,
        RunChanges as RunChanges,
        RunRecord as RunRecord,
        TracePage as TracePage,
        TraceRecord as TraceRecord,
        VerifyReport as VerifyReport,
        budget_snapshot as budget_snapshot,
        check_id as check_id,
    )
    from telic.ledger._wire import (
        RunSummaryWire as RunSummaryWire,
        RunWire as RunWire,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
