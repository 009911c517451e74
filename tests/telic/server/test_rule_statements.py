"""Every controller rule is stated where a host model looks: on the field it constrains, in the
type text and in the full JSON Schema, generated from the rule registry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from telic.controller import GENERAL, STATEMENTS, UNSTATED, field_statements, rule_ids
from telic.protocol import json_schema
from telic.server import WORKFLOW_INSTRUCTIONS
from telic.server._schemas import (
    NOTATION_KEY,
    SCHEMA_TYPES,
    emitted_schema,
    full_schema,
)
from tests.telic.server.notation_decoder import compact_object

_HOST_TYPES = [kind for kind in SCHEMA_TYPES if kind != "ContextManifest"]


def test_every_registered_rule_is_stated_or_classed_with_a_reason() -> None:
    registered = set(rule_ids())
    classes = [set(STATEMENTS), set(GENERAL), set(UNSTATED)]
    unplaced = registered - set().union(*classes)
    assert not unplaced, (
        f"rules stated nowhere (add them to telic/controller/_statements.py): {sorted(unplaced)}"
    )
    unknown = set().union(*classes) - registered
    assert not unknown, f"statements for rules the registry lacks: {sorted(unknown)}"
    twice = [rule for rule in registered if sum(rule in group for group in classes) > 1]
    assert not twice
    assert all(STATEMENTS[rule] for rule in STATEMENTS)
    assert all(reason.strip() for reason in (*GENERAL.values(), *UNSTATED.values()))


def test_every_general_rule_is_stated_in_the_prompt_in_its_words() -> None:
    prompt = " ".join(WORKFLOW_INSTRUCTIONS.split())
    missing = {rule: words for rule, words in GENERAL.items() if words not in prompt}
    assert not missing


def _defs_elsewhere(kind: str) -> set[str]:
    return {
        name
        for other in _HOST_TYPES
        if other != kind
        for name in json_schema(other).get("$defs") or {}
    }


@pytest.mark.parametrize(("rule", "at"), [(r, s.at) for r, ss in STATEMENTS.items() for s in ss])
def test_every_statement_names_a_location_of_its_type_that_no_other_type_shares(
    rule: str, at: str
) -> None:
    kind, _, path = at.partition(":")
    assert kind in _HOST_TYPES, rule
    schema: dict[str, Any] = json_schema(kind)
    owner, _, name = path.rpartition(".")
    if owner:
        # A $defs type another artifact also holds would reach a session with two texts.
        assert owner not in _defs_elsewhere(kind), f"{rule}: {owner} is shared"
        schema = schema["$defs"][owner]
    if name:
        assert name in schema["properties"], f"{rule}: {at}"


def _descriptions(node: object) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                found.append(value)
            else:
                found += _descriptions(value)
    elif isinstance(node, list):
        for value in node:
            found += _descriptions(value)
    return found


@pytest.mark.parametrize("kind", _HOST_TYPES)
def test_each_types_statements_reach_its_type_text_and_its_json_schema(kind: str) -> None:
    texts = [text for (where, _), text in field_statements().items() if where == kind]
    notation = compact_object(kind)[NOTATION_KEY]
    described = _descriptions(emitted_schema(kind))
    for text in texts:
        assert f"// {text}" in notation or f" {text}" in notation, text
        assert any(text in description for description in described), text
    # The resource and --schemas full send the same JSON Schema.
    assert json.loads(json.dumps(emitted_schema(kind))) == emitted_schema(kind)


def test_the_prompt_review_coverage_states_the_rules_exact_field_sets() -> None:
    from telic.controller._derive import PROMPT_COVERAGE as _COVERAGE

    coverage = full_schema("PromptReview")["properties"]["coverage"]["description"]
    assert coverage.startswith("Exactly 3, sourceRef → contractFields: ")
    for source, fields in _COVERAGE:
        assert f"{source}: {','.join(sorted(fields))}" in coverage


def test_the_completion_review_is_told_to_cover_both_stages() -> None:
    acceptance = full_schema("QualityReview")["properties"]["acceptanceResults"]["description"]
    assert "current stage" not in acceptance
    assert "One per contract criterion, both stages" in acceptance


def test_plan_validation_says_only_valid_is_accepted() -> None:
    text = compact_object("WorkPlan")[NOTATION_KEY]
    assert "planValidation: pending|valid|invalid // Only valid is accepted." in text


def test_the_evidence_kind_table_is_generated_from_the_rule_s_own_table() -> None:
    from telic.controller._direct import CAPABILITY_KINDS

    text = full_schema("WorkResult")["$defs"]["WorkAction"]["properties"]["evidenceRefs"]
    groups = text["description"].removeprefix("Evidence kinds: ").rstrip(".").split("; ")
    stated: dict[str, str] = {}
    for group in groups:
        names, kinds = group.split(" ")
        for name in names.split(","):
            stated[name] = kinds
    for capability, kinds in CAPABILITY_KINDS.items():
        family = capability.split(".")[0] + ".*"
        assert stated.get(capability, stated.get(family)) == "|".join(sorted(kinds)), capability
