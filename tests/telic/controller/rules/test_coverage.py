"""Conformance is data: every rule is proven, the docs are fresh, every seed MUST is mapped."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from telic.controller import RULES, all_rule_ids
from telic.controller import _machine as machine
from telic.controller._conformance import SEED_MUSTS
from tests.telic.controller import test_flows, test_happy_paths
from tests.telic.controller.rules import (
    harness,
    test_evidence,
    test_framing,
    test_plan,
    test_result,
)

ROOT = Path(__file__).resolve().parents[4]
SEED = ROOT.parent / "shared" / "seeds" / "000_86507f70f9580f22.txt"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rules_doc", ROOT / "docs" / "rules_doc.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("rules_doc", module)
    spec.loader.exec_module(module)
    return module


def test_every_rule_id_has_a_negative_test_and_every_marker_names_a_rule() -> None:
    marked = set(_generator().marked_tests())
    known = set(all_rule_ids())
    assert not known - marked, f"rules without a negative test: {sorted(known - marked)}"
    assert not marked - known, f"tests naming unknown rules: {sorted(marked - known)}"


def test_every_rule_says_what_it_forbids_and_where_it_comes_from() -> None:
    for rule in RULES:
        assert rule.forbids.endswith("."), rule.id
        assert rule.section, rule.id
        assert rule.check.__doc__, rule.id


def test_the_committed_rules_document_is_fresh() -> None:
    expected = _generator().render()
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == expected, "docs/rules.md is stale: run python docs/rules_doc.py --write"


def test_seed_mapping_names_only_known_rules_and_says_how() -> None:
    known = set(all_rule_ids())
    for must in SEED_MUSTS:
        assert set(must.rules) <= known, must.quote
        assert must.rules or must.how, must.quote
        assert "MUST" in must.quote


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.skipif(not SEED.exists(), reason="the shared seed document is not beside the repo")
def test_every_must_sentence_of_the_seed_is_mapped() -> None:
    seed = _flat(SEED.read_text(encoding="utf-8"))
    covered: list[range] = []
    for must in SEED_MUSTS:
        start = seed.find(_flat(must.quote))
        assert start >= 0, f"not a verbatim seed sentence: {must.quote}"
        covered.append(range(start, start + len(_flat(must.quote))))
    for match in re.finditer(r"MUST", seed):
        context = seed[max(0, match.start() - 60) : match.end() + 40]
        assert any(match.start() in span for span in covered), f"unmapped MUST: …{context}…"


# ------------------------------------------------------------------ positive controls


def _judged(seen: set[str]) -> Any:
    original = machine.evaluate

    def recording(rules: Any, check: Any) -> Any:
        issues = original(rules, check)
        if not issues:
            seen.update(r.id for r in rules if r.applies_to(check.artifact_type))
        return issues

    return recording


def _scenarios() -> Iterator[tuple[tuple[str, ...], Any]]:
    """Accepted runs: the happy paths, the §3.2 flows, and the positive halves of rule tests."""
    yield from (
        ((), test_happy_paths.test_analyze_only_reads_then_completes_at_version_ten()),
        ((), test_happy_paths.test_fix_only_mutates_then_verifies_and_completes()),
        ((), test_happy_paths.test_analyze_and_fix_goes_through_the_gate_and_a_fix_plan()),
        ((), test_happy_paths.test_report_and_plan_modes_skip_execution_and_complete("plan_only")),
        ((), test_flows.test_revise_then_v2_then_pass_reaches_planning()),
        ((), test_flows.test_quality_review_remediation_leads_to_a_new_plan_and_is_spent_once()),
        ((), test_flows.test_release_audit_remediation_returns_to_planning()),
        (("SS-ONE-PER-FRAME",), test_framing.test_a_frame_has_at_most_one_scenario()),
        ((), test_evidence.test_placeholders_are_not_secrets("token: <redacted>")),
        (("WP-NODE-SPAWN-CHILDREN",), test_plan.test_a_required_spawn_reserves_a_child()),
        (("WR-SPAWN-COUNT",), test_result.test_completed_spawns_fit_the_child_budget()),
    )


@pytest.mark.anyio
async def test_every_registered_rule_accepts_a_legitimate_submission(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: set[str] = set()
    monkeypatch.setattr(machine, "evaluate", _judged(seen))
    for marked, scenario in _scenarios():
        token = harness.MARKED.set(marked)
        try:
            await scenario
        finally:
            harness.MARKED.reset(token)
    missing = {rule.id for rule in RULES} - seen
    assert not missing, f"rules no accepted submission was judged by: {sorted(missing)}"
