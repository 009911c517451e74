"""Roles as actors: the service every Telic surface drives, with one writer per run.

``open_service`` starts an actor runtime whose supervisor owns the five role actors
(scenario_author, task_compiler, quality_controller, executor, release_auditor), a launcher for
new runs, and one ``RunActor`` per active run — started on demand, stopped when idle, the single
writer of its run. Every state change (start, ground, submit, clarification answer, cancel,
cast, progress, packet return, traced permission checks) travels as a bounded message of at
most 8 KiB of canonical JSON; large bodies wait in the content-addressed ``BlobStage`` and the
message carries their digest. A submission is checked by the role actor that owns the run's
phase, through the pure controller core, before the run actor commits it through the
``Controller``. Reads go straight to the controller and the ledger.

Errors are the ``telic`` error tree and ``telic_packets.CastRefusal``/``PacketRefusal``.
"""

from __future__ import annotations

from telic.roles._blobs import BlobStage as BlobStage, StageStatistics as StageStatistics
from telic.roles._messages import (
    MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES,
    Outcome as Outcome,
    message_size as message_size,
)
from telic.roles._role import ROLES as ROLES, Role as Role, RoleActor as RoleActor
from telic.roles._run import RunActor as RunActor
from telic.roles._service import (
    Grounder as Grounder,
    GroundingOutput as GroundingOutput,
    GroundResult as GroundResult,
    Service as Service,
    open_service as open_service,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
