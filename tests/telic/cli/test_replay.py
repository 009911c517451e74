"""``telic replay RUN [--repo PATH] [--json]``: the bare report a run's MCP replay nests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from telic.demo import DemoRepository, TelicTools, drive_mode, find_demo_repo, stdio_parameters

pytestmark = pytest.mark.anyio

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


@pytest.fixture
def anyio_backend() -> str:
    """The server is a subprocess; the client side runs on asyncio."""
    return "asyncio"


def _telic(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TELIC_REPOSITORY_ROOT"}
    return subprocess.run(
        [sys.executable, "-m", "telic", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "TELIC_STATE_DIR": str(state)},
        cwd=state.parent,
    )


async def test_replay_prints_the_bare_report_compact_or_indented(tmp_path: Path) -> None:
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "repo")
    state = tmp_path / "state"
    with anyio.fail_after(90):
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = TelicTools(client)
            driver = await drive_mode(tools, "analyze_only", repo, request=REQUEST, goal="Find")
            served = (await tools.call("telic_replay_run", run_id=driver.run_id))["report"]
    compact = _telic("replay", driver.run_id, "--repo", str(repo.root), "--json", state=state)
    indented = _telic("replay", driver.run_id, "--repo", str(repo.root), state=state)
    assert compact.returncode == 0, compact.stderr
    assert compact.stdout.count("\n") == 1  # one compact line
    assert json.loads(compact.stdout) == served  # bare: not wrapped in {ok, report}
    assert indented.returncode == 0
    assert indented.stdout.startswith('{\n  "runId"')
    assert json.loads(indented.stdout) == served


def test_replay_of_an_unknown_run_fails_on_stderr(tmp_path: Path) -> None:
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "repo")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "ledger.sqlite3").touch(mode=0o600)  # a ledger exists but holds no such run
    done = _telic("replay", "no-such-run", "--repo", str(repo.root), state=state)
    assert done.stdout == ""
    assert done.stderr.startswith("telic: ")
    assert "no-such-run" in done.stderr.splitlines()[0]
    assert done.returncode == 3  # the CLI's "not found" (docs/cli.md)
