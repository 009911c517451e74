"""Reading a run from the ledger: the one place the reports package does I/O on a ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from telic._errors import IntegrityError, NotFound
from telic.casting import HARNESS, read_trace
from telic.controller import DigestStatus, digest_status, replay_report, run_phase, run_topology
from telic.ledger import Ledger, utc_now
from telic.reports._model import IndexEntry, RunReportData
from telic.reports._project import Stored, artifact_id_of, project, shorten

REQUEST_EXCERPT = 140
"""Characters of the request the index shows."""
FOLLOWERS_LOOKED_AT = 100
"""How many of the ledger's newest runs a report looks through for runs that follow it."""


async def _request(ledger: Ledger, run_id: str) -> str | None:
    """The original request's text, read through the run envelope; ``None`` if unreadable."""
    try:
        envelope = (await ledger.read_artifact(run_id, run_id)).body
        ref = envelope.get("originalRequestRef")
        if not isinstance(ref, str):
            return None
        message = (await ledger.read_artifact(run_id, artifact_id_of(run_id, ref))).body
    except (NotFound, IntegrityError):
        return None
    content = message.get("content")
    if not isinstance(content, str):
        return None
    return shorten(content, REQUEST_EXCERPT)


async def load_index(ledger: Ledger, limit: int = 100) -> tuple[IndexEntry, ...]:
    """The newest ``limit`` runs with their repository and the start of their request."""
    entries = []
    for summary in await ledger.list_runs(limit):
        record = await ledger.get_run(summary.run_id)
        entries.append(
            IndexEntry(
                run_id=summary.run_id,
                mode=summary.requested_mode,
                status=summary.status,
                phase=run_phase(summary.phase, summary.status),
                updated_at=summary.updated_at,
                repository=record.repository_root,
                request=await _request(ledger, summary.run_id),
                prior_run_id=summary.prior_run_id,
            )
        )
    return tuple(entries)


def generator_version() -> str:
    """Return the installed ``telic`` distribution's version (the report generator's version)."""
    return HARNESS.version


async def load_run_report(
    ledger: Ledger,
    run_id: str,
    *,
    clock: Callable[[], str] = utc_now,
    generator: str | None = None,
) -> RunReportData:
    """Read everything a report of ``run_id`` shows, verifying the run's chain on the way.

    ``clock`` returns the generation time (``2026-05-20T12:00:00.000Z`` layout); ``generator``
    is the generator version to record (the installed ``telic`` version by default). Raises
    ``NotFound`` when the ledger has no such run.
    """
    record = await ledger.get_run(run_id)
    artifacts = []
    digests: dict[str, DigestStatus] = {}
    for meta in await ledger.list_artifacts(run_id):
        try:
            body = (await ledger.read_artifact(run_id, meta.artifact_id)).body
        except (NotFound, IntegrityError) as error:
            body = {}  # shown without content; verify_run below names the broken record
            digests[meta.artifact_id] = digest_status(error)
        else:
            digests[meta.artifact_id] = "ok"
        artifacts.append(Stored(meta, body))
    events = await read_trace(ledger, run_id)
    verify = await ledger.verify_run(run_id)
    newest = await ledger.list_runs(FOLLOWERS_LOOKED_AT)
    data = project(
        record,
        artifacts,
        events,
        verify,
        generator_version=generator or generator_version(),
        generated_at=clock(),
        followed_by=[s.run_id for s in newest if s.prior_run_id == run_id],
    )
    metas = [stored.record for stored in artifacts]
    topology = run_topology(record)
    replayed = replay_report(record, metas, events, digests, topology=topology)
    return replace(data, steps=replayed.steps, highlights=replayed.trace_highlights)
