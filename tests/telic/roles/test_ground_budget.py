"""``Service.ground`` passes a host's grounding limits through to the grounder (issue 28).

``telic_ground_context`` hands the service the limits the host set as a mapping; the real
grounder refused every such mapping ("budget must be a GroundingBudget").
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from telic.ledger import open_ledger
from telic.roles import open_service

from .kit import ServiceFlow, clock_from, ids_from

pytestmark = pytest.mark.anyio


async def test_a_hosts_budget_reaches_the_real_grounder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    for n in range(4):
        (repo / "src" / f"retry{n}.py").write_text(f"MAX_RETRIES = {n}\n")
    await anyio.run_process(["git", "init", "-q"], cwd=repo)
    state = tmp_path / "state"
    async with (
        open_ledger(f"sqlite://{state / 'ledger.sqlite3'}", repository_root=repo) as ledger,
        open_service(
            ledger=ledger,
            repository_root=str(repo),
            state_dir=state,
            clock=clock_from(),
            new_id=ids_from("run"),
        ) as service,
    ):
        flow = await ServiceFlow.start(service)
        grounded = await service.ground(flow.b.run_id, *flow.token(), budget={"max_files": 2})
    budget = grounded.manifest_wire["budget"]
    assert isinstance(budget, dict)
    assert budget["maximumFiles"] == 2
    assert budget["selectedFiles"] <= 2
