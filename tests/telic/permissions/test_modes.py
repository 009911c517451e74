"""Mode policies, default grants and ceilings, exactly as docs/protocol.md §3.5 and §2 tool 1."""

from __future__ import annotations

import pytest

from telic.permissions import (
    DEFAULT_GRANTS,
    MODE_POLICIES,
    Layer,
    is_subset,
    mode_ceiling,
    plan_ceiling,
)
from telic.protocol._types import CAPABILITIES, MODES, Capability, Mode

READ_ONLY_DENY = {
    "repository.write",
    "repository.delete",
    "runtime.restart",
    "browser.mutate",
    "external.write",
}
PLAN = {"repository.read", "subagent.spawn"}
ANALYZE = PLAN | {
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
    "browser.inspect",
    "network.read",
}
FIX = {
    "repository.read",
    "repository.write",
    "repository.delete",
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
    "subagent.spawn",
}

EXPECTED: dict[Mode, tuple[set[str], set[str]]] = {
    "report_only": (set(), READ_ONLY_DENY),
    "plan_only": (PLAN, READ_ONLY_DENY),
    "analyze_only": (ANALYZE, READ_ONLY_DENY),
    "fix_only": (FIX, {"external.write"}),
    "analyze_and_fix": (ANALYZE | FIX, {"external.write"}),
}


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_allows_and_denies_exactly_what_the_reference_lists(mode: Mode) -> None:
    allow, deny = EXPECTED[mode]
    policy = MODE_POLICIES[mode]
    assert policy.mode == mode
    assert set(policy.allow) == allow
    assert set(policy.deny) == deny


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("capability", ["runtime.restart", "browser.mutate", "external.write"])
def test_no_mode_ever_allows_restart_browser_mutation_or_external_writes(
    mode: Mode, capability: Capability
) -> None:
    assert not MODE_POLICIES[mode].allows(capability)


def test_report_only_allows_nothing_not_even_repository_reads() -> None:
    assert not any(MODE_POLICIES["report_only"].allows(c) for c in CAPABILITIES)


@pytest.mark.parametrize(
    ("mode", "mutating"),
    [
        ("report_only", False),
        ("plan_only", False),
        ("analyze_only", False),
        ("fix_only", True),
        ("analyze_and_fix", True),
    ],
)
def test_only_the_fix_modes_are_mutating(mode: Mode, mutating: bool) -> None:
    assert MODE_POLICIES[mode].allows("repository.write") is mutating


@pytest.mark.parametrize(
    ("mode", "grants"),
    [
        ("report_only", ()),
        ("plan_only", ("repository.read",)),
        (
            "analyze_only",
            ("repository.read", "shell.inspect", "runtime.inspect", "browser.inspect"),
        ),
        ("fix_only", ("repository.read", "repository.write", "shell.inspect", "runtime.inspect")),
        (
            "analyze_and_fix",
            ("repository.read", "repository.write", "shell.inspect", "runtime.inspect"),
        ),
    ],
)
def test_default_grants_are_those_of_start_run(mode: Mode, grants: tuple[str, ...]) -> None:
    assert DEFAULT_GRANTS[mode] == grants


@pytest.mark.parametrize("mode", MODES)
def test_default_grants_lie_within_the_mode_policy(mode: Mode) -> None:
    assert all(MODE_POLICIES[mode].allows(c) for c in DEFAULT_GRANTS[mode])


def test_the_fix_only_ceiling_is_every_scope_it_allows_and_nothing_else() -> None:
    ceiling = mode_ceiling("fix_only")
    assert ceiling.repository.read == ceiling.repository.write == ceiling.repository.delete
    assert ceiling.repository.read == ["**"]
    assert ceiling.shell.inspect is True
    assert ceiling.shell.execute_allowlist == ["**"]
    assert ceiling.runtime.inspect == ["**"]
    assert ceiling.runtime.restart == []
    assert ceiling.browser.inspect is False
    assert ceiling.browser.mutate_state is False
    assert ceiling.network.read_domains == []
    assert ceiling.network.external_write is False
    assert (ceiling.subagents.spawn, ceiling.subagents.maximum_children) == (True, 16)
    assert ceiling.subagents.maximum_depth == 4


def test_the_report_only_ceiling_is_the_empty_set() -> None:
    assert mode_ceiling("report_only") == mode_ceiling("report_only").empty()


def test_analyze_and_fix_before_unlock_is_capped_by_the_analyze_only_projection() -> None:
    before = plan_ceiling("analyze_and_fix", fix_unlocked=False)
    assert before == mode_ceiling("analyze_only")
    assert before.repository.write == []
    assert before.repository.delete == []
    # A diagnosis may run a command the user granted exactly (the run authorization narrows
    # ``**`` to that allowlist); declaring it mutating is refused by WR-NO-MUTATION instead.
    assert before.shell.execute_allowlist == ["**"]
    assert plan_ceiling("analyze_and_fix", fix_unlocked=True) == mode_ceiling("analyze_and_fix")


@pytest.mark.parametrize("mode", ["report_only", "plan_only", "analyze_only", "fix_only"])
def test_other_modes_ignore_the_unlock(mode: Mode) -> None:
    assert plan_ceiling(mode, fix_unlocked=False) == mode_ceiling(mode)


def test_ceilings_nest_like_the_modes() -> None:
    assert is_subset(mode_ceiling("report_only"), mode_ceiling("plan_only"))
    assert is_subset(mode_ceiling("plan_only"), mode_ceiling("analyze_only"))
    assert is_subset(mode_ceiling("analyze_only"), mode_ceiling("analyze_and_fix"))
    assert is_subset(mode_ceiling("fix_only"), mode_ceiling("analyze_and_fix"))
    assert not is_subset(mode_ceiling("fix_only"), mode_ceiling("analyze_only"))


@pytest.mark.parametrize("mode", MODES)
def test_the_mode_layer_scopes_repository_grants_and_denies_unscoped(mode: Mode) -> None:
    layer = Layer.for_mode(mode)
    assert layer.name == "mode"
    for grant in layer.allow:
        expected = ("**",) if grant.capability.startswith("repository.") else None
        assert grant.scopes == expected
    assert {g.capability for g in layer.allow} == EXPECTED[mode][0]
    assert {g.capability for g in layer.deny} == EXPECTED[mode][1]
    assert all(g.scopes is None for g in layer.deny)
