"""Reading a run from the ledger: the one place the reports package does I/O on a ledger."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version

from telic._errors import IntegrityError
from telic.ledger import Ledger, TraceRecord, utc_now
from telic.reports._model import RunReportData
from telic.reports._project import Stored, project

__all__ = ["generator_version", "load_run_report"]

_PAGE = 500


def generator_version() -> str:
    """Return the installed ``telic`` distribution's version (the report generator's version)."""
    try:
        return version("telic")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


async def load_run_report(
    ledger: Ledger,
    run_id: str,
    *,
    clock: Callable[[], str] = utc_now,
    generator: str | None = None,
) -> RunReportData:
    """Read everything a report of ``run_id`` shows, verifying the run's chain on the way.

    Args:
        ledger: the ledger holding the run.
        run_id: the run to report on.
        clock: returns the generation time (``2026-05-20T12:00:00.000Z`` layout).
        generator: the generator version to record; the installed ``telic`` version by default.

    Raises:
        NotFound: the ledger has no such run.
    """
    record = await ledger.get_run(run_id)
    artifacts = []
    for meta in await ledger.list_artifacts(run_id):
        try:
            body = (await ledger.read_artifact(run_id, meta.artifact_id)).body
        except IntegrityError:
            body = {}  # shown without content; verify_run below names the broken record
        artifacts.append(Stored(meta, body))
    events: list[TraceRecord] = []
    after = 0
    while True:
        page = await ledger.page_trace(run_id, after, _PAGE)
        events.extend(page.events)
        if not page.has_more or not page.events:
            break
        after = page.events[-1].sequence
    verify = await ledger.verify_run(run_id)
    return project(
        record,
        artifacts,
        events,
        verify,
        generator_version=generator or generator_version(),
        generated_at=clock(),
    )
