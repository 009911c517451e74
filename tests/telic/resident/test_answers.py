"""A host never waits for Python's imports: the shim answers the handshake and the listings
from the answers its server wrote, byte for byte the server's own, and only tool calls wait."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from telic.demo import DemoRepository
from telic.resident._places import Places, places_for
from telic.resident._shim import (
    ANSWERED_METHODS,
    ANSWERS_FORMAT,
    _Answering,
    answers_path,
    read_answers,
)
from tests.telic.resident.kit import Shim, server_pids, wait_exit
from tests.telic.server.raw import initialize

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LISTINGS = [
    {"jsonrpc": "2.0", "id": index + 2, "method": method}
    for index, method in enumerate(ANSWERED_METHODS[1:])
]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "answers-test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN = [  # what the SDK's own client sends first (``mcp.Client``, mode "auto")
    {"jsonrpc": "2.0", "id": index + 20, "method": method, "params": {"_meta": MODERN_META}}
    for index, method in enumerate(("server/discover", *ANSWERED_METHODS[1:]))
]
CALL = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {"name": "telic_list_runs", "arguments": {}},
}


def _places(repo: DemoRepository, env: dict[str, str]) -> Places:
    return places_for(os.path.realpath(repo.root), "once", env)


def _handshake_and_listings(shim: Shim) -> list[bytes]:
    """The raw lines the shim writes for ``initialize`` and each listing."""
    shim.send(initialize(1, client="answers-test"))
    lines = [shim.receive_line()]
    shim.send(INITIALIZED)
    for request in LISTINGS:
        shim.send(request)
        lines.append(shim.receive_line())
    return lines


@contextmanager
def _start_lock(places: Places) -> Iterator[None]:
    """Hold the lock a shim takes to start a server: no server can start while it is held."""
    with open(places.lock, "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield


def _without_handshake(shim: Shim) -> list[bytes]:
    """The raw lines the shim writes for each request of ``MODERN``."""
    lines = []
    for request in MODERN:
        shim.send(request)
        lines.append(shim.receive_line())
    return lines


def _servers_own_answers(
    repo: DemoRepository, env: dict[str, str], runtime: Path
) -> tuple[list[bytes], list[bytes]]:
    """Sessions with no answers written yet (relayed as is: the server's own bytes), with and
    without a handshake; the server then goes idle and exits, which it does only once it has
    written its answers."""
    quick = {**env, "TELIC_RESIDENT_IDLE": "0.5"}
    places = _places(repo, quick)
    assert read_answers(places) is None
    shim, modern = Shim(repo.root, quick), Shim(repo.root, quick)
    own = _handshake_and_listings(shim), _without_handshake(modern)
    assert (shim.close(), modern.close()) == (0, 0)
    [pid] = server_pids(runtime)
    wait_exit(pid)
    assert not os.path.exists(places.socket)
    return own


def test_the_shim_answers_the_handshake_and_listings_with_the_servers_bytes_while_none_runs(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    own, _ = _servers_own_answers(repo, env, runtime)
    places = _places(repo, env)
    assert oct(os.stat(answers_path(places)).st_mode & 0o777) == "0o600"
    assert read_answers(places) is not None
    with _start_lock(places):  # the server cannot start: the answers come from the file
        shim = Shim(repo.root, env)
        assert _handshake_and_listings(shim) == own
        shim.send(CALL)  # waits for the server, which starts once the lock is free
    answer = shim.receive()
    assert answer["id"] == 9
    assert answer["result"]["isError"] is False
    shim.send({"jsonrpc": "2.0", "id": 10, "method": "ping"})
    assert shim.receive() == {"jsonrpc": "2.0", "id": 10, "result": {}}
    assert shim.close() == 0
    assert len(server_pids(runtime)) == 2  # the first one exited; the shim started another


def test_a_host_without_a_handshake_is_answered_too(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    """2026-07-28: no ``initialize``; each request carries its version in ``_meta``."""
    _, own = _servers_own_answers(repo, env, runtime)
    with _start_lock(_places(repo, env)):
        shim = Shim(repo.root, env)
        assert _without_handshake(shim) == own
        shim.send({**CALL, "params": {**CALL["params"], "_meta": MODERN_META}})
    answer = shim.receive()
    assert answer["id"] == 9
    assert answer["result"]["isError"] is False
    assert shim.close() == 0


def test_a_host_that_only_lists_is_answered_and_leaves_without_waiting(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    own, _ = _servers_own_answers(repo, env, runtime)
    with _start_lock(_places(repo, env)):
        shim = Shim(repo.root, env)
        assert _handshake_and_listings(shim) == own
        assert shim.close() == 0  # nothing waits for a server: no server was needed


def _write(places: Places, document: dict[str, Any]) -> None:
    Path(answers_path(places)).write_text(json.dumps(document), encoding="utf-8")


def _document(key: str, tools: str = '{"tools":[]}') -> dict[str, Any]:
    answers = dict.fromkeys(ANSWERED_METHODS, "{}")
    answers["tools/list"] = tools
    return {"format": ANSWERS_FORMAT, "key": key, "answers": {"2025-06-18": answers}}


def test_answers_of_another_key_are_never_served(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    """Another key is another version of the code or other settings: the shim relays to the
    server, as it did before there were answers."""
    places = _places(repo, env)
    os.makedirs(places.directory, mode=0o700)
    _write(places, _document("another-key"))
    shim = Shim(repo.root, env)
    shim.send(initialize(1, client="answers-test"))
    assert shim.receive()["result"]["serverInfo"]["name"] == "telic"
    shim.send(INITIALIZED)
    shim.send(LISTINGS[0])
    assert len(shim.receive()["result"]["tools"]) >= 9  # the server's, not the stale file's
    assert shim.close() == 0


@pytest.mark.parametrize(
    "document",
    [
        {**_document("K"), "format": ANSWERS_FORMAT + 1},
        _document("another-key"),
        {**_document("K"), "answers": {"2025-06-18": {"initialize": "{}"}}},
        {**_document("K"), "answers": {}},
        {**_document("K"), "answers": {"2025-06-18": dict.fromkeys(ANSWERED_METHODS, 1)}},
    ],
    ids=["format", "key", "a-method-missing", "no-version", "not-text"],
)
def test_answers_that_do_not_fit_are_not_read(tmp_path: Path, document: dict[str, Any]) -> None:
    places = Places(str(tmp_path), "K", "s", "h", "l", "g")
    assert read_answers(places) is None  # none written
    _write(places, _document("K"))
    assert read_answers(places) is not None
    _write(places, document)
    assert read_answers(places) is None
    Path(answers_path(places)).write_bytes(b'{"format": 1, "key": "K", "answers": ')
    assert read_answers(places) is None


def _answering() -> _Answering:
    return _Answering(_document("K", '{"tools":["é"]}')["answers"], stdout=-1)


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_only_an_answered_handshake_opens_the_listings() -> None:
    state = _answering()
    assert state.answer(_line(LISTINGS[0])) is None  # no handshake yet
    assert state.answer(_line(initialize(1, version="1999-01-01"))) is None  # a version not held
    assert state.answer(_line(initialize(7, version="2025-06-18"))) == (
        b'{"jsonrpc":"2.0","id":7,"result":{}}\n'
    )
    assert state.answer(_line({**LISTINGS[0], "id": "a\u00e9"})) == (
        '{"jsonrpc":"2.0","id":"a\u00e9","result":{"tools":["é"]}}\n'.encode()
    )


@pytest.mark.parametrize(
    "request_",
    [
        {**LISTINGS[0], "params": {"cursor": "2"}},
        {**LISTINGS[0], "id": 1.5},
        {**LISTINGS[0], "id": True},
        {**LISTINGS[0], "jsonrpc": "1.0"},
        {**LISTINGS[0], "params": {"_meta": {"progressToken": 1}}},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "telic"}},
        CALL,
    ],
    ids=["cursor", "float-id", "bool-id", "not-2.0", "progress", "prompts-get", "tools-call"],
)
def test_what_the_answers_do_not_hold_is_left_to_the_server(request_: dict[str, Any]) -> None:
    """And a stateless request of a version they hold only for a handshake, or with more
    ``_meta`` than a version and the client's name and capabilities."""
    state = _answering()
    stateless = {**LISTINGS[0], "params": {"_meta": MODERN_META}}
    assert state.answer(_line(stateless)) is None  # the answers hold 2025-06-18 only
    state = _answering()
    assert state.answer(_line(initialize(1, version="2025-06-18"))) is not None
    assert state.answer(_line(request_)) is None
    assert state.answer(b"not json\n") is None
