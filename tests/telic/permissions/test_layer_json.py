"""A permission layer survives plain JSON unchanged, and a malformed one is refused."""

from __future__ import annotations

import json

import pytest

from telic import UsageError
from telic.permissions import Layer, authorize_action, mode_ceiling
from telic.protocol._types import PermissionSet


def test_a_layer_read_back_from_its_json_is_the_same_layer() -> None:
    layers = [
        Layer.for_mode("analyze_and_fix"),
        Layer.from_permissions("authorization", mode_ceiling("fix_only")),
        Layer.from_permissions("phase", PermissionSet.empty()),
        Layer("custom", deny=(Layer.for_mode("report_only").deny)),
    ]
    for layer in layers:
        assert Layer.from_json(json.loads(json.dumps(layer.to_json()))) == layer


def test_a_decision_over_layers_read_back_is_the_same_decision() -> None:
    layers = (Layer.for_mode("fix_only"), Layer.from_permissions("a", mode_ceiling("fix_only")))
    back = tuple(Layer.from_json(json.loads(json.dumps(x.to_json()))) for x in layers)
    for capability, target in (("repository.write", "src/a.py"), ("external.write", "x")):
        first = authorize_action(capability, target, layers, repository_root="/r")  # type: ignore[arg-type]
        second = authorize_action(capability, target, back, repository_root="/r")  # type: ignore[arg-type]
        assert first == second


@pytest.mark.parametrize(
    "value",
    [
        [],
        {"name": "x", "allow": []},
        {"name": "", "allow": [], "deny": []},
        {"name": "x", "allow": [["teleport", None]], "deny": []},
        {"name": "x", "allow": [["repository.read", "**"]], "deny": []},
        {"name": "x", "allow": [["repository.read", [1]]], "deny": []},
        {"name": "x", "allow": {}, "deny": []},
        {"name": "x", "allow": [], "deny": [], "extra": 1},
    ],
)
def test_a_malformed_stored_layer_is_refused(value: object) -> None:
    with pytest.raises(UsageError):
        Layer.from_json(value)
