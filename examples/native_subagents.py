"""A native-subagent host: casts, progress, verified packets and the digest.

Starts ``telic serve`` over stdio with an ``explore`` cast type enabled for the run, moves an
analyze_only run to its execution phase, and then:

1. is refused a cast without an enabled type (``cast_type_disabled``);
2. casts an ``explore`` child with a routing reason and a budget, reports its spend;
3. has a prose return refused (``not_a_packet``), then returns a packet whose quote is checked
   byte for byte against the grounded file — ``verified``;
4. cites the packet's ``pk_`` token in the WorkResult and reads the digest.

Exits non-zero if anything differs.

    make install && .venv/bin/python examples/native_subagents.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client

from telic.demo import (
    DemoRepository,
    RunDriver,
    TelicTools,
    criterion,
    find_demo_repo,
    permissions,
    stdio_parameters,
    verification,
)

EXPLORE = {
    "castType": "explore",
    "enabled": True,
    "ceilingTurns": 6,
    "ceilingTokens": 40_000,
    "readOnly": True,
    "allowedNeedCodes": ["locate", "verify_claim"],
}
GRANTS = ["repository.read", "subagent.spawn"]


def check(condition: bool, what: str) -> None:
    print(f"{'ok ' if condition else 'BAD'} {what}")
    if not condition:
        raise SystemExit(1)


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="telic-subagents-") as scratch:
        repo = DemoRepository.create(find_demo_repo(), Path(scratch) / "repo")
        async with Client(stdio_parameters(repo.root, Path(scratch) / "state")) as client:
            tools = TelicTools(client)
            driver = await RunDriver.start(
                tools,
                "analyze_only",
                "paginate in src/pagination.py returns the wrong page; find the cause",
                "Locate the cause of the pagination bug",
                native_subagents="available",
                host_capabilities=GRANTS,
                authorization_granted=GRANTS,
                cast_types=[EXPLORE],
            )
            b = driver.bodies
            b.criteria = [criterion("AC-1", "completion", "The faulty line is located")]
            b.verifications = [verification("VR-1", "completion", "Read the faulty line")]
            b.permissions = permissions(read=["**"], children=1)
            await driver.ground(["src/pagination.py"])
            await driver.submit("ProblemFrame", b.frame())
            await driver.submit("TaskContract", b.contract())
            await driver.submit("PromptReview", b.prompt_review())
            node = b.node(
                "locate",
                ["AC-1"],
                ["repository.read"],
                b.permissions,
                children=1,
                extra_tools=["subagent.spawn"],
            )
            await driver.submit("WorkPlan", b.plan("plan-1", [node], depth=1))
            check(driver.phase == "agent_4_execute", "the run is executing its node")

            routing = {
                "needCode": "locate",
                "text": "Find the start-index line",
                "expectedEvidence": ["file_state"],
            }
            budget = {"maxTurns": 3, "maxTotalTokens": 10_000}
            refused = await tools.attempt(
                "telic_cast",
                run_id=driver.run_id,
                cast_type="browser",
                routing=routing,
                budget=budget,
                brief="Look around.",
            )
            check(refused["code"] == "cast_type_disabled", "a disabled cast type is refused")

            cast = await tools.call(
                "telic_cast",
                run_id=driver.run_id,
                cast_type="explore",
                routing=routing,
                budget=budget,
                brief="Quote the line of src/pagination.py that computes start.",
                pointers=["repo://src/pagination.py"],
            )
            cast_id = cast["cast"]["castId"]
            check("transcript" not in cast["cast"]["handoff"], "the handoff is fresh context only")
            await tools.call(
                "telic_cast_progress",
                run_id=driver.run_id,
                cast_id=cast_id,
                turns=1,
                tool_calls=1,
                input_tokens=900,
                output_tokens=80,
            )
            prose = await tools.attempt(
                "telic_return_packet",
                run_id=driver.run_id,
                cast_id=cast_id,
                packet="I looked and it is line 22.",
            )
            check(prose["code"] == "not_a_packet", "uncapped prose is refused with a repair code")
            returned = await tools.call(
                "telic_return_packet",
                run_id=driver.run_id,
                cast_id=cast_id,
                packet={
                    "claim": "start is computed as page * per_page",
                    "evidence": [
                        {
                            "kind": "file_state",
                            "source": "repo://src/pagination.py",
                            "locator": "line 22",
                            "quote": "start = page * per_page",
                        }
                    ],
                    "completed": [0],
                },
            )
            packet = returned["packet"]
            check(packet["verdict"] == "verified", f"the packet {packet['packetId']} is verified")

            observed = repo.diagnose()
            await driver.submit(
                "Evidence", b.evidence("evidence-1", "tool_output", "Tests", observed)
            )
            note = f"Located the faulty line, as packet {packet['packetId']} shows."
            read = b.action("A-1", "repository.read", "src/pagination.py", ["evidence-1"], note)
            await driver.submit(
                "WorkResult",
                b.result(
                    "result-1",
                    "plan-1",
                    "locate",
                    actions=[read],
                    evidence=["evidence-1"],
                    criteria=["AC-1"],
                    note=note,
                ),
            )
            digest = await tools.call("telic_get_digest", run_id=driver.run_id)
            check(packet["packetId"] in digest["digest"], "the digest lists the packet")
            (mark,) = digest["marks"]
            check(mark["consumption"] == "consumed", "the digest marks the packet consumed")
            print(digest["digest"])
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
