"""telic-actors installs and imports on its own, with anyio as its only dependency."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DISTRIBUTION = Path(__file__).resolve().parents[2] / "actors"


@pytest.mark.slow
def test_the_distribution_installs_and_runs_an_actor_in_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(DISTRIBUTION)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    probe = """
import importlib.metadata as m, importlib.resources as r
import anyio
from telic_actors import Actor, Ask, open_runtime

class Double(Ask[int]):
    def __init__(self, n: int) -> None:
        self.n = n

class Doubler(Actor[Double]):
    async def on_message(self, message: Double) -> int:
        return message.n * 2

async def main() -> None:
    async with open_runtime() as root:
        ref = root.spawn(Doubler, name="doubler")
        assert await ref.ask(Double(21)) == 42
        await ref.stop()

anyio.run(main)
names = {d.metadata["Name"].lower().replace("_", "-") for d in m.distributions()}
assert "anyio" in names, names
assert not names & {"telic", "telic-packets", "pydantic"}, names
assert r.files("telic_actors").joinpath("py.typed").is_file()
print("alone")
"""
    done = subprocess.run(
        [str(python), "-I", "-c", probe], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.strip() == "alone"
