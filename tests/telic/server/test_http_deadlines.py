"""Over a real ``telic serve --http``: a request must arrive within the read deadline, and a
client that leaves mid-body costs one calm line, never a traceback.

The server runs with ``TELIC_HTTP_READ_TIMEOUT=1``. Nothing here sleeps: each client waits on
its socket for what the server does when its own deadline passes (a ``408`` and the close),
and a client that trickles sends its next byte only when the server has said nothing for a
moment, so the deadline is shown to run from the start of the headers (or of the body), not
from the last byte.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from telic.demo import DemoRepository, find_demo_repo, free_port
from tests.telic.server.raw import initialize

TIMEOUT = 1.0
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\n"


@dataclass
class Served:
    port: int
    process: subprocess.Popen[bytes]
    log: list[bytes] = field(default_factory=list)

    def head(self, length: int) -> bytes:
        return (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {length}\r\n\r\n"
        ).encode()

    def connect(self) -> socket.socket:
        client = socket.create_connection(("127.0.0.1", self.port))
        client.settimeout(10 * TIMEOUT)  # far past the deadline: a hang fails the test
        return client

    def stderr(self) -> str:
        return b"".join(self.log).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("deadlines")
    repo = DemoRepository.create(find_demo_repo(), base / "repo")
    port = free_port()
    env = {
        **os.environ,
        "TELIC_STATE_DIR": str(base / "state"),
        "TELIC_REPOSITORY_ROOT": str(repo.root),
        "TELIC_HTTP_READ_TIMEOUT": str(TIMEOUT),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "telic", "serve", "--http", f"127.0.0.1:{port}"],
        env=env,
        cwd=repo.root,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    served = Served(port, process)
    ready = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            served.log.append(line)
            if b"Telic MCP ready" in line:
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert ready.wait(30), "telic serve --http did not start"
    try:
        yield served
    finally:
        process.terminate()
        process.wait(30)
        reader.join(30)
        process.stderr.close()


def _answer(client: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and how long that took."""
    started, data = time.monotonic(), b""
    while chunk := client.recv(4096):
        data += chunk
    return data, time.monotonic() - started


def _trickle(client: socket.socket, data: bytes) -> bytes:
    """Send ``data`` a byte at a time, each when the server has been quiet for a tenth of the
    deadline, until the server answers or closes; return its first bytes."""
    for byte in data:
        client.sendall(bytes([byte]))
        if select.select([client], [], [], TIMEOUT / 10)[0]:
            return client.recv(4096)
    return client.recv(4096)


def test_a_connection_that_sends_nothing_is_closed_at_the_deadline(served: Served) -> None:
    with served.connect() as client:
        data, took = _answer(client)
    assert data == b""  # an idle connection is closed, as a keep-alive one is
    assert TIMEOUT * 0.8 <= took < TIMEOUT * 5


def test_headers_that_stop_halfway_get_408_and_the_close(served: Served) -> None:
    with served.connect() as client:
        client.sendall(served.head(10)[:25])
        data, took = _answer(client)
    assert data.startswith(TIMED_OUT)
    assert took < TIMEOUT * 5


def test_headers_sent_a_byte_at_a_time_do_not_push_the_deadline_back(served: Served) -> None:
    with served.connect() as client:
        started = time.monotonic()
        first = _trickle(client, served.head(10) * 4)  # far more bytes than the deadline allows
        took = time.monotonic() - started
    assert first.startswith(TIMED_OUT)
    assert took < TIMEOUT * 5


def test_a_body_that_stops_halfway_gets_408_and_the_close(served: Served) -> None:
    with served.connect() as client:
        client.sendall(served.head(1000) + b'{"jsonrpc": "2.0", ')
        data, took = _answer(client)
    assert data.startswith(TIMED_OUT)
    assert took < TIMEOUT * 5


def test_a_body_sent_a_byte_at_a_time_does_not_push_the_deadline_back(served: Served) -> None:
    with served.connect() as client:
        client.sendall(served.head(4000))
        started = time.monotonic()
        first = _trickle(client, b" " * 4000)
        took = time.monotonic() - started
    assert first.startswith(TIMED_OUT)
    assert took < TIMEOUT * 5


def _initialize(served: Served, connection: http.client.HTTPConnection, name: str) -> str:
    body = json.dumps(initialize(client=name)).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    connection.request("POST", "/mcp", body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    assert response.status == 200, text
    return text


def test_requests_that_arrive_in_time_are_answered_on_one_kept_connection(
    served: Served,
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10 * TIMEOUT)
    try:
        for number in range(2):  # the second on the same connection, after the first answer
            assert '"serverInfo"' in _initialize(served, connection, f"in-time-{number}")
    finally:
        connection.close()


def test_a_client_that_leaves_mid_body_costs_no_traceback(served: Served) -> None:
    for _ in range(3):
        with served.connect() as client:
            client.sendall(served.head(1000) + b'{"jsonrpc": "2.0", "id": 1, ')
    # A request after them is answered: the server read the three departures first.
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10 * TIMEOUT)
    try:
        assert '"serverInfo"' in _initialize(served, connection, "after-the-departures")
    finally:
        connection.close()
    log = served.stderr()
    assert "Traceback" not in log
    assert "ClientDisconnect" not in log
    assert "Error handling POST request" not in log
