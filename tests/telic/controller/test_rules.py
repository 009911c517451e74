"""The registry answers which rules judge a type once, and the answer is the filter's."""

from __future__ import annotations

from typing import get_args

import pytest

from telic.controller import RULES, all_rule_ids
from telic.controller._rules import rules_for
from telic.protocol import ArtifactType


@pytest.mark.parametrize("artifact_type", [*get_args(ArtifactType), "NoSuchType"])
def test_the_rules_for_a_type_are_those_that_apply_to_it_in_registry_order(
    artifact_type: str,
) -> None:
    expected = tuple(rule for rule in RULES if rule.applies_to(artifact_type))
    assert rules_for(artifact_type) == expected
    assert expected  # every type is judged by the rules for any type at least


def test_every_rule_id_is_reported_by_one_gate_or_rule_only() -> None:
    ids = all_rule_ids()
    assert len(set(ids)) == len(ids)
