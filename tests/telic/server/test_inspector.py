"""A third-party client — the MCP Inspector CLI (npm) — lists the tools and calls one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from telic.cli import DemoRepository
from telic.server import TOOL_NAMES

INSPECTOR = Path(__file__).resolve().parents[3] / ".ci" / "node_modules" / ".bin" / "mcp-inspector"


def _inspector() -> Path:
    if not INSPECTOR.exists():
        if os.environ.get("CI"):
            pytest.fail("CI must install the MCP Inspector CLI: bash .ci/inspector.sh")
        pytest.skip("MCP Inspector CLI not installed (bash .ci/inspector.sh)")
    return INSPECTOR


def _inspect(repo: DemoRepository, state: Path, *method: str) -> dict[str, object]:
    command = [
        str(_inspector()),
        "--cli",
        sys.executable,
        "-m",
        "telic",
        "serve",
        "-e",
        f"TELIC_REPOSITORY_ROOT={repo.root}",
        "-e",
        f"TELIC_STATE_DIR={state}",
        *method,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_inspector_lists_the_tools_and_calls_list_runs(
    repo: DemoRepository, state: Path
) -> None:
    listed = _inspect(repo, state, "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]  # type: ignore[attr-defined]
    assert names == list(TOOL_NAMES)
    called = _inspect(
        repo,
        state,
        "--method",
        "tools/call",
        "--tool-name",
        "telic_list_runs",
        "--tool-arg",
        "limit=5",
    )
    assert called["isError"] is False
    assert called["structuredContent"] == {"ok": True, "runs": []}
