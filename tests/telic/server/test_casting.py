"""The casting contract at the MCP boundary: each refusal family of the conformance table.

Every row of the table is proven once where it is decided, by the pure runner
(``tests/packets/test_conformance.py``); the seal rows also through the casting layer
(``tests/telic/casting/test_conformance.py``). Here one row of each outcome per tool (each refusal
code, each kind of admitted packet) is played over MCP. Each test drives a real server through
the official MCP client in process. The run is brought to an executing node through the service
(the phase artifacts are not what is under test); every cast, progress report and return goes
through ``telic_cast``, ``telic_cast_progress`` and ``telic_return_packet``, and every refusal
must reach the host with the contract's code as the envelope's ``code`` and leave the ledger as
it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.casting import WALL_GRACE_MS, cap_reached, stop_reason_of
from telic.demo import TelicTools
from telic.ledger import Ledger
from telic.server import build_server
from telic_packets import Cast
from telic_packets.conformance import load_table

from ..roles.kit import (  # noqa: TID252
    BUDGET,
    EXPLORE,
    ROUTING,
    ManualClock,
    ServiceFlow,
    good_return,
    serving,
    spawn_perms,
    start_wide_run,
)

pytestmark = pytest.mark.anyio

ROWS = load_table()["rows"]


def one_per_family(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first row of each outcome: each refusal code once, and the first admitted row of each
    kind of packet (outcome, stop reason, with or without remaining items)."""
    families: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        spec, expected = row["input"], row["expected"]
        raw = spec.get("raw")
        family = (
            (
                "valid",
                spec.get("outcome"),
                spec.get("stopReason"),
                bool(isinstance(raw, dict) and raw.get("remaining")),
            )
            if expected["valid"]
            else (expected["errorCode"],)
        )
        families.setdefault(family, row)
    return list(families.values())


# The precedence and parallel-children rows are proven by the pure runner, and each such family
# once over MCP below.
CAST_ROWS = one_per_family(
    [
        row
        for row in ROWS
        if row["input"]["op"] == "check_cast"
        and not row["id"].startswith(("refusal.cast.precedence.", "bounds."))
    ]
)
SEAL_ROWS = [row for row in ROWS if row["input"]["op"] == "seal"]
RETURN_ROWS = one_per_family([row for row in ROWS if row["input"]["op"] == "parse_child_return"])
BRIEF = "Find where the retry limit is defined; see the pointers."


@dataclass
class Host:
    """A host on an executing run: the MCP tools, the run and its ledger."""

    tools: TelicTools
    flow: ServiceFlow
    ledger: Ledger
    clock: ManualClock

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.flow.b.run_id

    async def cast(self, **over: Any) -> dict[str, Any]:
        """Call telic_cast with a valid explore cast, changed by ``over``; return the envelope."""
        arguments: dict[str, Any] = {
            "run_id": self.run_id,
            "cast_type": "explore",
            "routing": ROUTING,
            "budget": BUDGET,
            "brief": BRIEF,
            "pointers": ["repo://src/retry.py"],
        }
        arguments.update(over)
        arguments = {k: v for k, v in arguments.items() if v is not _ABSENT}
        return await self.tools.attempt("telic_cast", **arguments)

    async def snapshot(self) -> tuple[Any, ...]:
        """Everything a refusal must leave unchanged: the run row, artifacts and trace."""
        run = await self.ledger.get_run(self.run_id)
        artifacts = await self.ledger.list_artifacts(self.run_id)
        trace = await self.ledger.page_trace(self.run_id, 0, 1000)
        return run, tuple(artifacts), trace.events


_ABSENT: Any = object()


@asynccontextmanager
async def hosting(
    tmp_path: Path,
    *,
    cast_types: list[dict[str, Any]] | None = None,
    execute: bool = True,
    depth: int = 1,
    workers: int | None = None,
    repository_root: str | None = None,
    **execute_kwargs: Any,
) -> AsyncIterator[Host]:
    """A server over a run whose first node executes (unless ``execute`` is false).

    With ``depth`` above 1 the run's envelope allows grandchildren, with ``workers`` that many
    casts open at once (``start_run`` grants depth 1 and 3 workers at most, so such a run is
    written into the ledger directly).
    """
    clock = ManualClock()
    with anyio.fail_after(60):
        roots = {} if repository_root is None else {"repository_root": repository_root}
        async with serving(tmp_path / "state", clock=clock, **roots) as (service, ledger):
            types = cast_types or [EXPLORE]
            if depth > 1 or workers is not None:
                flow = await start_wide_run(
                    service,
                    ledger,
                    workers=3 if workers is None else workers,
                    children=3,
                    depth=depth,
                    cast_types=types,
                )
            else:
                flow = await ServiceFlow.start(service, cast_types=types)
            if execute:
                await flow.to_execute(depth=depth, **execute_kwargs)
            async with Client(build_server(service), mode="legacy") as client:
                yield Host(TelicTools(client), flow, ledger, clock)


def _refused(envelope: dict[str, Any], code: str) -> None:
    assert envelope["ok"] is False, envelope
    assert envelope["code"] == code, envelope


# ------------------------------------------------------------------ cast refusal rows


def _setup(row: dict[str, Any]) -> dict[str, Any]:
    """How to bring a run into the row's context (children in hand, depth, spawn, executing)."""
    context = row["input"]["context"]
    setup: dict[str, Any] = {"execute": context["nodeExecuting"]}
    if not context["maySpawn"]:
        no_spawn = spawn_perms()
        no_spawn["subagents"]["spawn"] = False
        setup["node_permissions"] = no_spawn
    return setup


@pytest.mark.parametrize("row", CAST_ROWS, ids=[row["id"] for row in CAST_ROWS])
async def test_each_cast_refusal_family_gets_its_contract_code_over_mcp(
    tmp_path: Path, row: dict[str, Any]
) -> None:
    spec, expected = row["input"], row["expected"]
    context = spec["context"]
    async with hosting(tmp_path, cast_types=spec["registry"]["castTypes"], **_setup(row)) as host:
        parent = None
        if context["children"] >= context["maxChildren"]:
            # The run's node allows 3 children: cast them all, then the row's cast is one more.
            for _ in range(3):
                admitted = await host.cast()
                assert admitted["ok"], admitted
                returned = await host.tools.call(
                    "telic_return_packet",
                    run_id=host.run_id,
                    cast_id=admitted["cast"]["castId"],
                    packet=good_return(),
                )
                assert returned["packet"]["outcome"] == "completed"
        if context["depth"] + 1 > context["maxDepth"]:
            # The run allows depth 1: the row's cast is a grandchild of an open child.
            parent = (await host.cast())["cast"]["castId"]
        before = await host.snapshot()
        envelope = await host.cast(
            cast_type=spec["castType"],
            routing=spec["routing"],
            budget=spec["budget"],
            parent_cast_id=parent or _ABSENT,
        )
        if expected["valid"]:
            assert envelope["ok"], envelope
            assert envelope["cast"]["castType"] == spec["castType"]
        else:
            _refused(envelope, expected["errorCode"])
            assert await host.snapshot() == before


@pytest.mark.parametrize(
    ("over", "code"),
    [
        ({"routing": _ABSENT}, "missing_routing_reason"),
        ({"routing": dict(ROUTING, text="   ")}, "missing_routing_reason"),
        ({"routing": "locate it"}, "missing_routing_reason"),
        ({"routing": dict(ROUTING, text="x" * 201)}, "missing_routing_reason"),
        (
            {
                "routing": dict(
                    ROUTING,
                    expectedEvidence=[
                        "file_state",
                        "observation",
                        "citation",
                        "measurement",
                        "failure",
                    ],
                )
            },
            "missing_routing_reason",
        ),
        ({"routing": dict(ROUTING, acceptance=["a"] * 7)}, "missing_routing_reason"),
        ({"routing": dict(ROUTING, acceptance=["a" * 121])}, "missing_routing_reason"),
        ({"routing": dict(ROUTING, extra="field")}, "missing_routing_reason"),
        ({"routing": dict(ROUTING, needCode="guess")}, "unknown_need_code"),
        ({"budget": _ABSENT}, "budget_missing"),
        ({"budget": {"maxTurns": "8", "maxTotalTokens": 100}}, "budget_missing"),
        ({"cast_type": "Not A Type"}, "cast_type_disabled"),
    ],
)
async def test_a_missing_or_malformed_cast_argument_gets_the_contract_code(
    tmp_path: Path, over: dict[str, Any], code: str
) -> None:
    async with hosting(tmp_path) as host:
        before = await host.snapshot()
        _refused(await host.cast(**over), code)
        assert await host.snapshot() == before


@pytest.mark.parametrize("field", ["transcript", "history", "messages", "runId"])
async def test_an_unknown_cast_argument_is_refused_by_name(tmp_path: Path, field: str) -> None:
    async with hosting(tmp_path) as host:
        before = await host.snapshot()
        envelope = await host.cast(**{field: "user: …\nassistant: …"})
        _refused(envelope, "unknown_field")
        assert f"telic_cast takes no argument {field!r}" in envelope["error"]
        assert "never the parent transcript" in envelope["error"]
        assert await host.snapshot() == before


@pytest.mark.parametrize("tool", ["telic_cast_progress", "telic_return_packet"])
async def test_the_other_cast_tools_refuse_unknown_arguments_by_name(
    tmp_path: Path, tool: str
) -> None:
    async with hosting(tmp_path) as host:
        cast_id = (await host.cast())["cast"]["castId"]
        before = await host.snapshot()
        arguments: dict[str, Any] = {"run_id": host.run_id, "cast_id": cast_id, "verified": True}
        if tool == "telic_return_packet":
            arguments["packet"] = good_return()
        envelope = await host.tools.attempt(tool, **arguments)
        _refused(envelope, "unknown_field")
        assert f"{tool} takes no argument 'verified'" in envelope["error"]
        assert await host.snapshot() == before


@pytest.mark.parametrize(
    ("over", "valid"),
    [
        ({"brief": "b" * 1000}, True),
        ({"brief": "b" * 1001}, False),
        ({"brief": ""}, False),
        ({"brief": "   "}, False),
        ({"pointers": ["file:///etc/passwd"]}, False),
        ({"pointers": ["repo://" + "a" * 506]}, False),
        ({"pointers": ["repo://src/" + "a" * 502]}, False),
        ({"packet_refs": ["pk_0123abcd"] * 9}, False),
        ({"routing": dict(ROUTING, text="x" * 200)}, True),
        (
            {
                "routing": dict(
                    ROUTING,
                    expectedEvidence=["file_state", "observation", "citation", "measurement"],
                )
            },
            True,
        ),
        ({"routing": dict(ROUTING, acceptance=["a" * 120] * 6)}, True),
    ],
)
async def test_the_handoff_bounds_hold_over_mcp(
    tmp_path: Path, over: dict[str, Any], valid: bool
) -> None:
    async with hosting(tmp_path) as host:
        before = await host.snapshot()
        envelope = await host.cast(**over)
        assert envelope["ok"] is valid, envelope
        if not valid:
            assert await host.snapshot() == before


@pytest.mark.parametrize(("count", "valid"), [(8, True), (9, False)])
async def test_a_handoff_holds_at_most_eight_pointers_over_mcp(
    tmp_path: Path, count: int, valid: bool
) -> None:
    async with hosting(tmp_path) as host:
        stored = await host.ledger.list_artifacts(host.run_id)
        pointers = [f"artifact://{host.run_id}/{a.artifact_id}" for a in stored][:count]
        assert len(pointers) == count
        before = await host.snapshot()
        envelope = await host.cast(pointers=pointers)
        assert envelope["ok"] is valid, envelope
        if not valid:
            assert await host.snapshot() == before


async def test_the_handoff_a_child_gets_over_mcp_holds_only_the_four_fields(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        envelope = await host.cast()
        assert set(envelope["cast"]["handoff"]) == {"castId", "brief", "pointers", "packetRefs"}
        assert envelope["cast"]["handoff"]["pointers"] == ["repo://src/retry.py"]


# ------------------------------------------------------------------ handoff pointers


@pytest.mark.parametrize(
    ("pointer", "code", "rule"),
    [
        ("repo://../../etc/passwd", "path_traversal", None),
        ("repo://src/%2e%2e/%2e%2e/etc/passwd", "encoded_traversal", None),
        ("repo://src/other.py", "not_selected", "REF-REPO-SELECTED"),
        ("artifact://another-run/x", "other_run", "REF-SAME-RUN"),
        ("artifact://{run}/no-such-artifact", "not_found", "REF-EXISTS"),
        ("artifact://system/roles/executor-v1", "system_ref", "REF-SYSTEM"),
    ],
)
async def test_a_pointer_breaking_a_reference_rule_is_refused_and_names_it(
    tmp_path: Path, pointer: str, code: str, rule: str | None
) -> None:
    async with hosting(tmp_path) as host:
        before = await host.snapshot()
        pointers = ["repo://src/retry.py", pointer.format(run=host.run_id)]
        envelope = await host.cast(pointers=pointers)
        _refused(envelope, "invariant_violation")
        (issue,) = envelope["issues"]
        assert (issue["path"], issue["code"], issue.get("rule")) == ("pointers.1", code, rule)
        assert "pointers.1" in envelope["error"]
        assert await host.snapshot() == before


async def test_a_pointer_to_a_symlink_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    secret = tmp_path / "outside.txt"
    secret.write_text("not yours\n")
    (root / "src" / "retry.py").symlink_to(secret)
    async with hosting(tmp_path, repository_root=str(root)) as host:
        before = await host.snapshot()
        envelope = await host.cast(pointers=["repo://src/retry.py"])
        _refused(envelope, "invariant_violation")
        assert envelope["issues"][0]["code"] == "symlink_escape"
        assert await host.snapshot() == before


async def test_pointers_to_this_run_s_artifacts_and_selected_files_are_handed_over(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        (first, *_) = await host.ledger.list_artifacts(host.run_id)
        pointers = ["repo://src/retry.py", f"artifact://{host.run_id}/{first.artifact_id}"]
        envelope = await host.cast(pointers=pointers)
        assert envelope["cast"]["handoff"]["pointers"] == pointers


# ------------------------------------------------------------------ nested casts


async def test_a_child_casts_a_grandchild_within_its_budget_and_depth(tmp_path: Path) -> None:
    async with hosting(tmp_path, depth=2) as host:
        child = (await host.cast())["cast"]
        assert child["permissions"]["subagents"]["spawn"] is True
        grandchild = await host.cast(
            parent_cast_id=child["castId"], budget={"maxTurns": 2, "maxTotalTokens": 1000}
        )
        assert grandchild["ok"], grandchild
        assert grandchild["cast"]["depth"] == 2
        assert grandchild["cast"]["permissions"]["subagents"]["spawn"] is False
        record = await host.ledger.read_artifact(host.run_id, grandchild["cast"]["castId"])
        assert record.record.source_refs[1] == f"artifact://{host.run_id}/{child['castId']}"
        too_deep = await host.cast(parent_cast_id=grandchild["cast"]["castId"])
        _refused(too_deep, "depth_limit")


async def test_a_grandchild_may_not_spend_more_than_its_parent_has_left(tmp_path: Path) -> None:
    async with hosting(tmp_path, depth=2) as host:
        child = (await host.cast())["cast"]
        await host.tools.call(
            "telic_cast_progress",
            run_id=host.run_id,
            cast_id=child["castId"],
            turns=6,
            input_tokens=15_000,
        )
        before = await host.snapshot()
        over_turns = await host.cast(
            parent_cast_id=child["castId"], budget={"maxTurns": 3, "maxTotalTokens": 100}
        )
        _refused(over_turns, "budget_exceeds_ceiling")
        over_tokens = await host.cast(
            parent_cast_id=child["castId"], budget={"maxTurns": 2, "maxTotalTokens": 5001}
        )
        _refused(over_tokens, "budget_exceeds_ceiling")
        assert await host.snapshot() == before
        within = await host.cast(
            parent_cast_id=child["castId"], budget={"maxTurns": 2, "maxTotalTokens": 5000}
        )
        assert within["ok"], within


async def test_a_nested_cast_of_a_cast_that_is_not_open_is_refused(tmp_path: Path) -> None:
    async with hosting(tmp_path, depth=2) as host:
        before = await host.snapshot()
        _refused(await host.cast(parent_cast_id="cast-unknown"), "node_not_executing")
        assert await host.snapshot() == before


# ------------------------------------------------------------------ return rows


NOT_PLAYABLE = {
    "bounds.packet-bytes.at-limit": (
        "the row's packet is 8192 bytes with its own ids; a run's ids have other lengths"
    ),
    "refusal.return.missing-partial-fields": (
        "a capped child's return without remaining items is answered with "
        "budget_exhausted_requires_partial (its outcome cannot be partial without them)"
    ),
    "partial.stop-reason-required": (
        "below every cap Telic seals completed, so remaining items are not_a_packet"
    ),
    "partial.untouched-wall-capped-not-completed": (
        "past the cap and its grace the cast is already sealed, so a return is cast_not_open "
        "(test_a_wall_cap_and_its_grace_end_on_time_without_another_message)"
    ),
}


def _seal_applicability(row: dict[str, Any]) -> str | None:
    """Why a seal row cannot be played over MCP, or None when it can."""
    spec = row["input"]
    if row["id"] in NOT_PLAYABLE:
        return NOT_PLAYABLE[row["id"]]
    if spec["outcome"] in ("failed", "refused"):
        return f"Telic never seals a {spec['outcome']} outcome from a return"
    if spec["outcome"] == "cancelled":
        return "a cancelled packet is sealed by Telic, never returned"
    return None


def _played(spec: dict[str, Any]) -> tuple[dict[str, int], int]:
    """The progress report and wall time that bring a cast to the row's counters and cap.

    Telic counts total tokens as input plus output, so the input is what makes the row's
    total; a row naming a cap its counters only reach (or do not reach) is played one past it,
    which is how a cast becomes capped over MCP.
    """
    counters = dict(spec["counters"])
    budget = spec["cast"]["budget"]
    progress = {
        "turns": counters["turns"],
        "tool_calls": counters["toolCalls"],
        "input_tokens": counters["totalTokens"] - counters["outputTokens"],
        "output_tokens": counters["outputTokens"],
    }
    wall = counters["wallMs"]
    implied = stop_reason_of(
        turns=counters["turns"],
        total_tokens=counters["totalTokens"],
        wall_ms=wall,
        cast=Cast.from_wire(spec["cast"]),
    )
    reached = cap_reached(
        turns=counters["turns"],
        total_tokens=counters["totalTokens"],
        wall_ms=wall,
        cast=Cast.from_wire(spec["cast"]),
    )
    wanted = spec["stopReason"]
    if wanted is not None and wanted not in (implied, reached):
        if wanted == "turn_capped":
            progress["turns"] = budget["maxTurns"] + 1
        elif wanted == "token_capped":
            progress["input_tokens"] = budget["maxTotalTokens"] - counters["outputTokens"] + 1
        else:
            wall = budget["maxWallMs"] + 1
    return progress, wall


PLAYABLE = [row for row in SEAL_ROWS if _seal_applicability(row) is None]
PLAYED = one_per_family(PLAYABLE)


@pytest.mark.parametrize("row", PLAYED, ids=[row["id"] for row in PLAYED])
async def test_each_seal_family_gets_its_result_over_mcp(
    tmp_path: Path, row: dict[str, Any]
) -> None:
    spec, expected = row["input"], row["expected"]
    cast = spec["cast"]
    progress, wall = _played(spec)
    async with hosting(tmp_path) as host:
        admitted = await host.cast(routing=cast["routing"], budget=cast["budget"])
        cast_id = admitted["cast"]["castId"]
        if not spec["castOpen"]:
            await host.tools.call(
                "telic_return_packet", run_id=host.run_id, cast_id=cast_id, packet=good_return()
            )
        else:
            await host.tools.call(
                "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, **progress
            )
            # The run clock reads the row's wall time at the return (each reading adds 1 ms).
            host.clock.advance(max(0, wall - 4))
        before = await host.snapshot()
        envelope = await host.tools.attempt(
            "telic_return_packet", run_id=host.run_id, cast_id=cast_id, packet=spec["returned"]
        )
        if expected["valid"]:
            assert envelope["ok"], envelope
            packet = envelope["packet"]
            # A stop reason that does not apply is absent, as in the hashed form.
            assert (packet["outcome"], packet.get("stopReason")) == (
                spec["outcome"],
                spec["stopReason"],
            )
        else:
            _refused(envelope, expected["errorCode"])
            assert await host.snapshot() == before


@pytest.mark.parametrize("row", RETURN_ROWS, ids=[row["id"] for row in RETURN_ROWS])
async def test_each_child_return_family_gets_its_result_over_mcp(
    tmp_path: Path, row: dict[str, Any]
) -> None:
    raw, expected = row["input"]["raw"], row["expected"]
    async with hosting(tmp_path) as host:
        cast_id = (await host.cast())["cast"]["castId"]
        if expected["valid"] and isinstance(raw, dict) and raw.get("remaining"):
            # Remaining items make a partial, which only a cast at its cap may return.
            await host.tools.call(
                "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=BUDGET["maxTurns"]
            )
        before = await host.snapshot()
        envelope = await host.tools.attempt(
            "telic_return_packet", run_id=host.run_id, cast_id=cast_id, packet=raw
        )
        if expected["valid"]:
            assert envelope["ok"], envelope
            assert envelope["packet"]["castId"] == cast_id
        else:
            _refused(envelope, expected["errorCode"])
            assert await host.snapshot() == before


def test_most_return_rows_are_played_over_mcp() -> None:
    assert len(PLAYABLE) >= len(SEAL_ROWS) * 2 // 3, [
        (row["id"], _seal_applicability(row)) for row in SEAL_ROWS if row not in PLAYABLE
    ]
    assert {row["input"]["stopReason"] for row in PLAYABLE} >= {
        None,
        "turn_capped",
        "token_capped",
        "wall_capped",
    }


# ------------------------------------------------------------------ honest budgets


async def test_progress_separates_what_telic_measured_from_what_the_child_reported(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path, depth=2) as host:
        cast_id = (await host.cast())["cast"]["castId"]
        host.clock.advance(2_500)
        first = await host.tools.call(
            "telic_cast_progress",
            run_id=host.run_id,
            cast_id=cast_id,
            turns=2,
            tool_calls=7,
            input_tokens=900,
            output_tokens=100,
        )
        spend = first["cast"]["spend"]
        assert spend["selfReported"] == {
            "turns": 2,
            "toolCalls": 7,
            "inputTokens": 900,
            "outputTokens": 100,
            "totalTokens": 1000,
        }
        assert spend["measured"]["callsThroughTelic"] == 1
        assert spend["measured"]["wallMs"] >= 2_500
        await host.cast(parent_cast_id=cast_id, budget={"maxTurns": 1, "maxTotalTokens": 10})
        second = await host.tools.call(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=3
        )
        assert second["cast"]["spend"]["measured"]["callsThroughTelic"] == 3
        assert second["cast"]["spend"]["measured"]["wallMs"] > spend["measured"]["wallMs"]


async def test_a_refused_progress_report_changes_neither_the_ledger_nor_the_counters(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        cast_id = (await host.cast())["cast"]["castId"]
        crossed = await host.tools.call(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=9, input_tokens=50
        )
        assert crossed["cast"]["stopReason"] == "turn_capped"
        before = await host.snapshot()
        late = await host.tools.attempt(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=10, input_tokens=70
        )
        _refused(late, "budget_exhausted_requires_partial")
        negative = await host.tools.attempt(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=-1
        )
        _refused(negative, "invalid_arguments")
        assert await host.snapshot() == before
        partial = await host.tools.call(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=cast_id,
            packet=good_return(remaining=["the backoff"]),
        )
        assert (
            partial["packet"]["counters"]["turns"],
            partial["packet"]["counters"]["totalTokens"],
        ) == (9, 50)


# ------------------------------------------------------------------ wall clock


async def test_a_wall_capped_child_returns_its_typed_partial_within_the_grace(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        budget = dict(BUDGET, maxWallMs=60_000)
        cast_id = (await host.cast(budget=budget))["cast"]["castId"]
        await host.tools.call(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=2, input_tokens=900
        )
        host.clock.advance(60_000 + WALL_GRACE_MS // 2)
        progress = await host.tools.attempt(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, turns=3
        )
        _refused(progress, "budget_exhausted_requires_partial")
        completed = await host.tools.attempt(
            "telic_return_packet", run_id=host.run_id, cast_id=cast_id, packet=good_return()
        )
        _refused(completed, "budget_exhausted_requires_partial")
        partial = await host.tools.call(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=cast_id,
            packet=good_return(remaining=["check the backoff too"]),
        )
        packet = partial["packet"]
        assert (packet["outcome"], packet["stopReason"]) == ("partial", "wall_capped")
        assert packet["remaining"] == ["check the backoff too"]
        assert packet["counters"]["turns"] == 2
        assert packet["counters"]["wallMs"] > 60_000
        trace = await host.ledger.page_trace(host.run_id, 0, 1000)
        assert [e.event_type for e in trace.events].count("cast_exhausted") == 1


async def _until(check: Any) -> None:
    """Let every task run until ``check()`` holds (no sleeping: the clock is the manual one)."""
    with anyio.fail_after(10):
        while not await check():
            await anyio.wait_all_tasks_blocked()


async def test_a_wall_cap_and_its_grace_end_on_time_without_another_message(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        budget = dict(BUDGET, maxWallMs=1_000)
        cast_id = (await host.cast(budget=budget))["cast"]["castId"]

        async def events(kind: str) -> int:
            trace = await host.ledger.page_trace(host.run_id, 0, 1000)
            return [e.event_type for e in trace.events].count(kind)

        async def packets() -> list[Any]:
            records = await host.ledger.list_artifacts(host.run_id)
            return [a for a in records if a.type == "EvidencePacket"]

        host.clock.advance(1_000 + 5)  # past the cap: nobody calls Telic
        await _until(lambda: _positive(events("cast_exhausted")))
        assert await packets() == []  # within the grace the child may still return
        host.clock.advance(WALL_GRACE_MS)  # past the grace: still nobody calls
        await _until(lambda: _positive(_count(packets())))
        (stored,) = await packets()
        body = (await host.ledger.read_artifact(host.run_id, stored.artifact_id)).body
        assert (body["outcome"], body["stopReason"]) == ("cancelled", "wall_capped")
        assert body["castId"] == cast_id
        assert await events("cast_exhausted") == 1
        late = await host.tools.attempt(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=cast_id,
            packet=good_return(remaining=["more"]),
        )
        _refused(late, "cast_not_open")


async def _positive(count: Any) -> bool:
    return bool(await count > 0)


async def _count(items: Any) -> int:
    return len(await items)


async def test_past_the_grace_a_wall_capped_child_is_sealed_cancelled_and_wall_capped(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        budget = dict(BUDGET, maxWallMs=1_000)
        cast_id = (await host.cast(budget=budget))["cast"]["castId"]
        await host.tools.call(
            "telic_cast_progress", run_id=host.run_id, cast_id=cast_id, input_tokens=5_100
        )
        host.clock.advance(1_000 + WALL_GRACE_MS + 1)
        late = await host.tools.attempt(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=cast_id,
            packet=good_return(remaining=["more"]),
        )
        _refused(late, "cast_not_open")
        packets = [
            a for a in await host.ledger.list_artifacts(host.run_id) if a.type == "EvidencePacket"
        ]
        (stored,) = packets
        body = (await host.ledger.read_artifact(host.run_id, stored.artifact_id)).body
        assert (body["outcome"], body["stopReason"]) == ("cancelled", "wall_capped")
        assert body["counters"]["totalTokens"] == 5_100


async def test_the_packet_telic_return_packet_answers_verifies_its_own_digest(
    tmp_path: Path,
) -> None:
    # Issue 28, item 8: the answer added null-valued keys (``stopReason``, ``remaining``) after
    # hashing, so the packet a host received failed its own ``packetSha256``.
    from telic_packets import verify_packet_hash

    async with hosting(tmp_path) as host:
        admitted = await host.cast()
        returned = await host.tools.call(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=admitted["cast"]["castId"],
            packet=good_return(),
        )
    packet = returned["packet"]
    assert None not in packet.values()
    assert verify_packet_hash(packet)


# ------------------------------------------------------------------ the contract's decisions
# One test per family over MCP; each family's rows are proven by the pure runner
# (tests/packets) and on both backends through the service (tests/telic/casting).


async def test_a_node_that_may_not_cast_gets_spawn_not_permitted_before_any_limit(
    tmp_path: Path,
) -> None:
    # Issue 28, item 8: no spawn, no children and no depth answered children_limit.
    excluded = spawn_perms(children=0, depth=0)
    excluded["subagents"]["spawn"] = False
    async with hosting(tmp_path, children=0, node_permissions=excluded) as host:
        before = await host.snapshot()
        envelope = await host.cast()
        _refused(envelope, "spawn_not_permitted")
        assert "its permissions do not set subagents.spawn" in envelope["error"]
        assert await host.snapshot() == before


async def test_a_node_without_subagent_spawn_among_its_allowed_tools_may_not_cast(
    tmp_path: Path,
) -> None:
    # Issue 28, item 8: the node's permissions allowed children, so the cast was admitted.
    async with hosting(tmp_path, spawn_tool=False) as host:
        before = await host.snapshot()
        envelope = await host.cast()
        _refused(envelope, "spawn_not_permitted")
        assert "its allowedTools do not list subagent.spawn" in envelope["error"]
        assert await host.snapshot() == before


async def test_casts_open_at_once_are_bounded_by_the_run_s_parallel_workers(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path, workers=2) as host:
        first, second = (await host.cast())["cast"], (await host.cast())["cast"]
        before = await host.snapshot()
        envelope = await host.cast()
        _refused(envelope, "children_limit")
        assert "the run allows 2 at once" in envelope["error"]
        assert await host.snapshot() == before
        await host.tools.call(
            "telic_return_packet",
            run_id=host.run_id,
            cast_id=first["castId"],
            packet=good_return(),
        )
        third = await host.cast()  # the sealed packet freed its place; the node has room
        assert third["ok"], third
        assert second["castId"] != third["cast"]["castId"]


async def test_a_cast_is_the_parent_s_decision_only_about_the_packets_it_cites(
    tmp_path: Path,
) -> None:
    async with hosting(tmp_path) as host:
        first = (await host.cast())["cast"]["castId"]
        returned = await host.tools.call(
            "telic_return_packet", run_id=host.run_id, cast_id=first, packet=good_return()
        )
        packet_id = returned["packet"]["packetId"]

        async def consumed() -> list[dict[str, Any]]:
            trace = await host.ledger.page_trace(host.run_id, 0, 1000)
            return [
                json.loads(e.decision_summary)
                for e in trace.events
                if e.event_type == "packet_consumed"
            ]

        sibling = await host.cast(brief="Find the backoff constant; see the pointers.")
        assert sibling["ok"], sibling
        assert await consumed() == []  # no verdict on a packet it does not cite
        citing = (await host.cast(packet_refs=[packet_id]))["cast"]["castId"]
        (record,) = await consumed()
        assert record["packetId"] == packet_id
        assert record["consumerRef"] == f"artifact://{host.run_id}/{citing}"
        assert (record["cited"], record["citeKind"]) == (True, "token")


async def test_the_digest_over_mcp_is_the_contract_s_lines_with_the_marks_beside_them(
    tmp_path: Path,
) -> None:
    # Issue 28, item 8: the lines carried "self-reported" and consumption annotations.
    line = re.compile(
        r"^\[[a-z]+/[a-z_]+\] \[pk_[0-9a-z]{8,26}\] [a-z][a-z0-9_.-]*: .+ \([a-z_]+; \d+ tokens\)$"
    )
    async with hosting(tmp_path) as host:
        ids = []
        for _ in range(2):
            cast_id = (await host.cast())["cast"]["castId"]
            returned = await host.tools.call(
                "telic_return_packet", run_id=host.run_id, cast_id=cast_id, packet=good_return()
            )
            ids.append(returned["packet"]["packetId"])
        await host.cast(packet_refs=[ids[0]])  # a decision that cites the first packet
        digest = await host.tools.call("telic_get_digest", run_id=host.run_id)
    lines = digest["digest"].split("\n")
    assert all(line.match(text) for text in lines), lines
    assert [m["packetId"] for m in digest["marks"]] == [ids[1], ids[0]]  # unconsumed first
    assert [text.split("] [")[1].split("]")[0] for text in lines] == [ids[1], ids[0]]
    unconsumed, consumed = digest["marks"]
    assert unconsumed == {
        "packetId": ids[1],
        "consumption": "no_decision_yet",
        "tokensSelfReported": True,
    }
    assert (consumed["consumption"], consumed["citeKind"]) == ("consumed", "token")
    assert consumed["consumerRef"].startswith(f"artifact://{host.run_id}/")
    assert digest["omitted"] == 0
