"""The error tree: one root, a stable and distinct code per error, structured fields."""

from __future__ import annotations

import anyio
import pytest

import telic_actors
from telic_actors import (
    ActorCrashed,
    ActorError,
    ActorStopped,
    MailboxFull,
    MessageRefused,
    SupervisionEscalated,
    UsageError,
)

ERRORS = [
    value
    for value in vars(telic_actors).values()
    if isinstance(value, type) and issubclass(value, BaseException)
]


def test_every_exported_error_descends_from_actor_error_with_its_own_code() -> None:
    assert all(issubclass(error, ActorError) for error in ERRORS)
    codes = [error.__dict__.get("code") for error in ERRORS]
    assert None not in codes
    assert len(set(codes)) == len(codes)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ActorError, "actor_error"),
        (UsageError, "usage_error"),
        (MessageRefused, "message_refused"),
        (MailboxFull, "mailbox_full"),
        (ActorStopped, "actor_stopped"),
        (ActorCrashed, "actor_crashed"),
        (SupervisionEscalated, "supervision_escalated"),
    ],
)
def test_codes_are_stable(error: type[ActorError], code: str) -> None:
    assert error.code == code


def test_a_full_mailbox_is_also_an_anyio_would_block() -> None:
    assert issubclass(MailboxFull, anyio.WouldBlock)


def test_errors_carry_their_fields_and_a_readable_message() -> None:
    refused = MessageRefused("too_large", mailbox="m", message_type="x.Y", size=9, limit=8)
    assert str(refused) == "mailbox 'm' refused a x.Y: too_large (9 > 8 bytes)"
    cause = ValueError("bad")
    crashed = ActorCrashed("a", cause)
    assert (crashed.actor, crashed.exception, crashed.__cause__) == ("a", cause, cause)
    assert "actor 'a' stopped" in str(ActorStopped("a"))
    escalated = SupervisionEscalated(supervisor="s", child="c", max_restarts=3, within=5.0)
    assert "more than 3 times within 5.0 s" in str(escalated)
