"""Casting: routing reasons, budgets, the cast-type registry, handoffs and ``check_cast``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic_packets import (
    CAST_REFUSAL_CODES,
    CastBudget,
    CastContext,
    CastRefusal,
    CastRefusalCode,
    CastType,
    CastTypeRegistry,
    Handoff,
    RoutingReason,
    check_cast,
)

ROUTING: dict[str, Any] = {
    "needCode": "locate",
    "text": "Find where the retry limit is defined",
    "expectedEvidence": ["file_state"],
}
BUDGET: dict[str, Any] = {"maxTurns": 8, "maxTotalTokens": 20000}
REGISTRY = CastTypeRegistry.from_wire(
    {
        "castTypes": [
            {
                "castType": "explore",
                "enabled": True,
                "ceilingTurns": 10,
                "ceilingTokens": 50000,
                "readOnly": True,
                "allowedNeedCodes": ["locate", "diagnose", "review"],
            },
            {
                "castType": "builder",
                "enabled": False,
                "ceilingTurns": 30,
                "ceilingTokens": 200000,
                "readOnly": False,
                "allowedNeedCodes": ["draft"],
            },
            {
                "castType": "measurer",
                "ceilingTurns": 10,
                "ceilingTokens": 50000,
                "allowedNeedCodes": ["measure"],
            },
        ]
    }
)
CONTEXT = CastContext(
    node_executing=True, may_spawn=True, children=1, max_children=4, depth=0, max_depth=2
)
HANDOFF: dict[str, Any] = {
    "castId": "cast_01",
    "brief": "Find where the retry limit is defined; see the pointers.",
    "pointers": ["repo://src/retry.py", "artifact://run_01/ev_tests"],
    "packetRefs": ["pk_0123abcd"],
}
KINDS = ["observation", "measurement", "failure", "file_state", "test_result", "citation"]


def attempt(
    *,
    cast_type: str = "explore",
    routing: object = ROUTING,
    budget: object = BUDGET,
    context: CastContext = CONTEXT,
) -> None:
    check_cast(
        cast_type=cast_type, routing=routing, budget=budget, registry=REGISTRY, context=context
    )


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


@pytest.mark.covers("refusal.cast.admitted", "refusal.cast.budget-at-ceiling")
def test_a_cast_within_every_rule_is_granted() -> None:
    grant = check_cast(
        cast_type="explore",
        routing=ROUTING,
        budget={"maxTurns": 10, "maxTotalTokens": 50000},
        registry=REGISTRY,
        context=CONTEXT,
    )
    assert grant.cast_type.cast_type == "explore"
    assert grant.routing.need_code == "locate"
    assert grant.budget.max_turns == 10


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        pytest.param(
            {"routing": None},
            "missing_routing_reason",
            marks=pytest.mark.covers("refusal.cast.missing-routing-reason"),
            id="no-routing",
        ),
        pytest.param({"routing": "because"}, "missing_routing_reason", id="routing-not-object"),
        pytest.param(
            {"routing": with_(ROUTING, text="")},
            "missing_routing_reason",
            marks=pytest.mark.covers("refusal.cast.invalid-routing-reason"),
            id="routing-invalid",
        ),
        pytest.param(
            {"routing": {k: v for k, v in ROUTING.items() if k != "needCode"}},
            "missing_routing_reason",
            id="routing-without-need",
        ),
        pytest.param(
            {"routing": with_(ROUTING, needCode="explore")},
            "unknown_need_code",
            marks=pytest.mark.covers("refusal.cast.unknown-need-code"),
            id="need-outside-set",
        ),
        pytest.param(
            {"routing": with_(ROUTING, needCode="draft")},
            "unknown_need_code",
            marks=pytest.mark.covers("refusal.cast.need-code-not-allowed-for-type"),
            id="need-not-allowed",
        ),
        pytest.param(
            {"cast_type": "builder", "routing": with_(ROUTING, needCode="draft")},
            "cast_type_disabled",
            marks=pytest.mark.covers("refusal.cast.cast-type-disabled"),
            id="disabled",
        ),
        pytest.param(
            {"cast_type": "shell"},
            "cast_type_disabled",
            marks=pytest.mark.covers("refusal.cast.cast-type-absent"),
            id="absent",
        ),
        pytest.param(
            {"cast_type": "measurer", "routing": with_(ROUTING, needCode="measure")},
            "cast_type_disabled",
            marks=pytest.mark.covers("refusal.cast.cast-type-off-by-default"),
            id="off-by-default",
        ),
        pytest.param(
            {"budget": None},
            "budget_missing",
            marks=pytest.mark.covers("refusal.cast.budget-missing"),
            id="no-budget",
        ),
        pytest.param(
            {"budget": {"maxTurns": 0, "maxTotalTokens": 100}},
            "budget_missing",
            marks=pytest.mark.covers("refusal.cast.budget-invalid"),
            id="budget-invalid",
        ),
        pytest.param(
            {"budget": with_(BUDGET, maxTurns=11)},
            "budget_exceeds_ceiling",
            marks=pytest.mark.covers("refusal.cast.budget-exceeds-turn-ceiling"),
            id="turns-over-ceiling",
        ),
        pytest.param(
            {"budget": with_(BUDGET, maxTotalTokens=50001)},
            "budget_exceeds_ceiling",
            marks=pytest.mark.covers("refusal.cast.budget-exceeds-token-ceiling"),
            id="tokens-over-ceiling",
        ),
        pytest.param(
            {"context": CONTEXT.model_copy(update={"children": 4})},
            "children_limit",
            marks=pytest.mark.covers("refusal.cast.children-limit"),
            id="children",
        ),
        pytest.param(
            {"context": CONTEXT.model_copy(update={"depth": 2})},
            "depth_limit",
            marks=pytest.mark.covers("refusal.cast.depth-limit"),
            id="depth",
        ),
        pytest.param(
            {"context": CONTEXT.model_copy(update={"may_spawn": False})},
            "spawn_not_permitted",
            marks=pytest.mark.covers("refusal.cast.spawn-not-permitted"),
            id="spawn",
        ),
        pytest.param(
            {"context": CONTEXT.model_copy(update={"node_executing": False})},
            "node_not_executing",
            marks=pytest.mark.covers("refusal.cast.node-not-executing"),
            id="node",
        ),
        pytest.param(
            {
                "cast_type": "shell",
                "routing": None,
                "budget": None,
                "context": CONTEXT.model_copy(update={"may_spawn": False}),
            },
            "missing_routing_reason",
            marks=pytest.mark.covers("refusal.cast.order-follows-contract"),
            id="contract-order",
        ),
    ],
)
def test_a_faulty_cast_is_refused_with_its_code(
    changes: dict[str, Any], code: CastRefusalCode
) -> None:
    with pytest.raises(CastRefusal) as caught:
        attempt(**changes)
    assert caught.value.code == code
    assert caught.value.code in CAST_REFUSAL_CODES


def test_registry_check_refuses_a_missing_budget() -> None:
    routing = RoutingReason.from_wire(ROUTING)
    with pytest.raises(CastRefusal) as caught:
        REGISTRY.check("explore", routing, None)
    assert caught.value.code == "budget_missing"


def test_registry_check_returns_the_entry_for_a_budget_within_ceilings() -> None:
    routing = RoutingReason.from_wire(ROUTING)
    entry = REGISTRY.check("explore", routing, CastBudget.from_wire(BUDGET))
    assert entry.ceiling_turns == 10


def test_a_new_cast_type_is_off_until_enabled_and_enabling_returns_a_copy() -> None:
    entry = REGISTRY.get("measurer")
    assert entry is not None
    assert entry.enabled is False
    assert entry.read_only is True
    enabled = REGISTRY.with_enabled("measurer")
    assert enabled.get("measurer") is not None
    assert enabled.get("measurer").enabled  # type: ignore[union-attr]
    assert REGISTRY.get("measurer").enabled is False  # type: ignore[union-attr]
    assert enabled.with_enabled("measurer", enabled=False).get("measurer").enabled is False  # type: ignore[union-attr]


def test_enabling_an_unregistered_cast_type_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        REGISTRY.with_enabled("shell")


def test_a_registry_rejects_two_entries_of_one_name() -> None:
    entry = REGISTRY.cast_types[0]
    with pytest.raises(ValidationError, match="unique"):
        CastTypeRegistry(cast_types=[entry, entry])


def test_a_cast_type_repeating_a_need_code_is_invalid() -> None:
    with pytest.raises(ValidationError):
        CastType(
            cast_type="x",
            ceiling_turns=1,
            ceiling_tokens=1,
            allowed_need_codes=["locate", "locate"],
        )


@pytest.mark.covers("schema.cast-type.valid")
def test_a_cast_type_entry_without_enabled_validates_as_disabled() -> None:
    entry = CastType.from_wire(
        {"castType": "m", "ceilingTurns": 1, "ceilingTokens": 1, "allowedNeedCodes": ["measure"]}
    )
    assert entry.enabled is False


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param(ROUTING, True, marks=pytest.mark.covers("schema.routing.valid")),
        pytest.param(
            with_(ROUTING, text="   "), False, marks=pytest.mark.covers("schema.routing.blank-text")
        ),
        pytest.param(
            with_(ROUTING, expectedEvidence=[]),
            False,
            marks=pytest.mark.covers("schema.routing.expected-evidence-required"),
        ),
        pytest.param(
            with_(ROUTING, expectedEvidence=["failure", "failure"]), False, id="repeated-kind"
        ),
        pytest.param(
            with_(ROUTING, text="a" * 200),
            True,
            marks=pytest.mark.covers("bounds.routing-text.at-limit"),
        ),
        pytest.param(
            with_(ROUTING, text="a" * 201),
            False,
            marks=pytest.mark.covers("bounds.routing-text.over-limit"),
        ),
        pytest.param(
            with_(ROUTING, expectedEvidence=KINDS[:4]),
            True,
            marks=pytest.mark.covers("bounds.expected-evidence.at-limit"),
        ),
        pytest.param(
            with_(ROUTING, expectedEvidence=KINDS[:5]),
            False,
            marks=pytest.mark.covers("bounds.expected-evidence.over-limit"),
        ),
        pytest.param(
            with_(ROUTING, acceptance=[f"c{i}" for i in range(6)]),
            True,
            marks=pytest.mark.covers("bounds.acceptance-items.at-limit"),
        ),
        pytest.param(
            with_(ROUTING, acceptance=[f"c{i}" for i in range(7)]),
            False,
            marks=pytest.mark.covers("bounds.acceptance-items.over-limit"),
        ),
        pytest.param(
            with_(ROUTING, acceptance=["a" * 120]),
            True,
            marks=pytest.mark.covers("bounds.acceptance-chars.at-limit"),
        ),
        pytest.param(
            with_(ROUTING, acceptance=["a" * 121]),
            False,
            marks=pytest.mark.covers("bounds.acceptance-chars.over-limit"),
        ),
    ],
)
def test_routing_reason_bounds_and_rules(value: dict[str, Any], valid: bool) -> None:
    if valid:
        RoutingReason.from_wire(value)
    else:
        with pytest.raises(ValidationError):
            RoutingReason.from_wire(value)


@pytest.mark.covers("schema.budget.valid", "schema.budget.turns-at-least-one")
def test_a_budget_needs_at_least_one_turn_and_one_token() -> None:
    assert CastBudget.from_wire(BUDGET).max_wall_ms is None
    for fault in ({"maxTurns": 0}, {"maxTotalTokens": 0}, {"maxWallMs": 0}, {"maxTurns": True}):
        with pytest.raises(ValidationError):
            CastBudget.from_wire(with_(BUDGET, **fault))


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param(HANDOFF, True, marks=pytest.mark.covers("handoff.valid")),
        pytest.param(
            with_(HANDOFF, pointers=[f"repo://src/m{i}.py" for i in range(8)]),
            True,
            marks=pytest.mark.covers("bounds.pointers.at-limit"),
        ),
        pytest.param(
            with_(HANDOFF, pointers=[f"repo://src/m{i}.py" for i in range(9)]),
            False,
            marks=pytest.mark.covers("bounds.pointers.over-limit"),
        ),
        pytest.param(
            with_(HANDOFF, pointers=["repo://" + "a" * 505]),
            True,
            marks=pytest.mark.covers("bounds.pointer-chars.at-limit"),
        ),
        pytest.param(
            with_(HANDOFF, pointers=["repo://" + "a" * 506]),
            False,
            marks=pytest.mark.covers("bounds.pointer-chars.over-limit"),
        ),
        pytest.param(
            with_(HANDOFF, brief="a" * 1000),
            True,
            marks=pytest.mark.covers("bounds.brief.at-limit"),
        ),
        pytest.param(
            with_(HANDOFF, brief="a" * 1001),
            False,
            marks=pytest.mark.covers("bounds.brief.over-limit"),
        ),
        pytest.param(
            with_(HANDOFF, brief="  "), False, marks=pytest.mark.covers("handoff.brief-not-blank")
        ),
        pytest.param(
            with_(HANDOFF, packetRefs=[f"pk_0000000{i}" for i in range(8)]),
            True,
            marks=pytest.mark.covers("bounds.packet-refs.at-limit"),
        ),
        pytest.param(
            with_(HANDOFF, packetRefs=[f"pk_0000000{i}" for i in range(9)]),
            False,
            marks=pytest.mark.covers("bounds.packet-refs.over-limit"),
        ),
        pytest.param(
            with_(HANDOFF, pointers=["file:///etc/passwd"]),
            False,
            marks=pytest.mark.covers("handoff.pointer-scheme"),
        ),
        pytest.param(
            with_(HANDOFF, pointers=["artifact://run_01"]), False, id="artifact-without-id"
        ),
        pytest.param(with_(HANDOFF, pointers=["repo://a.py", "repo://a.py"]), False, id="repeated"),
    ],
)
def test_handoff_bounds_and_rules(value: dict[str, Any], valid: bool) -> None:
    if valid:
        Handoff.from_wire(value)
    else:
        with pytest.raises(ValidationError):
            Handoff.from_wire(value)


@pytest.mark.parametrize(
    "field",
    [
        pytest.param("transcript", marks=pytest.mark.covers("handoff.transcript-rejected")),
        pytest.param("history", marks=pytest.mark.covers("handoff.history-rejected")),
        pytest.param("messages", marks=pytest.mark.covers("handoff.messages-rejected")),
    ],
)
def test_a_handoff_cannot_carry_the_parent_transcript(field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Handoff.from_wire(with_(HANDOFF, **{field: [{"role": "user", "content": "…"}]}))
    assert [error["type"] for error in caught.value.errors()] == ["extra_forbidden"]
    assert field not in Handoff.model_fields
    assert field not in {info.alias for info in Handoff.model_fields.values()}


def test_a_cast_refusal_only_takes_cast_codes() -> None:
    with pytest.raises(ValueError, match="cast refusal"):
        CastRefusal("not_a_packet", "wrong family")  # type: ignore[arg-type]


# ------------------------------------------------------------------ which refusal wins


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        pytest.param(
            {
                "budget": with_(BUDGET, maxTurns=11),
                "context": CONTEXT.model_copy(
                    update={"node_executing": False, "may_spawn": False, "children": 4}
                ),
            },
            "budget_exceeds_ceiling",
            marks=pytest.mark.covers("refusal.cast.precedence.request-before-standing"),
            id="request-first",
        ),
        pytest.param(
            {
                "context": CastContext(
                    node_executing=False,
                    may_spawn=False,
                    children=4,
                    max_children=4,
                    depth=2,
                    max_depth=2,
                )
            },
            "node_not_executing",
            marks=pytest.mark.covers("refusal.cast.precedence.node-before-spawn"),
            id="node-before-spawn",
        ),
        pytest.param(
            {
                "context": CastContext(
                    node_executing=True,
                    may_spawn=False,
                    children=0,
                    max_children=0,
                    depth=0,
                    max_depth=0,
                )
            },
            "spawn_not_permitted",
            marks=pytest.mark.covers("refusal.cast.precedence.spawn-before-limits"),
            id="spawn-before-limits",
        ),
        pytest.param(
            {"context": CONTEXT.model_copy(update={"children": 4, "depth": 2})},
            "children_limit",
            marks=pytest.mark.covers("refusal.cast.precedence.children-before-depth"),
            id="children-before-depth",
        ),
        pytest.param(
            {
                "context": CONTEXT.model_copy(
                    update={"depth": 2, "in_flight": 3, "max_in_flight": 3}
                )
            },
            "depth_limit",
            marks=pytest.mark.covers("refusal.cast.precedence.depth-before-in-flight"),
            id="depth-before-in-flight",
        ),
    ],
)
def test_with_several_faults_the_first_in_the_contract_s_precedence_is_reported(
    changes: dict[str, Any], code: CastRefusalCode
) -> None:
    with pytest.raises(CastRefusal) as caught:
        attempt(**changes)
    assert caught.value.code == code


def test_the_precedence_holds_for_every_pair_of_standing_faults() -> None:
    # Each fault alone, then every pair: the earlier one in the precedence is reported.
    faults: list[tuple[CastRefusalCode, dict[str, Any]]] = [
        ("node_not_executing", {"node_executing": False}),
        ("spawn_not_permitted", {"may_spawn": False}),
        ("children_limit", {"children": 4}),
        ("depth_limit", {"depth": 2}),
        ("children_limit", {"in_flight": 3, "max_in_flight": 3}),
    ]
    for first, (code, fault) in enumerate(faults):
        for _, later in faults[first:]:
            context = CONTEXT.model_copy(update={**later, **fault})
            with pytest.raises(CastRefusal) as caught:
                attempt(context=context)
            assert caught.value.code == code, (fault, later)


# ------------------------------------------------------------------ what bounds parallel children


@pytest.mark.parametrize(
    ("update", "refused"),
    [
        pytest.param(
            {"in_flight": 2, "max_in_flight": 3},
            "",
            marks=pytest.mark.covers("bounds.parallel-children.at-limit"),
            id="in-flight-below",
        ),
        pytest.param(
            {"in_flight": 3, "max_in_flight": 3},
            "the run allows 3 at once",
            marks=pytest.mark.covers("bounds.parallel-children.over-limit"),
            id="in-flight-at",
        ),
        pytest.param(
            {"children": 4, "in_flight": 0, "max_in_flight": 3},
            "already started 4 of its 4 casts",
            marks=pytest.mark.covers("bounds.node-children.sealed-count"),
            id="sealed-children-count",
        ),
        pytest.param(
            {"children": 3, "in_flight": 0, "max_in_flight": 3},
            "",
            marks=pytest.mark.covers("bounds.node-children.below"),
            id="last-child",
        ),
        pytest.param({"in_flight": 99}, "", id="no-run-bound-given"),
    ],
)
def test_children_are_bounded_per_caller_and_in_flight_per_run(
    update: dict[str, Any], refused: str
) -> None:
    context = CONTEXT.model_copy(update=update)
    if not refused:
        attempt(context=context)
        return
    with pytest.raises(CastRefusal) as caught:
        attempt(context=context)
    assert caught.value.code == "children_limit"
    assert refused in caught.value.message


def test_a_context_without_the_run_bound_reads_as_before() -> None:
    context = CastContext.from_wire(
        {
            "nodeExecuting": True,
            "maySpawn": True,
            "children": 0,
            "maxChildren": 1,
            "depth": 0,
            "maxDepth": 1,
        }
    )
    assert (context.in_flight, context.max_in_flight) == (0, None)
    assert context.to_wire()["inFlight"] == 0
