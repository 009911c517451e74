"""The shape of an invariant: a small pure function with a stable rule id.

A rule receives a ``Check`` — the run state *before* the submission plus the typed submission —
and yields ``Violation``\\ s (a JSON path into the body and a one-line explanation). ``Rule`` binds
the function to its id, the artifact types it applies to, the section of ``docs/protocol.md`` it
implements and the sentence saying what it forbids; ``evaluate`` runs every applicable rule and
turns violations into ``Issue``\\ s that name the rule. ``Gate`` describes the few rule ids the
state machine checks itself, before any ``Rule`` runs (tokens, phase, body identity, Evidence
service rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel

from telic._errors import Issue
from telic.controller._state import BodyRef, RunState
from telic.protocol import InternalPhase, Mode

B_co = TypeVar("B_co", covariant=True)

ANY = "*"
"""Rule target meaning "every submitted type"."""


class Violation(NamedTuple):
    """One failed invariant: where in the body, and why (one line, never a submitted value).

    ``expected`` is what would pass at ``path`` when the controller can compute it (the same
    derived value a draft fills in), as a JSON value; None when it cannot."""

    path: str
    message: str
    expected: object = None


def wire_value(value: object) -> object:
    """Return a model (or a list of models) as its camelCase JSON value, for ``expected``."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (list, tuple)):
        return [wire_value(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class Check(Generic[B_co]):
    """A submission as a rule sees it."""

    state: RunState
    """The run before the submission."""
    artifact_type: str
    artifact_id: str
    uri: str
    body: B_co
    wire: dict[str, Any]
    refs: tuple[BodyRef, ...]
    """Every reference in the body's reference fields (``body_refs`` of ``wire``), found once."""
    source_refs: tuple[str, ...]
    """The merged sourceRefs that will be stored (caller's refs plus the body's refs)."""
    phase: InternalPhase
    """The phase the run is in when the submission arrives."""

    @property
    def mode(self) -> Mode:
        """The run's intent mode."""
        return self.state.run.requested_mode

    def all_refs(self) -> Iterator[BodyRef]:
        """Yield every reference of the submission: the body's, then each merged sourceRef."""
        yield from self.refs
        for index, uri in enumerate(self.source_refs):
            yield f"sourceRefs.{index}", "sourceRefs", uri


RuleFn = Callable[[Check[Any]], Iterable[Violation]]


@dataclass(frozen=True, slots=True)
class Rule:
    """An invariant: stable id, the types it applies to, the function, its source and purpose."""

    id: str
    types: tuple[str, ...]
    check: RuleFn
    section: str
    """The section of docs/protocol.md the rule implements, e.g. ``§3.4 WorkResult``."""
    forbids: str
    """One sentence: what a submission breaking this rule attempts."""

    def applies_to(self, artifact_type: str) -> bool:
        """Whether this rule judges submissions of ``artifact_type``."""
        return ANY in self.types or artifact_type in self.types


F = TypeVar("F", bound=RuleFn)


class Rules:
    """A module's invariants, each declared on its function: ``@rule(id)``.

    The first paragraph of the function's docstring is the one sentence saying what the rule
    forbids (``Rule.forbids``). ``rule = Rules(types, section)`` gives the module's usual types
    and section; a rule that differs says so (``types=``, ``section=``). A function declared
    for another rule is registered again by ``rule(id, forbids)(function)``. Registration
    order is evaluation order; ``registered`` is the module's ``RULES``.
    """

    def __init__(self, types: tuple[str, ...], section: str) -> None:
        self._types = types
        self._section = section
        self._rules: list[Rule] = []

    def __call__(
        self,
        rule_id: str,
        forbids: str | None = None,
        *,
        types: tuple[str, ...] | None = None,
        section: str | None = None,
    ) -> Callable[[F], F]:
        """Return the decorator that registers its function as rule ``rule_id``."""

        def register(check: F) -> F:
            said = forbids or " ".join((check.__doc__ or "").split("\n\n")[0].split())
            self._rules.append(
                Rule(rule_id, types or self._types, check, section or self._section, said)
            )
            return check

        return register

    @property
    def registered(self) -> tuple[Rule, ...]:
        """The rules declared so far, in order."""
        return tuple(self._rules)


@dataclass(frozen=True, slots=True)
class Gate:
    """A rule id the state machine checks itself, before the registered invariants run."""

    id: str
    section: str
    forbids: str


def evaluate(rules: Sequence[Rule], check: Check[Any]) -> tuple[Issue, ...]:
    """Run ``rules`` (those ``rules_for`` the submitted type) and collect their issues, in order."""
    return tuple(
        Issue(v.path, "invariant", v.message, rule=rule.id, expected=v.expected)
        for rule in rules
        for v in rule.check(check)
    )
