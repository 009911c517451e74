"""Roles as actors: the service every Telic surface drives, with one writer per run.

``open_service`` starts an actor runtime whose supervisor owns the five role actors
(scenario_author, task_compiler, quality_controller, executor, release_auditor), a launcher for
new runs, and one ``RunActor`` per active run — started on demand, stopped when idle, the single
writer of its run. Every state change travels as a typed message (``_run.py``); a submission is
checked by the role actor that owns the run's phase, through the pure controller core, before
the run actor commits it through the ``Controller``. Reads go straight to the controller and the
ledger.

Errors are the ``telic`` error tree and ``telic_packets.CastRefusal``/``PacketRefusal``.
"""

from __future__ import annotations

from telic.roles._run import (
    ROLES as ROLES,
    Outcome as Outcome,
    Role as Role,
    RoleActor as RoleActor,
    RunActor as RunActor,
)
from telic.roles._service import (
    Grounder as Grounder,
    GroundingOutput as GroundingOutput,
    GroundResult as GroundResult,
    Service as Service,
    open_service as open_service,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
