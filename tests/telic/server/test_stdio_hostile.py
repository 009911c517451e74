"""The hostile-input loop over a real ``telic serve`` (stdio): raw lines that are no JSON-RPC
message each get exactly one error reply, the server keeps answering, and exits cleanly."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from telic.demo import DemoRepository, stdio_parameters
from tests.telic.server.raw import INITIALIZED, initialize, spawn

INITIALIZE = initialize("init", client="hostile")

BAD_IDS: list[bytes] = [
    b"null",
    b"true",
    b"false",
    b"1.5",
    b"1.0",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"[1]",
    b'{"n": 1}',
]

HOSTILE: list[tuple[bytes, int]] = [
    (b"garbage", -32700),
    (b"", -32700),
    (b"   ", -32700),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": "\\ud800"}}', -32700),
    (b"[" * 10_000 + b"]" * 10_000, -32700),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": ' + b"[" * 10_000 + b"}", -32700),
    (b"\xff\xfe\xfd not utf-8", -32700),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "ping"', -32700),
    (b"NaN", -32600),  # the SDK's parser reads NaN as a number: JSON, but no message
    (b"{}", -32600),
    (b"[]", -32600),
    (b"42", -32600),
    (b'"a string"', -32600),
    (b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 9, "method": 5}', -32600),
    # A request whose id is no string and no integer (issue 28): the SDK would read each as a
    # notification and never answer; JSON-RPC 2.0 wants an Invalid Request error.
    *(
        (b'{"jsonrpc": "2.0", "id": ' + bad + b', "method": "' + method + b'"}', -32600)
        for bad in BAD_IDS
        for method in (b"ping", b"tools/list")
    ),
    (b'{"jsonrpc": "2.0", "\\u0069d": null, "method": "ping"}', -32600),  # "id", escaped
    (b'{"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": {"name": "x"}}', -32600),
]


def _random_lines(count: int) -> list[bytes]:
    """Seeded random printable garbage: never valid JSON-RPC, never a newline."""
    chooser = random.Random(18)
    alphabet = b'{}[]":,0123456789abcdefnulltrue \\\t\x00\x7f\xc3\xa9'
    return [
        bytes(chooser.choice(alphabet) for _ in range(chooser.randint(1, 80))) for _ in range(count)
    ]


def _ping(index: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": f"ping-{index}", "method": "ping"}).encode()


def _replies(process: subprocess.Popen[bytes], count: int, seconds: float) -> list[dict[str, Any]]:
    """Read ``count`` reply lines, failing (never hanging) after ``seconds``."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + seconds
    buffer, replies = b"", []
    while len(replies) < count:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        assert ready, f"only {len(replies)} of {count} replies came"
        chunk = os.read(fd, 65536)
        assert chunk, f"the server closed stdout after {len(replies)} of {count} replies"
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        replies += [json.loads(line) for line in lines]
    return replies


def test_every_hostile_line_gets_one_error_reply_and_the_server_keeps_serving(
    repo: DemoRepository, state: Path
) -> None:
    lines = [line for line, _ in HOSTILE] + _random_lines(200)
    wire = [json.dumps(INITIALIZE).encode()]
    wire += [json.dumps(INITIALIZED).encode()]
    for index, line in enumerate(lines):
        wire += [line, _ping(index)]
    params = stdio_parameters(repo.root, state)
    with spawn(params) as process:
        assert process.stdin is not None
        feeder = threading.Thread(
            target=lambda: (process.stdin.write(b"\n".join(wire) + b"\n"), process.stdin.flush())  # type: ignore[union-attr]
        )
        feeder.start()
        replies = _replies(process, 1 + 2 * len(lines), 120)
        feeder.join()
        _, err = process.communicate(timeout=30)  # end of input: a clean exit
    assert process.returncode == 0, err
    errors = [r for r in replies if r["id"] is None]
    answers = {r["id"]: r for r in replies if r["id"] is not None}
    assert answers.pop("init")["result"]["serverInfo"]["name"] == "telic"
    pongs = answers
    # The read loop answers a refused line at once, a ping from a task: order may differ.
    assert len(errors) == len(lines)
    assert set(pongs) == {f"ping-{index}" for index in range(len(lines))}
    assert all(p["result"] == {} for p in pongs.values())
    # The read loop answers refused lines itself, one after another: in the order they came.
    codes = [e["error"]["code"] for e in errors]
    assert codes[: len(HOSTILE)] == [code for _, code in HOSTILE]
    assert set(codes[len(HOSTILE) :]) <= {-32700, -32600}


def test_a_blank_line_is_answered_as_a_parse_error(repo: DemoRepository, state: Path) -> None:
    params = stdio_parameters(repo.root, state)
    with spawn(params) as process:
        assert process.stdin is not None
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n\n")
        process.stdin.flush()
        replies = _replies(process, 2, 60)
        process.communicate(timeout=30)
    parse_error = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    assert parse_error in replies
    assert [r["id"] for r in replies if r != parse_error] == ["init"]
