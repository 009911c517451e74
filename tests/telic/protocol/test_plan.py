"""WorkPlan: the golden body, round trips, and a negative test for every schema rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from telic.protocol._canonical import canonical_sha256
from telic.protocol._plan import WorkPlan
from tests.telic.protocol.bodies import changed, first_error_type, load_golden


def golden() -> dict[str, Any]:
    return load_golden("WorkPlan")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(WorkPlan, body)


def plan_with_edges(edges: dict[str, list[str]]) -> dict[str, Any]:
    """A plan whose nodes are the keys of ``edges``, each depending on its listed nodes."""
    body = golden()
    template = body["nodes"][0]
    body["nodes"] = [{**copy.deepcopy(template), "id": n, "dependsOn": d} for n, d in edges.items()]
    return body


# --------------------------------------------------------------------------------- golden


def test_golden_plan_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    plan = WorkPlan.from_wire(body)
    assert plan.to_wire() == body
    assert WorkPlan.from_wire(plan.to_wire()) == plan
    assert canonical_sha256(plan.to_wire()) == canonical_sha256(body)


def test_plan_dumps_camel_case_names() -> None:
    wire = WorkPlan.from_wire(golden()).to_wire()
    assert {"taskContractRef", "executionMode", "joinRules", "globalBudgets"} <= wire.keys()
    assert {"dependsOn", "allowedTools", "requiredCapabilities", "outputType"} <= (
        wire["nodes"][0].keys()
    )
    assert wire["globalBudgets"]["maximumParallelWorkers"] == 1


@pytest.mark.parametrize(
    "edges",
    [
        {"a": []},
        {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]},  # a diamond is not a cycle
        {"d": ["b", "c"], "c": ["a"], "b": ["a"], "a": []},  # nor in reverse order
        {"a": [], "b": ["a", "a"]},  # a repeated edge is harmless
    ],
)
def test_acyclic_graphs_are_accepted(edges: dict[str, list[str]]) -> None:
    assert [node.id for node in WorkPlan.from_wire(plan_with_edges(edges)).nodes] == list(edges)


def test_sixty_four_nodes_are_accepted() -> None:
    edges = {f"n{i}": ([f"n{i - 1}"] if i else []) for i in range(64)}
    assert len(WorkPlan.from_wire(plan_with_edges(edges)).nodes) == 64


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "plan notes"}, "extra_forbidden"),
        ({"nodes.0.priority": 1}, "extra_forbidden"),
        ({"nodes.0.budgets.maximumTokens": 10}, "extra_forbidden"),
        ({"globalBudgets.maximumWallClock": 60}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"executionMode": "parallel"}, "literal_error"),
        ({"executionMode": "mixed"}, "literal_error"),
        ({"globalBudgets.maximumParallelWorkers": 2}, "literal_error"),
        ({"globalBudgets.maximumParallelWorkers": True}, "int_type"),
        ({"globalBudgets.maximumParallelWorkers": 1.0}, "int_type"),
        ({"globalBudgets.maximumToolCalls": 4_001}, "less_than_equal"),
        ({"globalBudgets.maximumSubagentDepth": 5}, "less_than_equal"),
        ({"nodes": []}, "too_short"),
        ({"nodes.0.budgets.maximumToolCalls": 1_001}, "less_than_equal"),
        ({"nodes.0.budgets.maximumChildren": 17}, "less_than_equal"),
        ({"nodes.0.budgets.maximumToolCalls": -1}, "greater_than_equal"),
        ({"nodes.0.outputType": "Evidence"}, "literal_error"),
        ({"nodes.0.allowedTools": ["repository.rewrite"]}, "literal_error"),
        ({"nodes.0.logicalRole": "r" * 256}, "string_too_long"),
        ({"nodes.0.dependsOn": ["x"] * 65}, "too_long"),
        ({"nodes.0.stopConditions": ["stop"] * 65}, "too_long"),
        ({"joinRules": ["join"] * 65}, "too_long"),
        ({"planValidation": "approved"}, "literal_error"),
        ({"taskContractRef": "repo://contract.json"}, "string_pattern_mismatch"),
        ({"rationaleSummary": "ß" * 4_096}, "string_too_many_bytes"),
    ],
)
def test_a_malformed_plan_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


def test_more_than_sixty_four_nodes_are_rejected() -> None:
    edges: dict[str, list[str]] = {f"n{i}": [] for i in range(65)}
    assert rejection(plan_with_edges(edges)) == "too_long"


# --------------------------------------------------------------------------------- graph


def test_node_ids_must_be_unique() -> None:
    body = changed(golden(), {"nodes.1.id": "apply-fix", "nodes.1.dependsOn": []})
    assert rejection(body) == "duplicate_node_id"


def test_a_dependency_on_an_unknown_node_is_rejected() -> None:
    assert rejection(changed(golden(), {"nodes.1.dependsOn": ["deploy"]})) == "unknown_dependency"


def test_a_self_dependent_node_is_rejected() -> None:
    assert rejection(changed(golden(), {"nodes.0.dependsOn": ["apply-fix"]})) == ("self_dependency")


@pytest.mark.parametrize(
    "edges",
    [
        {"a": ["b"], "b": ["a"]},
        {"a": ["c"], "b": ["a"], "c": ["b"]},
        {"root": [], "a": ["root", "c"], "b": ["a"], "c": ["b"]},  # a cycle below a root
        {"a": [], "b": ["a", "d"], "c": ["b"], "d": ["c"], "e": ["a"]},
    ],
)
def test_a_cyclic_plan_is_rejected(edges: dict[str, list[str]]) -> None:
    assert rejection(plan_with_edges(edges)) == "dependency_cycle"
