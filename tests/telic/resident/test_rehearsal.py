"""The resident server's rehearsal: a complete report_only run on a scratch service that leaves
nothing behind in the server's own places, and whose failure is one line, never an error."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from telic.resident._rehearsal import rehearse, rehearse_quietly
from telic.server import ServerConfig

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_the_rehearsal_completes_a_run_and_leaves_the_servers_places_as_they_were(
    tmp_path: Path,
) -> None:
    repository, state = tmp_path / "repository", tmp_path / "state"
    repository.mkdir()
    state.mkdir()
    (repository / "README.md").write_text("a repository\n", encoding="utf-8")
    (state / "telic.toml").write_text("# the server's own settings\n", encoding="utf-8")
    before = _tree(tmp_path)
    config = ServerConfig(repository_root=repository, state_dir=state)

    assert await rehearse(config) == "completed"
    assert _tree(tmp_path) == before


async def test_a_rehearsal_that_cannot_run_is_one_line_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))

    await rehearse_quietly(ServerConfig(repository_root=tmp_path))

    line = capsys.readouterr().err
    assert line.startswith("telic: the resident server's rehearsal failed: FileNotFoundError")
    assert line.count("\n") == 1
