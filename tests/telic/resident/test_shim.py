"""``telic serve --resident`` as a host runs it: real shims, real servers, real Unix sockets."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from telic.demo import DemoRepository
from telic.resident._places import places_for
from telic.resident._shim import (
    ResidentError,
    ServeOptions,
    ensure_server,
    loads,
    parse_serve,
)
from tests.telic.resident.kit import (
    INITIALIZE,
    Shim,
    alive,
    server_pids,
    stop_servers,
    wait_exit,
)
from tests.telic.server.test_stdio_hostile import HOSTILE

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _options(repo: DemoRepository, env: dict[str, str]) -> ServeOptions:
    return parse_serve(["--resident"], str(repo.root), env)


def test_a_shim_starts_a_server_and_a_second_shim_attaches_to_the_same_one(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    first = Shim(repo.root, env)
    assert first.initialize()["result"]["serverInfo"]["name"] == "telic"
    second = Shim(repo.root, env)
    assert second.initialize()["result"]["serverInfo"]["name"] == "telic"
    second.send(LIST)
    assert len(second.receive()["result"]["tools"]) >= 9
    assert (first.close(), second.close()) == (0, 0)
    assert len(server_pids(runtime)) == 1


def test_two_shims_starting_at_once_make_one_server(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    shims = [Shim(repo.root, env) for _ in range(3)]
    for shim in shims:
        shim.send(INITIALIZE)
    answers = [shim.receive() for shim in shims]
    assert [a["result"]["serverInfo"]["name"] for a in answers] == ["telic"] * 3
    assert [shim.close() for shim in shims] == [0, 0, 0]
    assert len(server_pids(runtime)) == 1


def test_the_server_exits_after_the_idle_period_with_no_session(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    quick = {**env, "TELIC_RESIDENT_IDLE": "0.5"}
    shim = Shim(repo.root, quick)
    shim.initialize()
    [pid] = server_pids(runtime)
    assert alive(pid)  # a session is attached: no idle exit while it lasts
    assert shim.close() == 0
    wait_exit(pid)
    places = places_for(str(repo.root), "once", quick)
    assert not os.path.exists(places.socket)
    assert not os.path.exists(places.hook_socket)


def test_a_stale_socket_of_a_killed_server_is_replaced(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    starter = Shim(repo.root, env)
    starter.initialize()
    assert starter.close() == 0
    [old] = server_pids(runtime)
    os.kill(old, signal.SIGKILL)
    wait_exit(old)
    places = places_for(str(repo.root), "once", env)
    assert os.path.exists(places.socket)  # a killed server leaves its socket file behind
    shim = Shim(repo.root, env)
    assert shim.initialize()["result"]["serverInfo"]["name"] == "telic"
    assert shim.close() == 0
    pids = server_pids(runtime)
    assert len(pids) == 2
    assert alive(pids[1])


def test_a_crash_of_the_server_ends_the_attached_shim_with_one_line(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    shim = Shim(repo.root, env)
    shim.initialize()
    [pid] = server_pids(runtime)
    os.kill(pid, signal.SIGKILL)
    assert shim.wait() == 1
    said = shim.stderr().strip().splitlines()
    assert len(said) == 1
    assert said[0].startswith("telic: resident.ended: the resident server for ")


def test_other_code_never_attaches_to_an_old_server(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    options = _options(repo, env)
    with ensure_server(options, env, fingerprint="code-1"):
        pass
    with ensure_server(options, env, fingerprint="code-2"):
        pass
    with ensure_server(options, env, fingerprint="code-1"):
        pass
    assert len(server_pids(runtime)) == 2
    assert all(alive(pid) for pid in server_pids(runtime))


def test_a_runtime_dir_others_can_reach_is_refused_and_nothing_starts(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o755)
    shim = Shim(repo.root, env)
    assert shim.wait() == 1
    assert "resident.runtime_dir" in shim.stderr()
    assert "must be 0700" in shim.stderr()
    assert list(runtime.iterdir()) == []


@pytest.mark.parametrize("how", ["open to others", "a symlink"])
def test_a_default_runtime_dir_someone_else_made_first_does_not_keep_the_server_from_starting(
    repo: DemoRepository, runtime: Path, env: dict[str, str], how: str
) -> None:
    # What another local user can do to /tmp/telic-<uid>, done to $XDG_RUNTIME_DIR/telic.
    base = runtime.parent
    taken = base / "x" / "telic"
    taken.parent.mkdir(mode=0o700)
    if how == "a symlink":
        (base / "theirs").mkdir(mode=0o700)
        taken.symlink_to(base / "theirs")
    else:
        taken.mkdir()
        taken.chmod(0o755)
    home = base / "h"
    shim_env = {k: v for k, v in env.items() if k not in {"TELIC_RUNTIME_DIR", "XDG_CACHE_HOME"}}
    shim_env |= {"XDG_RUNTIME_DIR": str(taken.parent), "HOME": str(home)}
    fallback = home / ".cache" / "telic" / "run"
    try:
        shim = Shim(repo.root, shim_env)
        assert shim.initialize()["result"]["serverInfo"]["name"] == "telic"
        assert shim.close() == 0
        assert len(server_pids(fallback)) == 1
        assert fallback.stat().st_mode & 0o777 == 0o700
        assert list((base / "theirs").iterdir() if how == "a symlink" else taken.iterdir()) == []
    finally:
        stop_servers(fallback)


def test_a_shim_never_attaches_to_a_server_in_a_directory_others_can_reach(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    first = Shim(repo.root, env)
    assert first.initialize()["result"]["serverInfo"]["name"] == "telic"
    runtime.chmod(0o755)
    second = Shim(repo.root, env)
    assert second.wait() == 1
    assert "resident.runtime_dir" in second.stderr()
    runtime.chmod(0o700)
    assert first.close() == 0


def test_the_socket_and_its_files_are_private(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    shim = Shim(repo.root, env)
    shim.initialize()
    assert shim.close() == 0
    assert os.stat(runtime).st_mode & 0o777 == 0o700
    modes = {path.name: os.stat(path).st_mode & 0o777 for path in runtime.iterdir()}
    assert len(modes) == 4  # the socket, the hook socket, the lock and the log
    assert set(modes.values()) == {0o600}
    assert os.stat(runtime).st_uid == os.getuid()


@pytest.mark.parametrize(
    ("words", "rule"),
    [
        (["--resident", "--http", "127.0.0.1:1"], "serve.resident: --http cannot be combined"),
        (["--resident", "--schemas", "some"], "serve.schemas: --schemas: 'some' is not one of"),
        (["--resident", "--schemas"], "serve.arguments: --schemas needs a value"),
    ],
)
def test_bad_arguments_are_a_usage_error_naming_the_rule(
    words: list[str], rule: str, repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    shim = Shim(repo.root, env, args=words)
    assert shim.wait() == 2
    assert rule in shim.stderr()
    assert not runtime.exists()
    with pytest.raises(ResidentError, match=r"serve.repository_root"):
        parse_serve(["--resident"], str(repo.root / "missing"), env)


def test_hostile_lines_get_the_same_answers_as_from_telic_serve(
    repo: DemoRepository, env: dict[str, str]
) -> None:
    lines = [line for line, _ in HOSTILE]
    answers: dict[str, list[dict[str, object]]] = {}
    for name, args in (("resident", ("--resident",)), ("stdio", ())):
        shim = Shim(repo.root, env, args=args)
        shim.initialize()
        got = []
        for index, line in enumerate(lines):
            shim.send(line)
            got.append(shim.receive())
            shim.send({"jsonrpc": "2.0", "id": f"ping-{index}", "method": "ping"})
            got.append(shim.receive())
        assert shim.close() == 0
        answers[name] = got
    assert answers["resident"] == answers["stdio"]
    codes = [a["error"]["code"] for a in answers["resident"][::2]]  # type: ignore[index]
    assert codes == [code for _, code in HOSTILE]


def test_bytes_are_relayed_unchanged_both_ways(runtime: Path) -> None:
    """The relay alone, over a socket pair: what goes in comes out, in order, whole."""
    from telic.resident._shim import relay

    ours, theirs = socket.socketpair()
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    payload = bytes(range(256)) * 2048  # larger than every buffer on the way
    echoed = bytearray()

    def server() -> None:
        with theirs:
            while chunk := theirs.recv(65_536):
                theirs.sendall(chunk)

    def host() -> None:
        os.write(stdin_write, payload)
        os.close(stdin_write)

    def reader() -> None:
        while chunk := os.read(stdout_read, 65_536):
            echoed.extend(chunk)

    threads = [threading.Thread(target=f) for f in (server, host, reader)]
    for thread in threads:
        thread.start()
    assert relay(ours, stdin_read, stdout_write) is True
    os.close(stdout_write)
    for thread in threads:
        thread.join(30)
    os.close(stdin_read)
    os.close(stdout_read)
    ours.close()
    assert bytes(echoed) == payload


def test_telic_version_prints_the_version() -> None:
    version = subprocess.run(
        [sys.executable, "-m", "telic", "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("telic ")


def test_a_backend_that_cannot_open_fails_the_start_with_its_one_line(
    repo: DemoRepository, runtime: Path, env: dict[str, str]
) -> None:
    inside = {**env, "TELIC_STATE_DIR": str(repo.root / "state")}  # refused: inside the repo
    shim = Shim(repo.root, inside)
    assert shim.wait() == 1
    said = shim.stderr().strip().splitlines()
    assert len(said) == 1
    assert said[0].startswith("telic: resident.start: ")
    assert said[0].endswith("(context_security)")
    # It announced itself once it listened (the shim attached then), and has exited since.
    for pid in server_pids(runtime):
        wait_exit(pid)
    assert list(runtime.glob("*.sock")) == []


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _json_loads(data: bytes) -> tuple[str, object]:
    try:
        return "value", json.loads(data)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        return "refused", None


def _shim_loads(data: bytes) -> tuple[str, object]:
    try:
        return "value", loads(data)
    except ValueError:
        return "refused", None


@given(JSON_VALUES, st.sampled_from(["", " ", "\n\t ", "\r\n"]), st.booleans(), st.booleans())
def test_the_shim_reads_every_json_document_as_json_loads_does(
    value: object, space: str, ascii_only: bool, bom: bool
) -> None:
    text = space + json.dumps(value, ensure_ascii=ascii_only) + space
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
    assert _shim_loads(data) == _json_loads(data) == ("value", value)


@given(st.binary(max_size=40))
def test_the_shim_refuses_exactly_the_bytes_json_loads_refuses(data: bytes) -> None:
    assert _shim_loads(data) == _json_loads(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"{",
        b'{"a": ',
        b"[1] [2]",
        b"nul",
        b'"\xff"',
        b"NaN",
        b"-Infinity",
        b'"\\ud800"',
    ],
)
def test_the_shim_agrees_with_json_loads_on_truncated_extra_and_odd_documents(data: bytes) -> None:
    shim, reference = _shim_loads(data), _json_loads(data)
    assert shim[0] == reference[0]
    assert repr(shim[1]) == repr(reference[1])  # NaN is not equal to itself


def test_utf_16_documents_are_read_as_json_loads_reads_them() -> None:
    data = json.dumps({"cwd": "/r\u00e9po"}).encode("utf-16")
    assert loads(data) == {"cwd": "/r\u00e9po"}


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_nesting_deeper_than_json_loads_reads_is_refused_as_not_json(depth: int) -> None:
    data = b'{"tool_input": ' + b"[" * depth + b"]" * depth + b"}"
    with pytest.raises(RecursionError):
        json.loads(data)  # what the hook crashed on (exit 1: a host lets the call through)
    with pytest.raises(ValueError, match="nested too deeply"):
        loads(data)
