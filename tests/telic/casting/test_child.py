"""A native child held to its cast: binding, scope, observed spend and the return check.

The pure half is tested by tables; the durable half on a memory ledger and a real SQLite file
(and PostgreSQL where configured, always in CI), closing the service and opening a new one as a
restarted server would, with the hook's events written by another writer than the service.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from telic.casting import (
    BOUND_EVENT,
    CALL_EVENT,
    EXHAUSTED_EVENT,
    HANDOFF_EVENT,
    STOPPED_EVENT,
    ChildScope,
    Observed,
    bind_target,
    bound_summary,
    call_summary,
    children_of,
    event,
    handed_cast,
    handoff_summary,
    judge_child_call,
    load_child_scope,
    pointer_paths,
    returned_packet,
    stopped_summary,
)
from telic.ledger import Ledger, open_ledger, utc_now
from telic.permissions import Grant, Layer
from telic.reports import load_run_report, render_markdown
from telic_packets import PacketRefusal
from tests.telic.ledger.conftest import postgres_url  # noqa: F401 - the shared fixture

from ..roles.kit import (  # noqa: TID252
    ManualClock,
    ServiceFlow,
    good_return,
    ids_from,
    serving,
)

READ_ALL = Layer("phase", (Grant("repository.read", ("**",)), Grant("repository.write", ("**",))))
RUN_LAYERS = (Layer.for_mode("analyze_and_fix"), READ_ALL)
READ_ONLY = Layer("cast", (Grant("repository.read", ("**",)),))


def _scope(pointers: tuple[str, ...] | None = ("src/calc.py",), turns: int = 2) -> ChildScope:
    return ChildScope("cast-1", turns, True, READ_ONLY, pointers)


# ---------------------------------------------------------------- the fold of the trace


def test_children_of_folds_handoffs_bindings_spend_exhaustion_and_stops() -> None:
    events = [
        (HANDOFF_EVENT, handoff_summary("cast-1", "telic-cast")),
        ("permission_checked", "not json at all"),
        (BOUND_EVENT, bound_summary("cast-1", "a1")),
        (BOUND_EVENT, bound_summary("cast-2", "a1")),  # a second binding never moves the first
        (CALL_EVENT, call_summary("cast-1", "a1", Observed(1, 1), allowed=True)),
        (CALL_EVENT, call_summary("cast-1", "a1", Observed(3, 3), allowed=False)),
        (CALL_EVENT, call_summary("cast-1", "a1", Observed(2, 2), allowed=True)),  # never lower
        (EXHAUSTED_EVENT, '{"castId":"cast-1","stopReason":"turn_capped"}'),
        (STOPPED_EVENT, stopped_summary("cast-1", "a1", returned=False)),
        (CALL_EVENT, '{"agentId":"a1"}'),  # no cast id: skipped
    ]
    children = children_of(events)
    assert children.handed == (("cast-1", "telic-cast"),)
    assert children.cast_of("a1") == "cast-1"
    assert children.cast_of("a2") is None
    assert children.spend_of("cast-1") == Observed(3, 3)
    assert children.spend_of("cast-9") == Observed(0, 0)
    assert children.exhausted == frozenset({"cast-1"})
    assert children.stopped == {"cast-1": False}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Brief … handoff castId cast-1, pointers repo://src/calc.py", "cast-1"),
        ("no handoff in this prompt", None),
        ("two handoffs: cast-1 and cast-3", None),  # one child, one cast
        ("the bound cast-2 only", None),  # already taken by a child
        ("a closed cast-9", None),
        ("only cast-12 here", None),  # a whole id only, and cast-12 is not open
        ('{"castId": "cast-1", "brief": "…"}', "cast-1"),  # the handoff as the prompt
        ("Return to cast-1.", "cast-1"),
    ],
)
def test_a_spawn_call_hands_off_exactly_one_open_unbound_cast(
    text: str, expected: str | None
) -> None:
    children = children_of([(BOUND_EVENT, bound_summary("cast-2", "a2"))])
    assert handed_cast(text, ("cast-1", "cast-2", "cast-3"), children) == expected


@pytest.mark.parametrize(
    ("agent_id", "agent_type", "expected"),
    [
        ("a-new", "telic-cast", "cast-1"),  # the oldest handoff of its type no child took
        ("a-old", "telic-cast", "cast-0"),  # bound already: stays bound
        ("a-new", "general-purpose", "cast-3"),  # a handoff made without a type fits any type
        ("a-new", "other", "cast-3"),
    ],
)
def test_a_starting_child_binds_to_the_oldest_handoff_of_its_type(
    agent_id: str, agent_type: str, expected: str
) -> None:
    children = children_of(
        [
            (HANDOFF_EVENT, handoff_summary("cast-0", "telic-cast")),
            (BOUND_EVENT, bound_summary("cast-0", "a-old")),
            (HANDOFF_EVENT, handoff_summary("cast-9", "telic-cast")),  # closed since
            (HANDOFF_EVENT, handoff_summary("cast-1", "telic-cast")),
            (HANDOFF_EVENT, handoff_summary("cast-3", "")),
        ]
    )
    open_casts = ("cast-0", "cast-1", "cast-3")
    assert bind_target(children, agent_id, agent_type, open_casts) == expected


def test_a_child_with_no_handoff_waiting_binds_to_nothing() -> None:
    children = children_of([(HANDOFF_EVENT, handoff_summary("cast-1", "telic-cast"))])
    assert bind_target(children, "a1", "telic-cast", ()) is None  # the cast closed
    assert bind_target(children_of([]), "a1", "telic-cast", ("cast-1",)) is None


def test_pointer_paths_keep_only_repository_paths() -> None:
    pointers = ["repo://src/calc.py", "artifact://run/ev-1", "repo://docs/", "repo://"]
    assert pointer_paths(pointers) == ("src/calc.py", "docs")


# ---------------------------------------------------------------- judging one call


@pytest.mark.parametrize(
    ("asks", "allowed", "layer", "code"),
    [
        ([("repository.read", "src/calc.py")], True, None, "allowed"),
        ([("repository.read", "src/other.py")], False, "cast_pointers", "out_of_scope"),
        ([("repository.write", "src/calc.py")], False, "cast", "not_granted"),
        ([("shell.execute", "pytest")], False, "mode", "not_granted"),
        ([("repository.read", "../etc/passwd")], False, "target", "path_traversal"),
        # every target of a call must be allowed
        (
            [("repository.read", "src/calc.py"), ("repository.read", "README.md")],
            False,
            "cast_pointers",
            "out_of_scope",
        ),
    ],
)
def test_a_bound_childs_call_is_judged_against_its_cast(
    tmp_path: Path, asks: list[tuple[str, str]], allowed: bool, layer: str | None, code: str
) -> None:
    judged = judge_child_call(
        _scope(),
        Observed(0, 0),
        asks,
        RUN_LAYERS if asks[0][0] != "shell.execute" else (Layer("mode"), READ_ALL),
        exhausted=False,
        repository_root=str(tmp_path),
    )
    assert (judged.allowed, judged.layer, judged.code) == (allowed, layer, code)
    assert judged.observed == Observed(1, 1)  # counted whether allowed or not
    assert not judged.newly_exhausted
    if not allowed:
        assert f"layer: {layer}" in judged.reason


def test_a_scope_not_narrowed_to_pointers_reads_what_its_layers_allow(tmp_path: Path) -> None:
    judged = judge_child_call(
        _scope(pointers=None),
        Observed(),
        [("repository.read", "src/other.py")],
        RUN_LAYERS,
        exhausted=False,
        repository_root=str(tmp_path),
    )
    assert judged.allowed


def test_a_directory_pointer_covers_what_lies_under_it(tmp_path: Path) -> None:
    scope = _scope(pointers=("src",))
    inside, outside = (
        judge_child_call(
            scope,
            Observed(),
            [("repository.read", target)],
            RUN_LAYERS,
            exhausted=False,
            repository_root=str(tmp_path),
        )
        for target in ("src/deep/calc.py", "srcs/calc.py")
    )
    assert inside.allowed
    assert (outside.allowed, outside.layer) == (False, "cast_pointers")


def test_the_call_past_the_turn_budget_is_denied_and_exhausts_the_cast(tmp_path: Path) -> None:
    scope = _scope(turns=2)
    spent = Observed()
    verdicts = []
    for _ in range(3):
        judged = judge_child_call(
            scope,
            spent,
            [("repository.read", "src/calc.py")],
            RUN_LAYERS,
            exhausted=False,
            repository_root=str(tmp_path),
        )
        spent = judged.observed
        verdicts.append((judged.allowed, judged.layer, judged.code, judged.newly_exhausted))
    assert verdicts == [
        (True, None, "allowed", False),
        (True, None, "allowed", False),
        (False, "cast_budget", "turn_capped", True),
    ]
    # The cut-off names its layer and rule, and the target as the layers would trace it.
    assert "(layer: cast_budget; turn_capped)" in judged.reason
    assert judged.scope == "src/calc.py"
    assert spent == Observed(3, 3)
    # Once exhausted, every further call is denied, and still counted.
    after = judge_child_call(
        scope,
        spent,
        [("repository.read", "src/calc.py")],
        RUN_LAYERS,
        exhausted=True,
        repository_root=str(tmp_path),
    )
    assert (after.allowed, after.layer, after.code, after.newly_exhausted) == (
        False,
        "cast_budget",
        "cast_exhausted",
        False,
    )
    assert after.observed == Observed(4, 4)
    assert "partial" in after.reason
    assert "(layer: cast_budget; cast_exhausted)" in after.reason
    assert after.scope == "src/calc.py"


def test_a_scope_survives_its_json_and_refuses_what_is_not_one() -> None:
    scope = _scope()
    assert ChildScope.from_json(scope.to_json()) == scope
    bad_ones: list[object] = [[], {"castId": "c", "maxTurns": 0, "readOnly": True}, {"castId": 1}]
    for bad in bad_ones:
        with pytest.raises(ValueError, match="child scope"):
            ChildScope.from_json(bad)


@pytest.mark.parametrize(
    ("message", "returned"),
    [
        ('{"claim": "add() subtracts", "evidence": []}', True),
        ('```json\n{"claim": "add() subtracts"}\n```', True),
        ("I looked and add() subtracts.", False),
        ('{"evidence": []}', False),
        ("[1, 2]", False),
        ("", False),
        (None, False),
    ],
)
def test_the_return_check_takes_only_a_packet_object(message: str | None, returned: bool) -> None:
    assert returned_packet(message) is returned


# ---------------------------------------------------------------- durable, across restarts


STORES = [
    pytest.param("memory", "asyncio", id="memory-asyncio"),
    pytest.param("sqlite", "asyncio", id="sqlite-asyncio"),
    pytest.param("sqlite", "trio", id="sqlite-trio"),
    pytest.param("postgres", "asyncio", id="postgres-asyncio", marks=pytest.mark.postgres),
]


@pytest.fixture
async def store(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Any]:
    """A ledger store every session opens anew: a memory ledger (kept open, as one process's
    would be), a SQLite file or a fresh PostgreSQL schema."""
    if store_kind == "memory":
        async with open_ledger("memory://") as ledger:
            yield ledger
        return
    if store_kind == "sqlite":
        yield f"sqlite://{tmp_path / 'ledger-state' / 'ledger.sqlite3'}"
        return
    url: str = request.getfixturevalue("postgres_url")  # the ledger suite's: fails in CI if unset
    yield url


@asynccontextmanager
async def _session(store: Any, state: Path, **kwargs: Any) -> AsyncIterator[tuple[Any, Ledger]]:
    if not isinstance(store, str):
        async with serving(state, ledger=store, **kwargs) as (service, _):
            yield service, store
        return
    async with (
        open_ledger(store) as ledger,
        serving(state, ledger=ledger, **kwargs) as (
            service,
            _,
        ),
    ):
        yield service, ledger


async def _hook_writes(ledger: Ledger, run_id: str, kinds: list[tuple[str, str]]) -> None:
    """Append what a host's hook writes, from outside the service (another writer)."""
    run = await ledger.get_run(run_id)
    for number, (event_type, summary) in enumerate(kinds):
        await ledger.record_events(
            run_id,
            [
                event(
                    run,
                    event_type,
                    actor="host",
                    event_id=f"hook-{event_type}-{number}",
                    timestamp=utc_now(),
                    summary=summary,
                )
            ],
        )


@pytest.mark.anyio
@pytest.mark.parametrize(("store_kind", "anyio_backend"), STORES)
async def test_a_binding_and_observed_spend_survive_a_restart_into_the_partial(
    store: Any, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with anyio.fail_after(60):
        async with _session(store, state, clock=ManualClock()) as (service, ledger):
            flow = await ServiceFlow.start(service, cast_types=[_EXPLORE_2])
            await flow.to_execute()
            child = await flow.cast(budget={"maxTurns": 2, "maxTotalTokens": 20_000})
            run_id = flow.b.run_id
            scope = await load_child_scope(ledger, run_id, child.cast_id)
            assert scope is not None
            assert (scope.max_turns, scope.read_only, scope.pointers) == (
                2,
                True,
                ("src/retry.py",),
            )
            await _hook_writes(
                ledger,
                run_id,
                [
                    (HANDOFF_EVENT, handoff_summary(child.cast_id, "telic-cast")),
                    (BOUND_EVENT, bound_summary(child.cast_id, "agent-7")),
                    (
                        CALL_EVENT,
                        call_summary(child.cast_id, "agent-7", Observed(1, 1), allowed=True),
                    ),
                    (
                        CALL_EVENT,
                        call_summary(child.cast_id, "agent-7", Observed(2, 2), allowed=True),
                    ),
                    (
                        CALL_EVENT,
                        call_summary(child.cast_id, "agent-7", Observed(3, 3), allowed=False),
                    ),
                    (EXHAUSTED_EVENT, f'{{"castId":"{child.cast_id}","stopReason":"turn_capped"}}'),
                ],
            )
        # A restarted server: the binding is still there, and so is what the hook observed.
        async with _session(store, state, new_id=ids_from("again")) as (service, ledger):
            again = await load_child_scope(ledger, run_id, child.cast_id)
            assert again == scope
            trace = [
                (e.event_type, e.decision_summary)
                for e in (await ledger.page_trace(run_id, 0, 1000)).events
            ]
            assert children_of(trace).cast_of("agent-7") == child.cast_id
            with pytest.raises(PacketRefusal) as refused:
                await service.return_packet(run_id, child.cast_id, good_return())
            assert refused.value.code == "budget_exhausted_requires_partial"
            partial = await service.return_packet(
                run_id, child.cast_id, good_return(remaining=["the caller of retry"])
            )
            # The typed partial carries what Telic observed, though the child reported nothing.
            assert (partial.outcome, partial.stop_reason) == ("partial", "turn_capped")
            assert (partial.counters.turns, partial.counters.tool_calls) == (3, 3)
            assert await load_child_scope(ledger, run_id, child.cast_id) is None  # returned
            assert (await service.verify_run(run_id)).ok
            # The digest and the report: the observed spend beside the self-reported tokens.
            seen = "(locate; 0 tokens self-reported; 3 turns, 3 tool calls observed)"
            assert seen in await service.get_digest(run_id)
            assert seen in render_markdown(await load_run_report(ledger, run_id))


_EXPLORE_2 = {
    "castType": "explore",
    "enabled": True,
    "ceilingTurns": 10,
    "ceilingTokens": 50_000,
    "readOnly": True,
    "allowedNeedCodes": ["locate"],
}


@pytest.mark.anyio
@pytest.mark.parametrize(("store_kind", "anyio_backend"), STORES[:2])
async def test_a_running_server_sees_the_hooks_exhaustion_without_a_restart(
    store: Any, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        async with _session(store, tmp_path / "state", clock=ManualClock()) as (service, ledger):
            flow = await ServiceFlow.start(service, cast_types=[_EXPLORE_2])
            await flow.to_execute()
            child = await flow.cast(budget={"maxTurns": 2, "maxTotalTokens": 20_000})
            run_id = flow.b.run_id
            # The run actor holds the cast open in memory; the hook writes beside it.
            await _hook_writes(
                ledger,
                run_id,
                [
                    (BOUND_EVENT, bound_summary(child.cast_id, "agent-7")),
                    (
                        CALL_EVENT,
                        call_summary(child.cast_id, "agent-7", Observed(3, 3), allowed=False),
                    ),
                    (EXHAUSTED_EVENT, f'{{"castId":"{child.cast_id}","stopReason":"turn_capped"}}'),
                ],
            )
            with pytest.raises(PacketRefusal) as refused:
                await service.cast_progress(
                    run_id, child.cast_id, turns=1, tool_calls=1, input_tokens=9, output_tokens=9
                )
            assert refused.value.code == "budget_exhausted_requires_partial"
            partial = await service.return_packet(
                run_id, child.cast_id, good_return(remaining=["the caller of retry"])
            )
            assert (partial.stop_reason, partial.counters.turns) == ("turn_capped", 3)


@pytest.mark.anyio
@pytest.mark.parametrize(("store_kind", "anyio_backend"), STORES[:1])
async def test_a_progress_report_keeps_reported_and_observed_spend_apart(
    store: Any, tmp_path: Path
) -> None:
    async with _session(store, tmp_path / "state", clock=ManualClock()) as (service, ledger):
        flow = await ServiceFlow.start(service, cast_types=[_EXPLORE_2])
        await flow.to_execute()
        child = await flow.cast(budget={"maxTurns": 5, "maxTotalTokens": 20_000})
        seen = call_summary(child.cast_id, "agent-7", Observed(2, 2), allowed=True)
        await _hook_writes(ledger, flow.b.run_id, [(CALL_EVENT, seen)])
        status = await service.cast_progress(
            flow.b.run_id, child.cast_id, turns=1, tool_calls=1, input_tokens=10, output_tokens=5
        )
        wire = status.to_wire()
        spend: Any = wire["spend"]
        counters: Any = wire["counters"]
        assert (spend["selfReported"]["turns"], spend["selfReported"]["toolCalls"]) == (1, 1)
        assert (spend["measured"]["turnsObserved"], spend["measured"]["toolCallsObserved"]) == (
            2,
            2,
        )
        assert (counters["turns"], counters["toolCalls"]) == (2, 2)  # the larger of the two
        assert not status.exhausted
