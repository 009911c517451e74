"""The actor base class and the typed ask marker."""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ._errors import UsageError

if TYPE_CHECKING:
    from ._runtime import ActorRef

M = TypeVar("M")
R_co = TypeVar("R_co", covariant=True)


class Ask(Generic[R_co]):
    """Marks a request that expects a reply of type ``R_co``: ``class GetRun(Ask[RunView])``.

    ``await ref.ask(GetRun(...))`` is then typed as returning a ``RunView``.
    """

    __slots__ = ()


class Actor(Generic[M]):
    """Base class of actors: override the ``on_*`` hooks; the runtime calls them one at a time.

    An actor handles one message at a time, in the order its mailbox received them. Whatever
    ``on_message`` returns is the reply to an ask (and is ignored for a tell). An exception
    from any hook is a failure: ``on_failure`` runs, the in-flight ask fails with
    `ActorCrashed`, and the supervisor decides on a restart. Cancellation is not a failure.

    The mailbox accepts the types named in ``Actor[...]`` (a class or a union of classes);
    set ``message_types`` on the subclass when they cannot be read from there.
    """

    message_types: ClassVar[tuple[type, ...]] = (object,)
    """The message types this actor's mailbox accepts (read from ``Actor[...]`` by default)."""

    _ref: ActorRef[M] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "message_types" in cls.__dict__:
            return
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is Actor:
                (argument,) = typing.get_args(base)
                found = _message_types(argument)
                if found is None:
                    raise UsageError(
                        f"cannot read the message types of {cls.__qualname__} from "
                        f"Actor[{argument!r}]; set {cls.__qualname__}.message_types"
                    )
                if found:
                    cls.message_types = found
                return

    @property
    def ref(self) -> ActorRef[M]:
        """This actor's own reference (to tell itself, hand out, or stop itself)."""
        if self._ref is None:
            raise UsageError("an actor has no ref until a supervisor spawns it")
        return self._ref

    async def on_start(self) -> None:
        """Run before the first message of this incarnation (again after each restart)."""

    async def on_message(self, message: M) -> object:
        """Handle one message; the return value answers an ask."""
        raise NotImplementedError(f"{type(self).__qualname__} does not override on_message")

    async def on_stop(self) -> None:
        """Run when the actor stops on request (not after a failure, nor when cancelled)."""

    async def on_failure(self, exception: Exception) -> None:
        """Run after a hook raised ``exception``, before the supervisor restarts or gives up."""


def _message_types(argument: object) -> tuple[type, ...] | None:
    """The classes named by a type argument; ``()`` for a type variable, None if unreadable."""
    if isinstance(argument, TypeVar):
        return ()
    if argument is Any:
        return (object,)
    origin = typing.get_origin(argument)
    if origin is typing.Union or origin is types.UnionType:
        found: list[type] = []
        for member in typing.get_args(argument):
            member_types = _message_types(member)
            if not member_types:
                return None
            found.extend(member_types)
        return tuple(found)
    if origin is typing.Annotated:
        return _message_types(typing.get_args(argument)[0])
    if isinstance(origin, type):
        return (origin,)
    if isinstance(argument, type):
        return (argument,)
    return None
