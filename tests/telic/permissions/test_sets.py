"""Intersection, the subset order, effective authorization and the capability classes."""

from __future__ import annotations

from typing import Any

import pytest

from telic.permissions import (
    capability_backed,
    capability_is_mutating,
    denied_permissions,
    effective_authorization,
    intersect,
    is_subset,
    mode_ceiling,
    permissions_from_capabilities,
    scope_covers,
)
from telic.protocol._types import CAPABILITIES, Capability, PermissionSet


def perms(**parts: dict[str, Any]) -> PermissionSet:
    """Build a set from the empty one, overriding the named parts."""
    wire = PermissionSet.empty().model_dump(by_alias=False)
    for part, fields in parts.items():
        wire[part].update(fields)
    return PermissionSet.model_validate(wire)


@pytest.mark.parametrize(
    ("capability", "parent", "child", "covered"),
    [
        ("repository.read", "**", "anything/at/all", True),
        ("repository.read", "src/a.py", "src/a.py", True),
        ("repository.read", "src/**", "src/a.py", True),
        ("repository.read", "src/**", "src/lib/**", True),
        ("repository.read", "src/**", "src/*.py", True),
        ("repository.read", "src/**", "src", False),
        ("repository.read", "src/**", "srcx/a.py", False),
        ("repository.read", "src/**", "src/.env", False),
        ("repository.read", "src/**", "src/lib/.git/config", False),
        ("repository.read", "src/**", "src/../etc", False),
        ("repository.read", "src/*.py", "src/a.py", False),
        ("repository.read", "src/a.py", "src/**", False),
        ("shell.execute", "**", "npm test", True),
        ("shell.execute", "npm test", "npm test", True),
        ("shell.execute", "npm/**", "npm/x", False),
        ("shell.execute", "npm test", "npm test ", False),
        ("runtime.inspect", "local", "local", True),
        ("runtime.inspect", "local", "LOCAL", False),
        ("network.read", "example.com", "EXAMPLE.com", True),
        ("network.read", "[::1]", "0:0::1", True),
        ("network.read", "example.com", "api.example.com", False),
        ("network.read", "example.com", "example.com.", False),
    ],
)
def test_scope_coverage_is_conservative(
    capability: Capability, parent: str, child: str, covered: bool
) -> None:
    assert scope_covers(capability, parent, child) is covered


def test_intersection_keeps_what_each_side_covers() -> None:
    left = perms(
        repository={"read": ["**"], "write": ["src/**", "docs/a.md"]},
        shell={"inspect": True, "execute_allowlist": ["npm test", "make"]},
        network={"read_domains": ["example.com", "localhost"]},
        subagents={"spawn": True, "maximum_children": 3, "maximum_depth": 2},
    )
    right = perms(
        repository={"read": ["src/**"], "write": ["src/app.py", "docs/**"]},
        shell={"inspect": False, "execute_allowlist": ["**"]},
        network={"read_domains": ["EXAMPLE.com"]},
        subagents={"spawn": True, "maximum_children": 5, "maximum_depth": 1},
    )
    meet = intersect(left, right)
    assert meet.repository.read == ["src/**"]
    assert meet.repository.write == ["docs/a.md", "src/app.py"]
    assert meet.shell.inspect is False
    assert meet.shell.execute_allowlist == ["npm test", "make"]
    assert meet.network.read_domains == ["example.com", "EXAMPLE.com"]
    assert (meet.subagents.spawn, meet.subagents.maximum_children) == (True, 3)
    assert meet.subagents.maximum_depth == 1
    assert is_subset(meet, left)
    assert is_subset(meet, right)


def test_intersection_with_the_empty_set_is_empty() -> None:
    full = permissions_from_capabilities(CAPABILITIES, shell_execute_allowlist=["make"])
    assert intersect(full, PermissionSet.empty()) == PermissionSet.empty()


@pytest.mark.parametrize(
    ("child", "parent", "subset"),
    [
        (perms(), perms(), True),
        (perms(repository={"read": ["src/a.py"]}), perms(repository={"read": ["**"]}), True),
        (perms(repository={"read": ["**"]}), perms(repository={"read": ["src/**"]}), False),
        (perms(repository={"write": ["src/a"]}), perms(repository={"read": ["**"]}), False),
        (perms(shell={"inspect": True}), perms(), False),
        (perms(), perms(shell={"inspect": True}), True),
        (perms(browser={"mutate_state": True}), perms(browser={"inspect": True}), False),
        (perms(network={"external_write": True}), perms(), False),
        (
            perms(network={"read_domains": ["example.com"]}),
            perms(network={"read_domains": ["example.org"]}),
            False,
        ),
        (perms(subagents={"spawn": True}), perms(), False),
        (perms(subagents={"maximum_children": 2}), perms(subagents={"maximum_children": 1}), False),
        (perms(subagents={"maximum_depth": 2}), perms(subagents={"maximum_depth": 3}), True),
        (perms(subagents={"maximum_depth": 4}), perms(subagents={"maximum_depth": 3}), False),
        (
            perms(runtime={"inspect": ["local"], "restart": ["local"]}),
            perms(runtime={"inspect": ["**"], "restart": []}),
            False,
        ),
    ],
)
def test_subset_checks_every_part(
    child: PermissionSet, parent: PermissionSet, subset: bool
) -> None:
    assert is_subset(child, parent) is subset


def test_effective_authorization_is_the_mode_ceiling_meet_the_grants() -> None:
    granted = permissions_from_capabilities(
        CAPABILITIES, shell_execute_allowlist=["npm test"], network_read_domains=["example.com"]
    )
    effective = effective_authorization("analyze_only", granted, PermissionSet.empty())
    assert effective == intersect(mode_ceiling("analyze_only"), granted)
    assert effective.repository.write == []
    assert effective.shell.execute_allowlist == ["npm test"], "the user's exact grant survives"
    assert effective.network.read_domains == ["example.com"]
    assert effective.network.external_write is False
    assert effective.runtime.restart == []
    assert effective.subagents.maximum_children == 3


@pytest.mark.parametrize("denied", CAPABILITIES)
def test_anything_denied_drops_that_capability_entirely(denied: Capability) -> None:
    granted = permissions_from_capabilities(
        CAPABILITIES, shell_execute_allowlist=["npm test"], network_read_domains=["example.com"]
    )
    effective = effective_authorization("analyze_and_fix", granted, denied_permissions([denied]))
    assert not capability_backed(denied, effective)
    survivors = {c for c in CAPABILITIES if capability_backed(c, effective)}
    baseline = effective_authorization("analyze_and_fix", granted, PermissionSet.empty())
    assert survivors == {c for c in CAPABILITIES if capability_backed(c, baseline)} - {denied}


def test_a_narrow_denial_still_drops_the_whole_capability() -> None:
    granted = permissions_from_capabilities(["repository.read"])
    denied = perms(repository={"read": ["secrets/**"]})
    assert effective_authorization("plan_only", granted, denied).repository.read == []


@pytest.mark.parametrize("field", ["maximum_children", "maximum_depth"])
def test_any_subagent_denial_drops_spawning(field: str) -> None:
    granted = permissions_from_capabilities(["subagent.spawn"])
    denied = perms(subagents={field: 1})
    effective = effective_authorization("plan_only", granted, denied)
    assert effective.subagents == PermissionSet.empty().subagents


@pytest.mark.parametrize(
    ("capability", "mutating"),
    [
        ("repository.read", False),
        ("repository.write", True),
        ("repository.delete", True),
        ("shell.inspect", False),
        ("shell.execute", None),
        ("runtime.inspect", False),
        ("runtime.restart", True),
        ("browser.inspect", False),
        ("browser.mutate", True),
        ("network.read", False),
        ("external.write", True),
        ("subagent.spawn", False),
    ],
)
def test_each_capability_has_its_mutation_class(
    capability: Capability, mutating: bool | None
) -> None:
    assert capability_is_mutating(capability) is mutating


@pytest.mark.parametrize(
    ("capability", "backing"),
    [
        ("repository.read", perms(repository={"read": ["src/**"]})),
        ("repository.write", perms(repository={"write": ["a"]})),
        ("repository.delete", perms(repository={"delete": ["a"]})),
        ("shell.inspect", perms(shell={"inspect": True})),
        ("shell.execute", perms(shell={"execute_allowlist": ["make"]})),
        ("runtime.inspect", perms(runtime={"inspect": ["local"]})),
        ("runtime.restart", perms(runtime={"restart": ["local"]})),
        ("browser.inspect", perms(browser={"inspect": True})),
        ("browser.mutate", perms(browser={"mutate_state": True})),
        ("network.read", perms(network={"read_domains": ["example.com"]})),
        ("external.write", perms(network={"external_write": True})),
        ("subagent.spawn", perms(subagents={"spawn": True, "maximum_children": 1})),
    ],
)
def test_a_capability_is_backed_only_by_its_own_non_empty_scope(
    capability: Capability, backing: PermissionSet
) -> None:
    assert capability_backed(capability, backing)
    assert not capability_backed(capability, PermissionSet.empty())
    assert [c for c in CAPABILITIES if capability_backed(c, backing)] == [capability]


def test_spawning_without_children_is_not_backed() -> None:
    unbacked = perms(subagents={"spawn": True, "maximum_children": 0, "maximum_depth": 1})
    assert not capability_backed("subagent.spawn", unbacked)
