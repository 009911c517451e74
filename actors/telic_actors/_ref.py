"""References to actors: the only handle callers hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, cast

from ._actor import Ask
from ._mailbox import MailboxStatistics, _Reply

if TYPE_CHECKING:
    from ._cell import _Cell

M = TypeVar("M")
R = TypeVar("R")


class ActorRef(Generic[M]):
    """A handle on a supervised actor: tell it, ask it, stop it.

    The reference stays valid across restarts: messages still queued when the actor crashes
    are handled by its next incarnation.
    """

    __slots__ = ("_cell",)

    def __init__(self, cell: _Cell[M]) -> None:
        self._cell = cell

    @property
    def name(self) -> str:
        """The actor's name, unique under its supervisor."""
        return self._cell.name

    @property
    def is_alive(self) -> bool:
        """Whether the actor still accepts messages (false once it is stopping or stopped)."""
        return not self._cell.stopping

    async def tell(self, message: M) -> None:
        """Send ``message`` without waiting for it to be handled; waits while the mailbox is full.

        Raises:
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
        """
        await self._cell.mailbox._post(message, None)

    def tell_nowait(self, message: M) -> None:
        """Send ``message`` now.

        Raises:
            MailboxFull: The mailbox is at capacity.
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
        """
        self._cell.mailbox._post_nowait(message, None)

    async def ask(self, request: Ask[R]) -> R:
        """Send ``request`` and wait for the actor's reply, typed by the request's ``Ask[R]``.

        Raises:
            MessageRefused: Wrong type, too large, or the actor no longer accepts messages.
            ActorCrashed: The actor failed before replying (the failure is the cause).
            ActorStopped: The actor stopped or was interrupted before replying.
        """
        reply = _Reply()
        await self._cell.mailbox._post(cast(M, request), reply)
        return cast(R, await reply.wait())

    async def stop(self) -> None:
        """Stop the actor and wait until it has stopped.

        The message in hand is finished, queued asks fail with `ActorStopped` (queued tells
        count as dropped), then ``on_stop`` runs. Called from the actor itself, it does not
        wait. Stopping a stopped actor does nothing.
        """
        await self._cell.stop()

    def statistics(self) -> MailboxStatistics:
        """Return the statistics of the actor's mailbox."""
        return self._cell.mailbox.statistics()

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "stopped"
        return f"<ActorRef {self.name!r} {state}>"
