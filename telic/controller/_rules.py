"""The invariant registry: every controller rule, its stable id and the types it judges.

Adding a rule is one small pure function in the module of its artifact family, declared where it
is written: ``@rule(id)``, its docstring opening with what it forbids (the module's ``Rules``
gives its usual types and the reference section it implements). A module's ``RULES`` is what it
declared, in order. Rules run in the order below, and a rejection reports every rule that
failed. ``GATES`` lists the rule ids the state machine checks before the registry runs.
"""

from __future__ import annotations

from typing import Final

from telic.controller import (
    _evidence as evidence,
    _refs as refs,
    _rules_audit as audit,
    _rules_contract as contract,
    _rules_frame as frame,
    _rules_plan as plan,
    _rules_quality as quality,
    _rules_report as report,
    _rules_result as result,
    _rules_topology as topology,
)
from telic.controller._check import ANY, Rule
from telic.controller._gates import GATES

RULES: Final[tuple[Rule, ...]] = (
    *topology.RESERVED,
    *refs.RULES,
    *frame.RULES,
    *contract.RULES,
    *plan.RULES,
    *result.RULES,
    *evidence.RULES,
    *quality.RULES,
    *audit.RULES,
    *report.RULES,
    *topology.RULES,
)
"""Every controller invariant, in evaluation order."""

_FOR_ANY: Final = tuple(rule for rule in RULES if ANY in rule.types)
_FOR_TYPE: Final = {
    kind: tuple(rule for rule in RULES if rule.applies_to(kind))
    for kind in sorted({kind for rule in RULES for kind in rule.types if kind != ANY})
}


def rules_for(artifact_type: str) -> tuple[Rule, ...]:
    """The rules of ``RULES`` that judge ``artifact_type``, in evaluation order.

    Computed once per type at import: every submission asks, and the registry never changes.
    """
    return _FOR_TYPE.get(artifact_type, _FOR_ANY)


def rule_ids() -> tuple[str, ...]:
    """Return the id of every registered rule, in evaluation order."""
    return tuple(rule.id for rule in RULES)


def all_rule_ids() -> tuple[str, ...]:
    """Return every rule id Telic reports: the machine's gates, then the registry."""
    return tuple(gate.id for gate in GATES) + rule_ids()
