"""stdio served by the event loop itself: lines in, whole messages out, the wire given back."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage

from telic.server._stdio import (
    AnsweredReads,
    PipeLines,
    PipeWriter,
    claimed,
    error_reply,
    is_stream,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):  # a test closed it: end of input
            os.close(fd)


async def test_lines_arrive_whole_however_the_bytes_are_split(pipe: tuple[int, int]) -> None:
    read, write = pipe
    lines = PipeLines(read)
    os.write(write, b'{"a":1}\n{"b":')
    with anyio.fail_after(5):
        assert await lines.readline() == '{"a":1}\n'

        async def finish() -> None:
            os.write(write, '2}\n{"é":3}\nlast'.encode())
            os.close(write)

        async with anyio.create_task_group() as tg:
            tg.start_soon(finish)
            assert await lines.readline() == '{"b":2}\n'
        assert await lines.readline() == '{"é":3}\n'
        assert await lines.readline() == "last"  # the unterminated tail, at end of input
        assert await lines.readline() == ""


async def test_a_message_larger_than_the_pipe_is_written_whole(pipe: tuple[int, int]) -> None:
    read, write = pipe
    message = "x" * 1_000_000 + "\n"  # far beyond a pipe's 64 KiB: the writer must wait
    received = bytearray()

    async def drain() -> None:
        while len(received) < len(message):
            await anyio.wait_readable(read)
            received.extend(os.read(read, 65_536))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            assert await PipeWriter(write).write(message) == len(message)
            await PipeWriter(write).flush()
    assert received == message.encode()


def test_only_pipes_and_sockets_are_served_from_the_event_loop(
    pipe: tuple[int, int], tmp_path: Path
) -> None:
    read, write = pipe
    assert is_stream(read)
    assert is_stream(write)
    left, right = socket.socketpair()
    with left, right:
        assert is_stream(left.fileno())
    with (tmp_path / "requests.jsonl").open("w") as file:
        assert not is_stream(file.fileno())  # a file: the reader thread serves it


def test_aclaimed_descriptor_is_diverted_and_given_back_blocking(pipe: tuple[int, int]) -> None:
    read, _ = pipe
    wire = os.dup(read)
    os.set_blocking(wire, True)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        with claimed(wire, null) as private:
            assert stat.S_ISCHR(os.fstat(wire).st_mode)  # children would read the null device
            assert os.path.sameopenfile(private, read)
            assert not os.get_blocking(private)
        assert os.path.sameopenfile(wire, read)
        assert os.get_blocking(wire)
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(private)
    finally:
        os.close(null)
        os.close(wire)


def _problem(line: str) -> Exception:
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # what the SDK's stdio transport puts on the read stream
        return exc
    raise AssertionError(f"{line!r} is a message")


@pytest.mark.parametrize(
    "line",
    ["garbage", "", '{"x": "\\ud800"}', "[" * 10_000 + "]" * 10_000, '{"a": 1', "\ufffd\ufffd"],
)
def test_a_line_that_is_not_json_is_answered_as_a_parse_error(line: str) -> None:
    reply = error_reply(_problem(line))
    assert (reply.id, reply.error.code, reply.error.message) == (None, -32700, "Parse error")


@pytest.mark.parametrize("line", ["{}", "[1, 2]", "7", '{"jsonrpc": "2.0", "id": 1, "method": 5}'])
def test_json_that_is_no_message_is_answered_as_an_invalid_request(line: str) -> None:
    reply = error_reply(_problem(line))
    assert (reply.id, reply.error.code) == (None, -32600)


async def test_unreadable_lines_are_answered_in_order_and_messages_passed_on() -> None:
    reads_in, reads = anyio.create_memory_object_stream[SessionMessage | Exception](8)
    writes, writes_out = anyio.create_memory_object_stream[SessionMessage](8)
    ping = SessionMessage(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=3, method="ping", params=None))
    with reads_in, writes, writes_out:
        for item in (_problem("garbage"), _problem("{}"), ping):
            reads_in.send_nowait(item)
        reads_in.close()
        async with AnsweredReads(reads, writes) as answered:
            assert answered.last_context is None
            assert [item async for item in answered] == [ping]
        sent = [writes_out.receive_nowait().message for _ in range(2)]
        codes = [(m.id, m.error.code) for m in sent if isinstance(m, mcp_types.JSONRPCError)]
        assert codes == [(None, -32700), (None, -32600)]
        with pytest.raises(anyio.WouldBlock):
            writes_out.receive_nowait()
