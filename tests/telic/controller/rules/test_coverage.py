"""Conformance is data: every rule is proven and stated in docs/protocol.md, every MUST is mapped.

``docs/protocol.md`` is the document of record. These tests read it from the repository, so they
run in every clone: every rule id appears in its §3.4 and no unknown id does, every rule cites a
section the page has, and every MUST / MUST NOT sentence of the page is mapped in
``tests/telic/controller/rules/conformance.py`` (and every mapped sentence is still on the page).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from telic.controller import GATES, RULES, _machine as machine, all_rule_ids
from telic.permissions import START_RULES
from tests.telic.controller import test_flows, test_happy_paths
from tests.telic.controller.rules import (
    harness,
    test_evidence,
    test_framing,
    test_plan,
    test_result,
)
from tests.telic.controller.rules.conformance import SPEC_MUSTS

ROOT = Path(__file__).resolve().parents[4]
SPEC = ROOT / "docs" / "protocol.md"
_HEADING = re.compile(r"^(#{2,3}) (\d+(?:\.\d+)?)\.? (.*)$")
_RULE_ID = re.compile(r"`([A-Z]{2,4}(?:-[A-Z0-9]+)+)`")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rules_doc", ROOT / "docs" / "rules_doc.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("rules_doc", module)
    spec.loader.exec_module(module)
    return module


def _sections(text: str) -> dict[str, str]:
    """Map each numbered section of the page (``2``, ``3.4``) to its text, subsections included."""
    lines = text.splitlines()
    starts = [(i, m) for i, line in enumerate(lines) if (m := _HEADING.match(line))]
    sections: dict[str, str] = {}
    for n, (i, match) in enumerate(starts):
        level = len(match.group(1))
        end = next((j for j, m in starts[n + 1 :] if len(m.group(1)) <= level), len(lines))
        sections[match.group(2)] = "\n".join(lines[i:end])
    return sections


def _item_exists(section: str, item: str) -> bool:
    """Whether a numbered list item ``10`` or a nested item ``10.8`` exists in ``section``."""
    top, _, nested = item.partition(".")
    block = re.search(rf"^{top}\. .*?(?=^\d+\. |\Z)", section, re.M | re.S)
    if block is None:
        return False
    return not nested or re.search(rf"^\s+{nested}\. ", block.group(0), re.M) is not None


def _citation_problem(citation: str, sections: dict[str, str]) -> str | None:
    """Say what is wrong with one ``§N[.M] [qualifier]`` citation, or None when the page has it."""
    match = re.fullmatch(r"§(\d+(?:\.\d+)?)(?: (.+))?", citation)
    if match is None:
        return "not of the form §N or §N.M followed by an optional qualifier"
    number, qualifier = match.groups()
    if number not in sections:
        return f"docs/protocol.md has no section {number}"
    text = sections[number].lower()
    if qualifier is None:
        return None
    if item := re.fullmatch(r"items? (\d+(?:\.\d+)?)", qualifier):
        found = _item_exists(sections[number], item.group(1))
        return None if found else f"§{number} has no item {item.group(1)}"
    main, _, aside = qualifier.partition(" (")
    for words in (main, aside.removesuffix(")")):
        if words and words.lower() not in text:
            return f"§{number} never mentions {words!r}"
    return None


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


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


def test_every_rule_id_is_stated_in_section_3_4_and_the_page_names_no_unknown_id() -> None:
    sections = _sections(SPEC.read_text(encoding="utf-8"))
    stated = set(_RULE_ID.findall(sections["3.4"]))
    known = set(all_rule_ids())
    assert not known - stated, f"rule ids missing from §3.4: {sorted(known - stated)}"
    everywhere = set(_RULE_ID.findall(SPEC.read_text(encoding="utf-8")))
    unknown = everywhere - known - set(START_RULES)
    assert not unknown, f"docs/protocol.md names unknown rule ids: {sorted(unknown)}"
    start_rules = set(_RULE_ID.findall(sections["2"])) & set(START_RULES)
    assert start_rules == set(START_RULES), "§2 must state every start_run rule"


def test_every_rule_cites_a_section_that_docs_protocol_has() -> None:
    sections = _sections(SPEC.read_text(encoding="utf-8"))
    problems = [
        f"{owner.id}: {part!r}: {problem}"
        for owner in (*GATES, *RULES)
        for part in owner.section.split("; ")
        if (problem := _citation_problem(part, sections))
    ]
    assert not problems, "\n".join(problems)


def test_the_section_checker_refuses_what_the_page_lacks() -> None:
    sections = _sections(SPEC.read_text(encoding="utf-8"))
    assert _citation_problem("§3.4 WorkResult", sections) is None
    assert _citation_problem("§4 item 10.8", sections) is None
    assert _citation_problem("§9", sections) is not None
    assert _citation_problem("§3.4 Teleportation", sections) is not None
    assert _citation_problem("§3.4 WorkResult (time travel)", sections) is not None
    assert _citation_problem("§4 item 10.99", sections) is not None
    assert _citation_problem("seed: anything", sections) is not None


def test_the_must_mapping_names_only_known_rules_and_says_how() -> None:
    known = set(all_rule_ids()) | set(START_RULES)
    for must in SPEC_MUSTS:
        assert set(must.rules) <= known, must.quote
        assert must.rules or must.how, must.quote
        assert "MUST" in must.quote, must.quote


def test_every_must_sentence_of_docs_protocol_is_mapped() -> None:
    text = SPEC.read_text(encoding="utf-8")
    sections = {number: _flat(body) for number, body in _sections(text).items()}
    page = _flat(text)
    covered: list[range] = []
    for must in SPEC_MUSTS:
        quote = _flat(must.quote)
        start = page.find(quote)
        assert start >= 0, f"not a verbatim sentence of docs/protocol.md: {must.quote}"
        assert page.find(quote, start + 1) < 0, f"quoted twice on the page: {must.quote}"
        number = must.section.removeprefix("§")
        assert quote in sections.get(number, ""), f"not in {must.section}: {must.quote}"
        covered.append(range(start, start + len(quote)))
    for match in re.finditer(r"MUST", page):
        context = page[max(0, match.start() - 60) : match.end() + 40]
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
