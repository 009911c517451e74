"""Running the inventory commands: concurrent, streamed, capped, judged, and cancellable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import anyio.from_thread
import pytest

from telic.grounding._process import Processes, Tool, run_tool, run_tools

pytestmark = pytest.mark.anyio

PYTHON = sys.executable


def _python(code: str) -> tuple[str, ...]:
    return (PYTHON, "-c", code)


async def _run(tools: list[Tool], cwd: Path) -> list[int | None]:
    return await anyio.to_thread.run_sync(lambda: run_tools(tools, cwd=str(cwd)))


async def test_every_output_reaches_its_own_sink_whole(tmp_path: Path) -> None:
    outputs: list[bytearray] = [bytearray() for _ in range(3)]
    big = "import sys; sys.stdout.buffer.write(b'x' * 300_000)"  # more than one pipe buffer
    tools = [
        Tool(_python(big), outputs[0].extend),
        Tool(_python("print('two')"), outputs[1].extend),
        Tool(_python("import os; print(os.getcwd())"), outputs[2].extend),
    ]
    assert await _run(tools, tmp_path) == [0, 0, 0]
    assert outputs[0] == b"x" * 300_000
    assert outputs[1] == b"two\n"
    assert outputs[2].decode().strip() == str(tmp_path)


async def test_a_failing_checked_command_is_unavailable_and_an_unchecked_one_says_why(
    tmp_path: Path,
) -> None:
    fail = _python("raise SystemExit(3)")
    tools = [Tool(fail, lambda chunk: None), Tool(fail, lambda chunk: None, check=False)]
    assert await _run(tools, tmp_path) == [None, 3]


async def test_a_missing_executable_is_unavailable_and_the_others_still_run(
    tmp_path: Path,
) -> None:
    seen = bytearray()
    tools = [
        Tool(("telic-no-such-program-anywhere",), lambda chunk: None),
        Tool(_python("print('ran')"), seen.extend),
    ]
    assert await _run(tools, tmp_path) == [None, 0]
    assert seen == b"ran\n"


async def test_output_over_the_cap_kills_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("telic.grounding._process.MAX_OUTPUT_BYTES", 1_000)
    seen = bytearray()
    endless = _python("import sys\nwhile True: sys.stdout.buffer.write(b'y' * 4096)")
    assert await _run([Tool(endless, seen.extend)], tmp_path) == [None]
    assert len(seen) <= 1_000  # the chunk that crossed the cap was never handed on


async def test_the_environment_is_fresh_and_hardened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    seen = bytearray()
    show = _python("import json, os; print(json.dumps(dict(os.environ)))")
    status = await anyio.to_thread.run_sync(
        lambda: run_tool(show, cwd=str(tmp_path), sink=seen.extend)
    )
    assert status == 0
    environment = json.loads(seen)
    assert "GIT_DIR" not in environment
    assert environment["GIT_CONFIG_NOSYSTEM"] == "1"
    assert environment["GIT_CONFIG_GLOBAL"] == os.devnull
    assert environment["LC_ALL"] == "C"


async def test_without_a_selector_the_outputs_are_drained_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("telic.grounding._process._SELECT_PIPES", False)
    outputs: list[bytearray] = [bytearray(), bytearray()]
    big = "import sys; sys.stdout.buffer.write(b'z' * 200_000)"
    tools = [Tool(_python(big), outputs[0].extend), Tool(_python(big), outputs[1].extend)]
    assert await _run(tools, tmp_path) == [0, 0]
    assert outputs == [b"z" * 200_000] * 2


async def test_a_cancelled_call_kills_what_still_runs(tmp_path: Path) -> None:
    started = bytearray()
    waits = _python("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)")
    with anyio.fail_after(30), anyio.CancelScope() as scope:

        def cancel_once_started(chunk: bytes) -> None:
            started.extend(chunk)
            anyio.from_thread.run_sync(scope.cancel)

        await _run([Tool(waits, cancel_once_started)], tmp_path)
    assert scope.cancelled_caught
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(int(started.decode()), 0)


def test_leaving_the_block_early_kills_and_reaps_every_command(tmp_path: Path) -> None:
    waits = _python("import time; time.sleep(60)")
    with Processes([Tool(waits, lambda chunk: None)] * 2, cwd=str(tmp_path)) as processes:
        running = list(processes._running.values())
        assert len(running) == 2
    assert all(process.returncode is not None for process in running)
