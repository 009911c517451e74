"""End to end: a grounding result is what the controller accepts to move a run to framing."""

from __future__ import annotations

from pathlib import Path

import pytest

from telic.controller import Controller, StartRequest
from telic.grounding import ground_repository
from telic.ledger import open_ledger

from .repos import make_repo

pytestmark = pytest.mark.anyio

FILES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\nRun `make test`.\n",
    "src/parser.py": "def parse(text):\n    return text.split()\n",
    "tests/test_parser.py": "from src.parser import parse\n",
}


@pytest.mark.parametrize("mode", ["analyze_and_fix", "report_only"])
async def test_a_grounded_run_reaches_agent_1_frame(mode: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    request = "Fix the failing parser in src"
    async with open_ledger("memory://") as ledger:
        controller = Controller(ledger)
        started = await controller.start_run(
            StartRequest(request, mode),  # type: ignore[arg-type]
            repository_root=str(repo),
        )
        assert started.next_action.phase == "context_discovery"
        result = await ground_repository(
            run_id=started.run.run_id,
            original_request=request,
            repository_root=repo,
            mode=mode,  # type: ignore[arg-type]
            active_paths=["src/parser.py"],
        )
        step = await controller.ground(
            started.run.run_id,
            started.next_action.id,
            started.run.version,
            result.manifest,
            result.documents,
        )
        assert step.run.version == 2
        action = step.next_action
        assert (action.kind, action.phase, action.logical_role) == (
            "phase",
            "agent_1_frame",
            "scenario_author",
        )
        manifest_uri = f"artifact://{started.run.run_id}/{result.manifest.id}"
        assert manifest_uri in action.input_refs
        stored = await controller.get_artifact(started.run.run_id, result.manifest.id)
        assert stored.body == result.manifest.to_wire()
    expected = 3 if mode == "analyze_and_fix" else 0
    assert len(result.documents) == expected
