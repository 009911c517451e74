"""Helpers of the resident-server tests: real shims, real servers, waits on real conditions.

No sleeps: a server's exit is awaited on a pidfd (readable once the process is gone), a
shim's answers on its pipes, each with a deadline that fails the test with a message.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from telic.resident._places import private_dir
from tests.telic.server.raw import initialize

__all__ = [
    "INITIALIZE",
    "Shim",
    "alive",
    "fake_server",
    "private_runtime",
    "server_pids",
    "stop_servers",
    "wait_exit",
]

INITIALIZE = initialize(client="resident-test")
_PID = re.compile(r"^Telic MCP resident for .* \(pid (\d+)\)$", re.MULTILINE)


def server_pids(runtime: Path) -> list[int]:
    """Every resident server that announced itself in a log under ``runtime``."""
    pids: list[int] = []
    for log in sorted(runtime.glob("*.log")):
        pids += [int(p) for p in _PID.findall(log.read_text(encoding="utf-8"))]
    return pids


@contextmanager
def private_runtime() -> Iterator[Path]:
    """A runtime directory short enough for socket paths; its servers are stopped afterwards."""
    path = Path(tempfile.mkdtemp(prefix="tr-"))
    try:
        yield path / "rt"
    finally:
        if (path / "rt").is_dir():
            stop_servers(path / "rt")
        shutil.rmtree(path, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_exit(pid: int, timeout: float = 30.0) -> None:
    """Wait until ``pid`` has exited, at most ``timeout`` seconds (a failed test otherwise)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if not select.select([handle], [], [], timeout)[0]:
            raise AssertionError(f"process {pid} was still running after {timeout:g} s")
    finally:
        os.close(handle)


def stop_servers(runtime: Path) -> None:
    """SIGTERM every resident server started under ``runtime`` and wait for each to exit."""
    for pid in server_pids(runtime):
        if alive(pid):
            os.kill(pid, signal.SIGTERM)
            wait_exit(pid)


class Shim:
    """One ``telic serve --resident`` process, spoken to line by line as a host would."""

    def __init__(
        self, repo: Path, env: Mapping[str, str], args: Sequence[str] = ("--resident",)
    ) -> None:
        command = [sys.executable, "-m", "telic", "--repository-root", str(repo), "serve"]
        self.process = subprocess.Popen(
            [*command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
        )
        self._pending = b""
        self._stderr: str | None = None

    def send(self, line: bytes | dict[str, Any]) -> None:
        """Write one line (a message, or raw bytes) to the shim's stdin."""
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next message on the shim's stdout, within ``timeout`` seconds."""
        message: dict[str, Any] = json.loads(self.receive_line(timeout))
        return message

    def receive_line(self, timeout: float = 60.0) -> bytes:
        """The next line on the shim's stdout, without its newline, as the bytes it wrote."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            if not select.select([fd], [], [], timeout)[0]:
                raise AssertionError(f"no message from the shim within {timeout:g} s")
            chunk = os.read(fd, 65_536)
            if not chunk:
                code = self.wait()
                raise AssertionError(f"the shim closed stdout (exit {code}): {self.stderr()}")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line

    def initialize(self) -> dict[str, Any]:
        """The MCP handshake; returns the initialize result."""
        self.send(INITIALIZE)
        answer = self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self, timeout: float = 30.0) -> int:
        """Close stdin (the host going away) and return the exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> int:
        """The exit code, within ``timeout`` seconds; the pipes are closed afterwards."""
        code = self.process.wait(timeout)
        if self._stderr is None:
            assert self.process.stderr is not None
            self._stderr = self.process.stderr.read().decode("utf-8", "replace")
            for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()
        return code

    def stderr(self) -> str:
        """What the shim wrote on stderr (once ``wait`` or ``close`` returned)."""
        assert self._stderr is not None, "wait for the shim first"
        return self._stderr


@contextmanager
def fake_server(path: str, reply: Callable[[socket.socket], None]) -> Iterator[None]:
    """A listener at ``path`` that answers one connection with ``reply``."""
    private_dir(os.path.dirname(path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            while connection.recv(65_536):
                pass
            reply(connection)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield
    finally:
        thread.join(30)
        listener.close()
