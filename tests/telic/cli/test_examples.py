"""The runnable examples check themselves; the shipped skill file is what ``telic init`` writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_skill_file_is_the_skill_telic_init_writes(tmp_path: Path) -> None:
    from telic.hosts._kits import plan_kit
    from telic.server import WORKFLOW_INSTRUCTIONS

    shipped = (EXAMPLES / "hosts" / "telic-workflow.md").read_text()
    (skill,) = [c for c in plan_kit("claude-code", tmp_path) if c.path.endswith("SKILL.md")]
    assert shipped == skill.after
    assert WORKFLOW_INSTRUCTIONS in shipped
