"""The runnable examples check themselves; the Claude Code hook blocks a denied action."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from telic.cli import DemoRepository, TelicTools, find_demo_repo, stdio_parameters

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _run(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
    )


@pytest.mark.slow
@pytest.mark.parametrize("script", ["serial_host.py", "native_subagents.py"])
def test_the_example_checks_itself_and_passes(script: str) -> None:
    done = _run(script)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BAD" not in done.stdout


@pytest.mark.postgres
def test_two_replicas_on_postgresql() -> None:
    url = os.environ.get("TELIC_TEST_POSTGRES_URL") or os.environ.get("TELIC_DATABASE_URL", "")
    if not url.startswith("postgres"):
        if os.environ.get("CI"):
            pytest.fail("CI must provide TELIC_TEST_POSTGRES_URL for examples/two_replicas.py")
        pytest.skip("needs PostgreSQL: set TELIC_TEST_POSTGRES_URL")
    done = _run("two_replicas.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_skill_file_carries_the_prompt_text() -> None:
    from telic.server import WORKFLOW_INSTRUCTIONS

    assert WORKFLOW_INSTRUCTIONS in (EXAMPLES / "hosts" / "telic-workflow.md").read_text()


def test_the_pre_tool_use_hook_blocks_a_write_in_analyze_only(tmp_path: Path) -> None:
    repo = DemoRepository.create(find_demo_repo(), tmp_path / "repo")
    state = tmp_path / "state"

    async def start() -> str:
        async with Client(stdio_parameters(repo.root, state)) as client:
            started = await TelicTools(client).call(
                "telic_start_run", original_request="Explain paginate", mode="analyze_only"
            )
            return str(started["run"]["runId"])

    run_id = anyio.run(start)
    env = {
        "TELIC_RUN_ID": run_id,
        "TELIC_REPOSITORY_ROOT": str(repo.root),
        "TELIC_STATE_DIR": str(state),
        "CLAUDE_PROJECT_DIR": str(repo.root),
    }

    def hook(tool: str, arguments: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(EXAMPLES / "hosts" / "claude_code_hook.py")],
            input=json.dumps({"tool_name": tool, "tool_input": arguments}),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **env},
        )

    write = hook("Edit", {"file_path": str(repo.root / "src" / "pagination.py")})
    assert write.returncode == 2, write.stderr
    assert "Telic denies repository.write" in write.stderr
    read = hook("Read", {"file_path": str(repo.root / "src" / "pagination.py")})
    assert read.returncode == 0, read.stderr
