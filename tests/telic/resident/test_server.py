"""The resident server: MCP sessions with the wire of ``telic serve``, hook decisions with the
in-process hook's answers, and a deny whenever an attached server fails to answer."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from telic.demo import DemoRepository, TelicTools, drive_mode, stdio_parameters
from telic.hosts import host_hook
from telic.resident._places import places_for, private_dir
from telic.resident._shim import ask_hook, ensure_server, parse_serve
from tests.telic.hosts.test_hook import event, executing_fix, project
from tests.telic.resident.kit import fake_server, server_pids, stop_servers
from tests.telic.server.test_stdio import REQUEST, SNAPSHOT, _listing
from tests.telic.server.wire import WireHost

pytestmark = pytest.mark.anyio


def _resident(repo: Path, state: Path, runtime: Path) -> object:
    return stdio_parameters(
        repo, state, env={"TELIC_RUNTIME_DIR": str(runtime)}, serve_args=["--resident"]
    )


@pytest.mark.parametrize("mode", ["report_only", "analyze_and_fix"])
async def test_a_full_run_through_a_resident_session_has_the_wire_of_telic_serve(
    mode: str, repo: DemoRepository, state: Path, runtime: Path
) -> None:
    with anyio.fail_after(180):
        async with Client(_resident(repo.root, state, runtime)) as client:  # type: ignore[arg-type]
            listing = _listing(await client.list_tools())
            tools = WireHost(client)  # checks every result against Telic 1.0's shapes
            driver = await drive_mode(tools, mode, repo, request=REQUEST, goal="Fix paginate")
            await tools.read_path(driver.run_id, REQUEST, mode)
            verified = await tools.call("telic_verify_run", run_id=driver.run_id)
    assert listing == json.loads(SNAPSHOT.read_text())
    assert tools.problems == []
    assert tools.checked  # the shapes were compared, result by result
    assert driver.action["status"] == "completed"
    assert verified["intact"] is True
    assert len(server_pids(runtime)) == 1
    if mode == "analyze_and_fix":
        assert repo.run_tests()[0] == 0


async def test_one_server_points_each_session_at_schemas_its_drafts_replace(
    repo: DemoRepository, state: Path, runtime: Path
) -> None:
    firsts = []
    with anyio.fail_after(120):
        for _ in range(2):
            async with Client(_resident(repo.root, state, runtime)) as client:  # type: ignore[arg-type]
                tools = TelicTools(client)
                started = await tools.call(
                    "telic_start_run", original_request=REQUEST, mode="analyze_only"
                )
                again = await tools.call("telic_get_next_action", run_id=started["run"]["runId"])
                grounded = await tools.call(
                    "telic_ground_context",
                    run_id=started["run"]["runId"],
                    action_id=started["nextAction"]["id"],
                    expected_run_version=1,
                )
                firsts.append((started["nextAction"], again["nextAction"], grounded))
    assert len(server_pids(runtime)) == 1  # both sessions were served by one process
    reference = {"$ref": "telic://schemas/ClarificationRequest"}
    for first, later, grounded in firsts:
        # Grounding is Telic's step: each session is pointed at the clarification's schema,
        # whose draft (under `instead`) comes with the framing result, beside the ProblemFrame
        # draft that replaces that type's text. (Which types a session was sent is kept per
        # session: tests/telic/server/test_app.py.)
        assert first["additionalOutputSchemas"]["ClarificationRequest"] == reference
        assert later["additionalOutputSchemas"]["ClarificationRequest"] == reference
        assert grounded["draft"]["type"] == "ProblemFrame"
        assert [d["type"] for d in grounded["draft"]["instead"]] == ["ClarificationRequest"]
        assert grounded["nextAction"]["requiredOutputSchema"] == {
            "$ref": "telic://schemas/ProblemFrame"
        }


async def test_hook_decisions_through_the_resident_server_equal_the_in_process_ones(
    tmp_path: Path,
) -> None:
    runtime = tmp_path / "rt"
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        env = {**os.environ, "TELIC_STATE_DIR": str(state), "TELIC_RUNTIME_DIR": str(runtime)}
        options = parse_serve(["--resident"], str(repo), env)
        await anyio.to_thread.run_sync(lambda: ensure_server(options, env).close())
        try:
            events = [
                event("Write", file_path=f"{repo}/src/retry.py"),
                event("Edit", file_path=f"{repo}/README.md"),
                event("Bash", command="rm -rf /"),
                event("NoSuchTool"),
                b"not json",
            ]
            verdicts = []
            for raw in events:
                via = await anyio.to_thread.run_sync(ask_hook, raw, str(repo), env)
                here = await anyio.to_thread.run_sync(
                    lambda raw=raw: host_hook(
                        "claude-code",
                        raw,
                        repository_root=str(repo),
                        environ={"TELIC_STATE_DIR": str(state)},
                    )
                )
                assert via is not None, "the resident server did not answer"
                assert via.output is not None
                assert via.output == here
                verdicts.append(json.loads(here)["hookSpecificOutput"]["permissionDecision"])
        finally:
            stop_servers(runtime)
    assert verdicts[:2] == ["allow", "deny"]  # inside the node's scope, then outside it
    assert verdicts[3:] == ["deny", "deny"]  # an unmapped tool, unreadable input: fail closed


def test_with_no_resident_server_the_hook_decides_in_process(tmp_path: Path) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    assert ask_hook(event("Write", file_path="/x"), str(tmp_path), env) is None


def test_the_hook_never_asks_a_socket_in_a_directory_others_can_reach(tmp_path: Path) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    places = places_for(str(tmp_path), "", env)
    private_dir(places.directory)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(places.hook_socket)
        listener.listen(1)
        os.chmod(places.directory, 0o755)  # someone else could have put this socket here
        assert ask_hook(event("Write", file_path="/x"), str(tmp_path), env) is None
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected: the hook decided in-process


@pytest.mark.parametrize(
    ("reply", "named"),
    [
        (lambda c: None, "the connection closed before an answer"),
        (lambda c: c.sendall(b'{"error": "RuntimeError: boom"}'), "RuntimeError: boom"),
        (lambda c: c.sendall(b'{"output": 5}'), "a malformed answer"),
        (lambda c: c.sendall(b"{not json"), "JSONDecodeError"),
    ],
)
def test_a_server_that_fails_to_answer_is_a_deny_naming_the_failure(
    tmp_path: Path, reply: Callable[[socket.socket], None], named: str
) -> None:
    env = {"TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    places = places_for(str(tmp_path), "", env)
    with fake_server(places.hook_socket, reply):
        answer = ask_hook(event("Write", file_path=f"{tmp_path}/a.py"), str(tmp_path), env)
    assert answer is not None
    assert answer.output is not None
    decided = json.loads(answer.output)["hookSpecificOutput"]
    assert decided["permissionDecision"] == "deny"
    assert "the resident server for" in decided["permissionDecisionReason"]
    assert named in decided["permissionDecisionReason"]


def _lines(fd: int) -> list[str]:
    """Every line written on the readiness pipe until its writer closes it."""
    received = bytearray()
    with os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read(4096):
            received += chunk
    return received.decode().splitlines()


async def _run_resident(
    repo: Path, state: Path, runtime: Path, idle: float
) -> tuple[int, list[str]]:
    """Run the server in this process with a readiness pipe: its exit code and its lines."""
    from telic.resident._server import Sockets, run_resident
    from telic.server import ServerConfig

    assert os.environ["TELIC_STATE_DIR"] == str(state)  # set by the test, undone after it
    config = ServerConfig.from_env(repository_root=str(repo), schemas="once")
    private_dir(runtime)
    sockets = Sockets(mcp=runtime / "s.sock", hook=runtime / "h.sock", lock=runtime / "s.lock")
    reading, writing = os.pipe()
    async with anyio.create_task_group() as tg:
        said: list[str] = []

        async def read() -> None:
            said.extend(await anyio.to_thread.run_sync(_lines, reading))

        tg.start_soon(read)
        code = await run_resident(config, sockets, idle, writing)
    return code, said


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the SQLite ledger: aiosqlite
async def test_the_server_says_listening_before_its_backend_is_open_then_ready(
    repo: DemoRepository, state: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELIC_STATE_DIR", str(state))
    with anyio.fail_after(120):
        code, said = await _run_resident(repo.root, state, runtime, idle=0.2)
    assert said == ["listening", "ready"]
    assert code == 0
    assert [name for name in os.listdir(runtime) if name.endswith(".sock")] == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_backend_that_cannot_open_is_said_after_listening_and_ends_the_server(
    repo: DemoRepository, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = repo.root / "state"  # refused: a state directory inside the repository
    monkeypatch.setenv("TELIC_STATE_DIR", str(inside))
    with anyio.fail_after(120):
        code, said = await _run_resident(repo.root, inside, runtime, idle=600)
    assert said[0] == "listening"
    assert len(said) == 2
    assert said[1].startswith("error ")
    assert said[1].endswith("(context_security)")
    assert code == 1  # it did not wait for its idle time: the failure ended it
    assert [name for name in os.listdir(runtime) if name.endswith(".sock")] == []


async def test_every_dialect_gets_the_in_process_answer_through_the_resident_server(
    tmp_path: Path,
) -> None:
    from telic.hosts import host_hook
    from tests.telic.hosts.test_dialects import codex, cursor, vscode

    runtime = tmp_path / "rt"
    async with project(tmp_path) as (service, _, repo, state):
        await executing_fix(service)
        env = {**os.environ, "TELIC_STATE_DIR": str(state), "TELIC_RUNTIME_DIR": str(runtime)}
        options = parse_serve(["--resident"], str(repo), env)
        await anyio.to_thread.run_sync(lambda: ensure_server(options, env).close())
        readme = f"{repo}/README.md"
        events = [
            ("codex", codex("Bash", "PermissionRequest", command="rm -rf /")),
            ("codex", codex("apply_patch", command="*** Update File: README.md\n")),
            ("cursor", cursor("beforeShellExecution", repo, command="rm -rf /")),
            (
                "cursor",
                cursor("preToolUse", repo, tool_name="Write", tool_input={"file_path": readme}),
            ),
            ("vscode", vscode("createFile", filePath=readme)),
        ]
        try:
            outputs = []
            for host, payload in events:
                raw = json.dumps(payload).encode()
                via = await anyio.to_thread.run_sync(ask_hook, raw, str(repo), env, host)
                here = await anyio.to_thread.run_sync(
                    lambda raw=raw, host=host: host_hook(
                        host,
                        raw,
                        repository_root=str(repo),
                        environ={"TELIC_STATE_DIR": str(state)},
                    )
                )
                assert via is not None, "the resident server did not answer"
                assert via.output == here, host
                outputs.append(here)
        finally:
            stop_servers(runtime)
    assert all(output is not None and "deny" in output for output in outputs)
