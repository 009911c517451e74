"""``telic runs`` and ``telic show`` show a lineage chain: which run follows which."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from telic.cli import main
from telic.controller import Controller, StartRequest
from telic.ledger import open_ledger


async def _chain(state: Path, repo: Path) -> tuple[str, str]:
    async with open_ledger(f"sqlite:///{state}") as ledger:
        controller = Controller(ledger)
        first = await controller.start_run(
            StartRequest("Find the bug", "analyze_only"), repository_root=str(repo)
        )
        run_id = first.run.run_id
        await controller.cancel(run_id, first.next_action.id, 1)
        second = await controller.start_run(
            StartRequest("Follow it up", "analyze_only", prior_run_id=run_id),
            repository_root=str(repo),
        )
    return run_id, second.run.run_id


def test_runs_and_show_name_the_run_a_run_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    monkeypatch.setenv("TELIC_STATE_DIR", str(state))
    monkeypatch.delenv("TELIC_DATABASE_URL", raising=False)
    first, second = anyio.run(_chain, state, repo.resolve())
    assert main(["runs", "--repository-root", str(repo)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[-1] == "FOLLOWS"
    row = next(line for line in table if line.startswith(second))
    assert row.split()[-1] == first
    assert main(["runs", "--repository-root", str(repo), "--json"]) == 0
    runs = {r["runId"]: r.get("priorRunId") for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs == {first: None, second: first}  # an unlinked 1.0 run has no such key
    assert main(["show", second, "--repository-root", str(repo)]) == 0
    assert f"follows: {first}" in capsys.readouterr().out
