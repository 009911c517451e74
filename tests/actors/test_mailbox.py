"""Mailboxes: bounded, typed, refusing at the sender, pushing back on senders when full."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import pytest

from telic_actors import ActorStopped, Mailbox, MailboxFull, MessageRefused, UsageError
from telic_actors._runtime import _Reply


@dataclass(frozen=True)
class Note:
    text: str


def _size(note: Note) -> int:
    return len(note.text.encode())


@pytest.mark.anyio
async def test_messages_come_out_in_the_order_they_went_in() -> None:
    with Mailbox(Note, capacity=100) as mailbox:
        for i in range(100):
            await mailbox.send(Note(str(i)))
        received = [mailbox.receive_nowait().text for _ in range(100)]
    assert received == [str(i) for i in range(100)]


@pytest.mark.anyio
async def test_a_message_of_a_wrong_type_is_refused_at_the_sender() -> None:
    with Mailbox(Note, name="notes") as mailbox:
        with pytest.raises(MessageRefused) as refused:
            await mailbox.send("not a note")  # type: ignore[arg-type]
        with pytest.raises(MessageRefused):
            mailbox.send_nowait(42)  # type: ignore[arg-type]
        stats = mailbox.statistics()
    assert refused.value.reason == "wrong_type"
    assert refused.value.mailbox == "notes"
    assert refused.value.message_type == "builtins.str"
    assert refused.value.code == "message_refused"
    assert (stats.refused, stats.current_buffer_used, stats.delivered) == (2, 0, 0)


@pytest.mark.anyio
async def test_an_oversized_message_is_refused_at_the_sender_with_its_size() -> None:
    with Mailbox(Note, max_message_bytes=8, size_of=_size) as mailbox:
        await mailbox.send(Note("12345678"))
        with pytest.raises(MessageRefused) as refused:
            await mailbox.send(Note("123456789"))
        stats = mailbox.statistics()
    assert (refused.value.reason, refused.value.size, refused.value.limit) == ("too_large", 9, 8)
    assert (stats.refused, stats.current_buffer_used) == (1, 1)


@pytest.mark.anyio
async def test_a_mailbox_accepts_any_of_several_types() -> None:
    with Mailbox[Note | int]((Note, int)) as mailbox:
        await mailbox.send(Note("a"))
        await mailbox.send(1)
        with pytest.raises(MessageRefused):
            await mailbox.send(1.5)  # type: ignore[arg-type]
        assert mailbox.accepts == (Note, int)


def test_a_byte_bound_without_a_sizing_function_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        Mailbox(Note, max_message_bytes=10)


@pytest.mark.parametrize("capacity", [-1, 1.5, True])
def test_a_capacity_must_be_a_non_negative_int(capacity: object) -> None:
    with pytest.raises(UsageError):
        Mailbox(Note, capacity=capacity)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_senders_wait_at_capacity_and_resume_as_space_frees() -> None:
    sent: list[str] = []

    async def sender(mailbox: Mailbox[Note], text: str) -> None:
        await mailbox.send(Note(text))
        sent.append(text)

    with anyio.fail_after(5), Mailbox(Note, capacity=2) as mailbox:
        async with anyio.create_task_group() as tg:
            for text in "abcde":
                tg.start_soon(sender, mailbox, text)
            await anyio.wait_all_tasks_blocked()
            stats = mailbox.statistics()
            assert (stats.current_buffer_used, stats.max_buffer_size) == (2, 2)
            assert stats.tasks_waiting_send == 3
            assert len(sent) == 2

            assert mailbox.receive_nowait() == Note(sent[0])
            await anyio.wait_all_tasks_blocked()
            assert mailbox.statistics().tasks_waiting_send == 2
            assert len(sent) == 3

            for _ in range(4):
                await mailbox.receive()
        final = mailbox.statistics()
    assert sorted(sent) == list("abcde")
    assert (final.tasks_waiting_send, final.delivered, final.current_buffer_used) == (0, 5, 0)


@pytest.mark.anyio
async def test_send_nowait_on_a_full_mailbox_raises_mailbox_full() -> None:
    with Mailbox(Note, capacity=1, name="tiny") as mailbox:
        mailbox.send_nowait(Note("a"))
        with pytest.raises(MailboxFull) as full:
            mailbox.send_nowait(Note("b"))
        with pytest.raises(anyio.WouldBlock):
            mailbox.send_nowait(Note("c"))
        assert mailbox.statistics().current_buffer_used == 1
    assert (full.value.mailbox, full.value.capacity, full.value.code) == ("tiny", 1, "mailbox_full")


@pytest.mark.anyio
async def test_a_closed_mailbox_refuses_but_keeps_queued_messages_receivable() -> None:
    with Mailbox(Note) as mailbox:
        await mailbox.send(Note("kept"))
        mailbox.close()
        with pytest.raises(MessageRefused) as refused:
            await mailbox.send(Note("late"))
        with pytest.raises(MessageRefused):
            mailbox.send_nowait(Note("later"))
        received = [note.text async for note in mailbox]
        with pytest.raises(anyio.EndOfStream):
            mailbox.receive_nowait()
        stats = mailbox.statistics()
    assert refused.value.reason == "closed"
    assert received == ["kept"]
    assert (stats.closed, stats.refused, stats.delivered) == (True, 2, 1)


@pytest.mark.anyio
async def test_a_sender_blocked_on_a_full_mailbox_is_refused_when_it_closes() -> None:
    outcome: list[str] = []

    async def sender(mailbox: Mailbox[Note]) -> None:
        try:
            await mailbox.send(Note("blocked"))
        except MessageRefused as refused:
            outcome.append(refused.reason)

    with anyio.fail_after(5), Mailbox(Note, capacity=1) as mailbox:
        await mailbox.send(Note("first"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(sender, mailbox)
            await anyio.wait_all_tasks_blocked()
            assert mailbox.statistics().tasks_waiting_send == 1
            mailbox.close()
        stats = mailbox.statistics()
    assert outcome == ["closed"]
    assert (stats.refused, stats.current_buffer_used, stats.tasks_waiting_send) == (1, 1, 0)


@pytest.mark.anyio
async def test_discard_drops_queued_messages_counts_them_and_fails_their_asks() -> None:
    mailbox = Mailbox(Note)
    reply = _Reply()
    await mailbox.send(Note("a"))
    await mailbox._post(Note("b"), reply)
    assert mailbox.discard() == 2
    stats = mailbox.statistics()
    assert (stats.dropped, stats.current_buffer_used, stats.closed) == (2, 0, True)
    with pytest.raises(ActorStopped):
        await reply.wait()
    with pytest.raises(anyio.EndOfStream):
        await mailbox.receive()
    assert "closed=True" in repr(mailbox)
