"""Where the real host binaries are: installed by ``bash .ci/hosts.sh`` into ``.ci/hosts``.

A test that needs one skips when it is absent, except in CI (``CI`` set), where a missing
binary fails the test: CI installs them, so absence there is a broken install, not a choice.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["claude_code", "codex", "host_environment", "run_host"]

MODULES = Path(__file__).resolve().parents[4] / ".ci" / "hosts" / "node_modules"


def _binary(path: Path, what: str) -> Path:
    if not os.access(path, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {what}: bash .ci/hosts.sh (looked for {path})")
        pytest.skip(f"{what} not installed (bash .ci/hosts.sh)")
    return path


def claude_code() -> Path:
    """The native ``claude`` binary of the pinned ``@anthropic-ai/claude-code``."""
    return _binary(MODULES / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe", "Claude Code")


def codex() -> Path:
    """The native ``codex`` binary of the pinned ``@openai/codex`` (its platform package)."""
    found = sorted(MODULES.glob("@openai/codex-linux-*/vendor/*/bin/codex"))
    return _binary(found[0] if found else MODULES / "@openai" / "codex", "Codex")


def host_environment(home: Path, state: Path, runtime: Path) -> dict[str, str]:
    """The environment a host binary runs in: a home of its own, Telic's state and runtime
    directories of the test, and none of the caller's model or host settings."""
    dropped = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "TELIC_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        TELIC_STATE_DIR=str(state),
        TELIC_RUNTIME_DIR=str(runtime),
    )
    return env


def run_host(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    seconds: float,
    describe: Callable[[], str],
) -> subprocess.CompletedProcess[str]:
    """Run a host binary to its end; past ``seconds`` stop it and fail, showing ``describe()``
    (the conversation so far) and what the host printed."""
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(
                f"{command[0]} ran past {seconds} s\n{describe()}\n"
                f"stdout: {out[-3000:]}\nstderr: {err[-3000:]}"
            )
    return subprocess.CompletedProcess(command, process.returncode, out, err)
