"""``telic hook <host>`` decides or denies, always: every input it cannot read, any depth, any size,
a resident server that hangs or breaks off, an internal error — each is a deny in the host's own
answer shape with exit 0 while a run is live, and changes nothing in the ledger."""

from __future__ import annotations

import io
import json
import os
import queue
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from telic.hosts import HOOK_HOSTS, host_hook
from telic.hosts._kits import HOOK_TIMEOUT_SECONDS
from telic.ledger import Ledger
from telic.resident._places import places_for, private_dir
from telic.resident._shim import (
    HOOK_DEADLINE,
    HOOK_WAIT,
    MAX_HOOK_EVENT,
    Deadline,
    ensure_server,
    parse_serve,
    run_hook,
)
from tests.telic.hosts.test_dialects import DENY, claude, codex, cursor, verdict_of, vscode
from tests.telic.hosts.test_hook import executing_fix, project
from tests.telic.resident.kit import fake_server, stop_servers

pytestmark = pytest.mark.anyio

_DEEP = "@deep@"


def _event(host: str, repo: Path, value: object) -> dict[str, Any]:
    """A shell call in ``host``'s own event, carrying ``value`` in its tool input."""
    if host == "codex":
        return codex("Bash", command="ls", extra=value)
    if host == "cursor":
        return cursor("beforeShellExecution", repo, command="ls", extra=value)
    if host == "vscode":
        return vscode("runInTerminal", command="ls", extra=value)
    return claude("Bash", command="ls", extra=value)


def _nested(host: str, repo: Path, depth: int) -> bytes:
    text = json.dumps(_event(host, repo, _DEEP))
    return text.replace(f'"{_DEEP}"', "[" * depth + "]" * depth).encode()


def unreadable(host: str, repo: Path) -> dict[str, bytes]:
    """Every kind of stdin the hook cannot read, as ``host`` would frame it."""
    whole = json.dumps(_event(host, repo, "x")).encode()
    return {
        "nested 1,000 levels": _nested(host, repo, 1_000),
        "nested 100,000 levels": _nested(host, repo, 100_000),
        "huge": whole[:-2] + b' "' + b"x" * (MAX_HOOK_EVENT + 1),
        "not UTF-8": whole.replace(b'"ls"', b'"l\xff\xfes"'),
        "truncated": whole[: len(whole) // 2],
        "not an object": b"[" + whole + b"]",
    }


def _shape(host: str) -> str:
    return "permission" if host == "cursor" else "PreToolUse"


async def _trace_length(ledger: Ledger, run_id: str) -> int:
    return len((await ledger.page_trace(run_id, 0, 500)).events)


def test_the_hook_waits_for_its_server_far_less_than_the_kits_give_it() -> None:
    assert HOOK_WAIT * 2 < HOOK_TIMEOUT_SECONDS  # it answers its deny well before it is killed


@pytest.mark.parametrize("host", HOOK_HOSTS)
async def test_unreadable_input_of_every_kind_is_a_deny_in_process(
    host: str, tmp_path: Path
) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}  # no resident server listens there
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        env["TELIC_STATE_DIR"] = str(state)
        before = await _trace_length(ledger, flow.b.run_id)
        outputs = {}
        for kind, raw in unreadable(host, repo).items():
            outputs[kind] = await anyio.to_thread.run_sync(run_hook, host, raw, str(repo), env)
        after = await _trace_length(ledger, flow.b.run_id)
    for kind, output in outputs.items():
        assert verdict_of(host, _shape(host), output) == DENY, kind
        assert "hook.input" in (output or ""), kind
    assert after == before  # a refusal before any decision records nothing


async def test_unreadable_input_of_every_kind_is_a_deny_through_the_resident_server(
    tmp_path: Path,
) -> None:
    runtime = tmp_path / "rt"
    async with project(tmp_path) as (service, ledger, repo, state):
        flow = await executing_fix(service)
        env = {**os.environ, "TELIC_STATE_DIR": str(state), "TELIC_RUNTIME_DIR": str(runtime)}
        options = parse_serve(["--resident"], str(repo), env)
        await anyio.to_thread.run_sync(lambda: ensure_server(options, env).close())
        before = await _trace_length(ledger, flow.b.run_id)
        try:
            answers = []
            for host in HOOK_HOSTS:
                for kind, raw in unreadable(host, repo).items():
                    via = await anyio.to_thread.run_sync(run_hook, host, raw, str(repo), env)
                    here = await anyio.to_thread.run_sync(
                        lambda raw=raw, host=host: host_hook(
                            host, raw, repository_root=str(repo), environ=env
                        )
                    )
                    answers.append((host, kind, via, here))
        finally:
            stop_servers(runtime)
        after = await _trace_length(ledger, flow.b.run_id)
    for host, kind, via, here in answers:
        assert via == here, (host, kind)  # the server's answer is the in-process one
        assert verdict_of(host, _shape(host), via) == DENY, (host, kind)
    assert after == before


@pytest.mark.parametrize("host", HOOK_HOSTS)
async def test_with_no_live_run_unreadable_input_says_nothing(host: str, tmp_path: Path) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    async with project(tmp_path) as (_, _, repo, state):
        env["TELIC_STATE_DIR"] = str(state)
        outputs = [
            await anyio.to_thread.run_sync(run_hook, host, raw, str(repo), env)
            for raw in unreadable(host, repo).values()
        ]
    # ``--repository-root`` (every kit passes it) names the repository without the event, so the
    # hook knows no run is live there: Telic governs nothing, the host proceeds.
    assert outputs == [None] * len(outputs)


def _valid(host: str, repo: Path) -> bytes:
    return json.dumps(_event(host, repo, "x")).encode()


def _deny_reason(host: str, output: str | None) -> str:
    assert verdict_of(host, _shape(host), output) == DENY
    return output or ""


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_a_resident_server_that_accepts_and_never_answers_is_a_deny(
    host: str, tmp_path: Path
) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    places = places_for(os.path.realpath(tmp_path), "", env)
    private_dir(places.directory)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(places.hook_socket)
        listener.listen(1)  # the kernel completes the connection; nobody ever reads or answers
        output = run_hook(host, _valid(host, tmp_path), str(tmp_path), env, wait=0.2)
    assert "no answer within 0.2 s" in _deny_reason(host, output)


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_a_resident_server_that_closes_mid_answer_is_a_deny(host: str, tmp_path: Path) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    places = places_for(os.path.realpath(tmp_path), "", env)
    cut = json.dumps({"output": '{"hookSpecificOutput": {"permissionDecision": "allow"}}'})
    with fake_server(places.hook_socket, lambda c: c.sendall(cut[: len(cut) // 2].encode())):
        output = run_hook(host, _valid(host, tmp_path), str(tmp_path), env)
    reason = _deny_reason(host, output)
    assert "the resident server for" in reason
    assert "JSONDecodeError" in reason


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_an_internal_error_of_the_hook_client_is_a_deny(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> str:
        raise RuntimeError("the client broke")

    monkeypatch.setattr("telic.resident._shim.hook_root", broken)
    output = run_hook(host, _valid(host, tmp_path), str(tmp_path), {})
    assert "RuntimeError: the client broke" in _deny_reason(host, output)


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_an_internal_error_of_the_in_process_decision_is_a_deny(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> object:
        raise RuntimeError("the decision broke")

    monkeypatch.setattr("telic.hosts._hook.read_event", broken)  # outside its own boundary
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt"), "TELIC_STATE_DIR": str(tmp_path / "s")}
    output = run_hook(host, _valid(host, tmp_path), str(tmp_path), env)
    assert "RuntimeError: the decision broke" in _deny_reason(host, output)


def test_a_deny_that_cannot_be_written_exits_2_with_the_reason_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from telic.cli._entry import main

    def broken(*_: object) -> str:
        raise RuntimeError("nothing works")

    monkeypatch.setattr("telic.resident._shim.hook_root", broken)
    monkeypatch.setattr("telic.resident._shim._deny", broken)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    code = main(["--repository-root", str(tmp_path), "hook", "claude-code"])
    captured = capsys.readouterr()
    assert code == 2  # the exit code Claude Code, Codex and Cursor document as blocking
    assert captured.out == ""
    assert "hook.failed" in captured.err
    assert "nothing works" in captured.err


async def test_the_console_script_denies_100_000_levels_of_nesting_with_exit_0(
    tmp_path: Path,
) -> None:
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        env = {
            **os.environ,
            "TELIC_STATE_DIR": str(state),
            "TELIC_RUNTIME_DIR": str(tmp_path / "rt"),
        }

        def run() -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(
                [sys.executable, "-m", "telic", "--repository-root", str(repo), "hook"],
                input=_nested("claude-code", repo, 100_000),
                capture_output=True,
                env=env,
                check=False,
                timeout=60,
            )

        done = await anyio.to_thread.run_sync(run)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""  # no traceback
    assert verdict_of("claude-code", "PreToolUse", done.stdout.decode()) == DENY


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_a_decision_that_hangs_is_answered_by_the_deadline_with_a_deny_and_exit_0(
    host: str, tmp_path: Path
) -> None:
    reading, writing = os.pipe()
    exits: queue.Queue[int] = queue.Queue()
    deadline = Deadline(host, _valid(host, tmp_path), seconds=0.05, out=writing, exit=exits.put)
    code = exits.get(timeout=30)  # the main thread never answered: the watchdog did
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        output = answer.read().decode()
    assert code == 0
    assert "within 0.05 s" in _deny_reason(host, output.strip())
    assert deadline.claim() is False  # so the main thread writes nothing after it


def test_a_hook_that_answers_in_time_stops_its_deadline() -> None:
    exits: queue.Queue[int] = queue.Queue()
    deadline = Deadline("claude-code", b"{}", seconds=HOOK_DEADLINE, exit=exits.put)
    assert deadline.claim() is True  # the main thread answers; the watchdog ends unheard
    assert exits.empty()


def test_the_deadline_falls_between_the_hooks_own_wait_and_the_kits_timeout() -> None:
    assert HOOK_WAIT < HOOK_DEADLINE < HOOK_TIMEOUT_SECONDS
