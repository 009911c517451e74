"""Two ``telic serve --http`` replicas on one PostgreSQL database.

A run started on replica A is read and advanced on replica B; then both replicas race to ground
the same run version and exactly one wins. Needs ``TELIC_TEST_POSTGRES_URL`` or
``TELIC_DATABASE_URL`` (postgresql://…); exits 0 on success, 1 on failure, 77 when skipped.

    eval "$(bash .ci/postgres.sh)" && .venv/bin/python examples/two_replicas.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio

from telic.demo import DemoRepository, TelicTools, find_demo_repo, http_client, http_server

SKIPPED = 77


async def main() -> int:
    url = os.environ.get("TELIC_TEST_POSTGRES_URL") or os.environ.get("TELIC_DATABASE_URL", "")
    if not url.startswith("postgres"):
        print("skipped: set TELIC_TEST_POSTGRES_URL to a PostgreSQL database")
        return SKIPPED
    with tempfile.TemporaryDirectory(prefix="telic-replicas-") as scratch:
        base = Path(scratch)
        repo = DemoRepository.create(find_demo_repo(), base / "repo")
        async with (
            http_server(repo.root, base / "a", database_url=url) as first,
            http_server(repo.root, base / "b", database_url=url) as second,
            http_client(first) as one,
            http_client(second) as two,
        ):
            a, b = TelicTools(one), TelicTools(two)
            started = await a.call(
                "telic_start_run", original_request="Plan the pagination fix", mode="plan_only"
            )
            run_id = started["run"]["runId"]
            seen = await b.call("telic_get_next_action", run_id=run_id)
            print(f"ok  replica B sees run {run_id} at {seen['nextAction']['id']}")
            token = {"action_id": started["nextAction"]["id"], "expected_run_version": 1}
            outcomes: list[dict[str, object]] = []

            async def race(tools: TelicTools) -> None:
                outcomes.append(await tools.attempt("telic_ground_context", run_id=run_id, **token))

            async with anyio.create_task_group() as tg:
                for tools in (a, b, a, b):
                    tg.start_soon(race, tools)
            winners = sum(1 for o in outcomes if o["ok"])
            losers = sorted(str(o.get("code")) for o in outcomes if not o["ok"])
            print(
                f"{'ok ' if winners == 1 else 'BAD'} racing grounds: {winners} winner, "
                f"losers {losers}"
            )
            after = await b.call("telic_get_run", run_id=run_id)
            advanced = after["run"]["version"] == 2
            print(f"{'ok ' if advanced else 'BAD'} the run is at version {after['run']['version']}")
            return 0 if winners == 1 and advanced else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
