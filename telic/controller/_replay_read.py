"""Reading what ``replay_report`` needs from a ledger: the I/O half of ``telic_replay_run``.

Every artifact is re-read through ``Ledger.read_artifact`` for its ``digest_status``. The trace
is read whole, verified; when a trace record fails its hash, the replay goes on without a trace
index and says so (``chain.traceReadable: false``) rather than refusing to show the run.
"""

from __future__ import annotations

from typing import Final

from telic._errors import IntegrityError, NotFound
from telic.controller._replay import DigestStatus, ReplayReport, digest_status, replay_report
from telic.ledger import Ledger, RunRecord, TraceRecord
from telic.protocol import Topology

_PAGE: Final = 500


def run_topology(run: RunRecord) -> Topology:
    """The run's live topology (an escalated micro run replays in full): the one place replay
    learns it."""
    return run.topology or "standard"


async def read_replay(ledger: Ledger, run_id: str) -> ReplayReport:
    """Read ``run_id``'s records and replay them (writes nothing).

    Raises:
        NotFound: there is no such run (``Run not found: <id>``).
    """
    try:
        run = await ledger.get_run(run_id)
    except NotFound:
        raise NotFound(f"Run not found: {run_id}") from None  # the original's text
    artifacts = await ledger.list_artifacts(run_id)
    digests: dict[str, DigestStatus] = {}
    for record in artifacts:
        failure: IntegrityError | NotFound | None = None
        try:
            await ledger.read_artifact(run_id, record.artifact_id)
        except (NotFound, IntegrityError) as error:
            failure = error
        digests[record.artifact_id] = digest_status(failure)
    events, readable = await _trace(ledger, run_id)
    chain = await ledger.verify_run(run_id)
    return replay_report(
        run,
        artifacts,
        events,
        digests,
        topology=run_topology(run),
        chain=chain,
        trace_readable=readable,
    )


async def _trace(ledger: Ledger, run_id: str) -> tuple[tuple[TraceRecord, ...], bool]:
    """The whole verified trace, or ``((), False)`` when a record of it fails its hash."""
    events: list[TraceRecord] = []
    after = 0
    try:
        while True:
            page = await ledger.page_trace(run_id, after, _PAGE)
            events.extend(page.events)
            if not page.has_more or not page.events:
                return tuple(events), True
            after = page.events[-1].sequence
    except IntegrityError:
        return (), False
