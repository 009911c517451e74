"""Supervision: a task group of children plus a restart policy."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar, cast

import anyio
from anyio.abc import TaskGroup

from ._actor import Actor
from ._cell import _Cell, _Child
from ._errors import SupervisionEscalated, UsageError
from ._mailbox import Mailbox
from ._ref import ActorRef

M = TypeVar("M")

Strategy = Literal["one_for_one", "one_for_all"]
"""Which children restart when one fails: only that one, or all of them."""

_anonymous = itertools.count(1)


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How a supervisor answers a child's failure.

    A failure is answered by a restart while fewer than ``max_restarts`` restarts happened in
    the last ``within`` seconds (anyio's monotonic clock); otherwise the supervisor gives up
    and raises `SupervisionEscalated` to its parent.
    """

    strategy: Strategy = "one_for_one"
    """``one_for_one`` restarts the failed child; ``one_for_all`` restarts every child."""
    max_restarts: int = 3
    """Restarts allowed within the window; ``0`` escalates the first failure."""
    within: float = 5.0
    """Length of the window in seconds."""

    def __post_init__(self) -> None:
        if self.strategy not in ("one_for_one", "one_for_all"):
            raise UsageError(f"unknown restart strategy {self.strategy!r}")
        if self.max_restarts < 0:
            raise UsageError("max_restarts must be >= 0")
        if not self.within > 0:
            raise UsageError("within must be a positive number of seconds")


class Supervisor(_Child):
    """Owns children (actors and supervisors) in a task group and restarts them by its policy.

    Failures travel up, never sideways: a child's exception reaches only its supervisor,
    which restarts or escalates. Cancellation is not a failure: it is never answered by a
    restart and always propagates. Get the root from `open_runtime`, nested ones from
    `spawn_supervisor`.
    """

    def __init__(self, *, name: str, policy: RestartPolicy | None = None) -> None:
        super().__init__(name)
        self.policy = policy if policy is not None else RestartPolicy()
        self.restart_count = 0
        """How many restarts this supervisor performed over its life."""
        self._children: dict[str, _Child] = {}
        self._task_group: TaskGroup | None = None
        self._done = anyio.Event()
        self._restarts: deque[float] = deque()

    @property
    def children(self) -> tuple[str, ...]:
        """Names of the live children, in the order they were spawned."""
        return tuple(self._children)

    def spawn(
        self,
        actor_factory: Callable[[], Actor[M]],
        *,
        name: str | None = None,
        mailbox_capacity: int = 64,
        max_message_bytes: int | None = None,
        size_of: Callable[[M], int] | None = None,
    ) -> ActorRef[M]:
        """Start an actor under this supervisor and return its reference.

        ``actor_factory`` (an actor class or any callable) is called now for the first
        incarnation and again for each restart. The mailbox accepts the actor's
        ``message_types``.

        Raises:
            UsageError: The name is taken, the supervisor is stopped, or the mailbox settings
                are wrong.
        """
        self._check_spawnable(name)
        actor = actor_factory()
        name = name if name is not None else f"{type(actor).__name__}-{next(_anonymous)}"
        self._check_spawnable(name)
        accepts = cast("tuple[type[M], ...]", type(actor).message_types)
        mailbox = Mailbox(
            accepts,
            capacity=mailbox_capacity,
            max_message_bytes=max_message_bytes,
            size_of=size_of,
            name=name,
        )
        cell = _Cell(name, actor_factory, actor, mailbox)
        self._adopt(cell)
        return cell.ref

    def spawn_supervisor(self, *, name: str, policy: RestartPolicy | None = None) -> Supervisor:
        """Start a nested supervisor; when it gives up, this one treats that as a child failure."""
        self._check_spawnable(name)
        child = Supervisor(name=name, policy=policy)
        self._adopt(child)
        return child

    async def stop(self) -> None:
        """Stop every child, newest first, then this supervisor, and wait until it has stopped.

        Called from inside one of its actors, it does not wait for that actor.
        """
        inside = self.runs_in(anyio.get_current_task().id)
        if not self.stopping:
            self.stopping = True
            try:
                for child in reversed(list(self._children.values())):
                    await child.stop()
            finally:
                # Even when cancelled midway, a later stop() must not wait for nothing.
                self._done.set()
                if not self.supervised:
                    self.close()
        if not inside:
            await self.terminated.wait()

    def __repr__(self) -> str:
        return f"<Supervisor {self.name!r} children={len(self._children)}>"

    # -- driven by the parent (or by open_runtime for the root) ----------------------------

    async def run_once(self) -> None:
        if self.stopping:
            return
        self._restarts.clear()
        async with anyio.create_task_group() as task_group:
            self._attach(task_group)
            try:
                await self._done.wait()
            finally:
                self._task_group = None

    def close(self) -> None:
        self.stopping = True
        for child in list(self._children.values()):
            child.close()
        self._children.clear()
        self._done.set()
        self.terminated.set()

    def runs_in(self, task_id: int) -> bool:
        return any(child.runs_in(task_id) for child in self._children.values())

    def _attach(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        for child in list(self._children.values()):
            task_group.start_soon(self._supervise, child, name=f"{self.name}/{child.name}")

    def _check_spawnable(self, name: str | None) -> None:
        if self.stopping:
            raise UsageError(f"supervisor {self.name!r} is stopped")
        if name is not None and name in self._children:
            raise UsageError(f"supervisor {self.name!r} already has a child named {name!r}")

    def _adopt(self, child: _Child) -> None:
        self._children[child.name] = child
        if self._task_group is not None:
            self._task_group.start_soon(self._supervise, child, name=f"{self.name}/{child.name}")

    async def _supervise(self, child: _Child) -> None:
        child.supervised = True
        try:
            while True:
                child.restart_pending = False
                with anyio.CancelScope() as scope:
                    child.scope = scope
                    try:
                        await child.run_once()
                    except Exception as exc:
                        if child.stopping:
                            break
                        self._failed(child, exc)
                        continue
                    finally:
                        child.scope = None
                if child.restart_pending and not child.stopping:
                    continue
                break
            if self._children.get(child.name) is child:
                del self._children[child.name]
            child.close()
        finally:
            child.supervised = False

    def _failed(self, child: _Child, exc: Exception) -> None:
        """Answer a failure: restart (the child, or all) or escalate when the window is full."""
        now = anyio.current_time()
        while self._restarts and self._restarts[0] <= now - self.policy.within:
            self._restarts.popleft()
        if len(self._restarts) >= self.policy.max_restarts:
            raise SupervisionEscalated(
                supervisor=self.name,
                child=child.name,
                max_restarts=self.policy.max_restarts,
                within=self.policy.within,
            ) from exc
        self._restarts.append(now)
        self.restart_count += 1
        if self.policy.strategy == "one_for_all":
            for sibling in self._children.values():
                if sibling is not child and sibling.scope is not None and not sibling.stopping:
                    sibling.restart_pending = True
                    sibling.scope.cancel()
