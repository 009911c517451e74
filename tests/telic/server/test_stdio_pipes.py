"""stdio served by the event loop itself: lines in, whole messages out, the wire given back."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from telic.server._stdio import PipeLines, PipeWriter, claimed, is_stream

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
