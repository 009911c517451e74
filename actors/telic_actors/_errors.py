"""The error tree of telic_actors (drawn in the package docstring)."""

from __future__ import annotations

from typing import ClassVar, Literal

import anyio

RefusalReason = Literal["wrong_type", "too_large", "closed"]
"""Why a mailbox refused a message at the sender."""


class ActorError(Exception):
    """Root of every error raised by telic_actors."""

    code: ClassVar[str] = "actor_error"


class UsageError(ActorError):
    """The runtime was used wrongly: a programming mistake, not a run-time outcome."""

    code: ClassVar[str] = "usage_error"


class MessageRefused(ActorError):
    """A mailbox refused a message at the sender; the message was never enqueued.

    Attributes:
        reason: ``wrong_type`` (not one of the accepted types), ``too_large`` (over the
            mailbox's byte bound) or ``closed`` (the mailbox no longer accepts messages).
        mailbox: Name of the refusing mailbox.
        message_type: Qualified name of the refused message's type.
        size: Measured size in bytes, when the reason is ``too_large``.
        limit: The byte bound, when the reason is ``too_large``.
    """

    code: ClassVar[str] = "message_refused"

    def __init__(
        self,
        reason: RefusalReason,
        *,
        mailbox: str,
        message_type: str,
        size: int | None = None,
        limit: int | None = None,
    ) -> None:
        self.reason: RefusalReason = reason
        self.mailbox = mailbox
        self.message_type = message_type
        self.size = size
        self.limit = limit
        detail = f" ({size} > {limit} bytes)" if reason == "too_large" else ""
        super().__init__(f"mailbox {mailbox!r} refused a {message_type}: {reason}{detail}")


class MailboxFull(ActorError, anyio.WouldBlock):
    """A ``*_nowait`` send found the mailbox at capacity (also an ``anyio.WouldBlock``).

    Attributes:
        mailbox: Name of the full mailbox.
        capacity: Its capacity in messages.
    """

    code: ClassVar[str] = "mailbox_full"

    def __init__(self, *, mailbox: str, capacity: int) -> None:
        self.mailbox = mailbox
        self.capacity = capacity
        super().__init__(f"mailbox {mailbox!r} is full ({capacity} messages)")


class ActorStopped(ActorError):
    """The actor stopped (or was interrupted) before it answered this ask.

    Attributes:
        actor: Name of the actor.
    """

    code: ClassVar[str] = "actor_stopped"

    def __init__(self, actor: str) -> None:
        self.actor = actor
        super().__init__(f"actor {actor!r} stopped before replying")


class ActorCrashed(ActorError):
    """The actor failed before it answered this ask; the failure is ``exception`` (and the cause).

    Attributes:
        actor: Name of the actor.
        exception: What the actor raised.
    """

    code: ClassVar[str] = "actor_crashed"

    def __init__(self, actor: str, exception: BaseException) -> None:
        self.actor = actor
        self.exception = exception
        super().__init__(f"actor {actor!r} crashed: {exception!r}")
        self.__cause__ = exception


class SupervisionEscalated(ActorError):
    """A supervisor used up its restarts and gave up; it travels up to the parent.

    The last failure is the ``__cause__``.

    Attributes:
        supervisor: Name of the supervisor that gave up.
        child: Name of the child whose failure exhausted the policy.
        max_restarts: The policy's restart allowance.
        within: The policy's window in seconds.
    """

    code: ClassVar[str] = "supervision_escalated"

    def __init__(self, *, supervisor: str, child: str, max_restarts: int, within: float) -> None:
        self.supervisor = supervisor
        self.child = child
        self.max_restarts = max_restarts
        self.within = within
        super().__init__(
            f"supervisor {supervisor!r} gave up: child {child!r} failed more than "
            f"{max_restarts} times within {within} s"
        )
