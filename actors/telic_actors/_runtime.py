"""The runtime: the root task group and the root supervisor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from ._supervisor import RestartPolicy, Supervisor


@asynccontextmanager
async def open_runtime(
    *, policy: RestartPolicy | None = None, name: str = "root"
) -> AsyncIterator[Supervisor]:
    """Open an actor runtime and yield its root supervisor.

    Leaving the block normally stops every actor cleanly (newest first, each finishing the
    message in hand). Like a task group, the block is cancelled when the root supervisor gives
    up, and errors leave it as an ``ExceptionGroup`` (catch `SupervisionEscalated` with
    ``except*``). On any exit, asks still pending fail with a typed error.

    Args:
        policy: The root supervisor's restart policy.
        name: The root supervisor's name.
    """
    root = Supervisor(name=name, policy=policy)
    try:
        async with anyio.create_task_group() as task_group:
            root._attach(task_group)
            yield root
            await root.stop()
    finally:
        root.close()
