"""A small typed actor runtime on anyio: bounded mailboxes, typed asks, supervision.

Actors subclass `Actor[M]` and override ``on_start``, ``on_message``, ``on_stop`` and
``on_failure``; each handles one message at a time, in mailbox order. Callers hold an
`ActorRef[M]` to ``tell``, ``ask`` (typed by the request: ``class GetRun(Ask[RunView])``) and
``stop``. Mailboxes are bounded anyio memory object streams that refuse wrong or oversized
messages at the sender and make senders wait when full. A `Supervisor` owns its children in
a task group and restarts them by a `RestartPolicy`; `open_runtime` owns the root.

Errors form one tree; each class has a stable ``code``::

    ActorError                    actor_error
    ├── UsageError                usage_error            a programming mistake
    ├── MessageRefused            message_refused        refused at the sender (reason:
    │                                                    wrong_type | too_large | closed)
    ├── MailboxFull               mailbox_full           *_nowait on a full mailbox
    │                                                    (also an anyio.WouldBlock)
    ├── ActorStopped              actor_stopped          an ask outlived its actor
    ├── ActorCrashed              actor_crashed          the actor failed before replying
    └── SupervisionEscalated      supervision_escalated  a supervisor used up its restarts

Cancellation is never an `ActorError`: it is not a failure and always propagates.
"""

from ._actor import Actor as Actor, Ask as Ask
from ._errors import (
    ActorCrashed as ActorCrashed,
    ActorError as ActorError,
    ActorStopped as ActorStopped,
    MailboxFull as MailboxFull,
    MessageRefused as MessageRefused,
    RefusalReason as RefusalReason,
    SupervisionEscalated as SupervisionEscalated,
    UsageError as UsageError,
)
from ._runtime import (
    ActorRef as ActorRef,
    Mailbox as Mailbox,
    MailboxStatistics as MailboxStatistics,
    RestartPolicy as RestartPolicy,
    Strategy as Strategy,
    Supervisor as Supervisor,
    open_runtime as open_runtime,
)

__all__ = [
    "Actor",
    "ActorCrashed",
    "ActorError",
    "ActorRef",
    "ActorStopped",
    "Ask",
    "Mailbox",
    "MailboxFull",
    "MailboxStatistics",
    "MessageRefused",
    "RefusalReason",
    "RestartPolicy",
    "Strategy",
    "SupervisionEscalated",
    "Supervisor",
    "UsageError",
    "open_runtime",
]
