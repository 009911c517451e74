"""Permission sets and budgets of a new RunEnvelope (docs/protocol.md §3.1)."""

from __future__ import annotations

import pytest

from telic.permissions import (
    default_budgets,
    denied_permissions,
    permissions_from_capabilities,
)
from telic.protocol import RunBudgets
from telic.protocol._types import CAPABILITIES, Capability, NativeSubagents, PermissionSet


def test_no_capabilities_build_the_empty_set() -> None:
    assert permissions_from_capabilities([]) == PermissionSet.empty()
    assert denied_permissions([]) == PermissionSet.empty()


def test_every_granted_capability_maps_to_its_scope_or_flag() -> None:
    granted = permissions_from_capabilities(
        CAPABILITIES,
        shell_execute_allowlist=["npm test", "pytest -q"],
        network_read_domains=["example.com"],
    )
    assert granted.repository.read == granted.repository.write == granted.repository.delete
    assert granted.repository.read == ["**"]
    assert granted.shell.inspect is True
    assert granted.shell.execute_allowlist == ["npm test", "pytest -q"]
    assert granted.runtime.inspect == granted.runtime.restart == ["local"]
    assert granted.browser.inspect is granted.browser.mutate_state is True
    assert granted.network.read_domains == ["example.com"]
    assert granted.network.external_write is True
    assert granted.subagents.spawn is True
    assert (granted.subagents.maximum_children, granted.subagents.maximum_depth) == (3, 1)


def test_an_allowlist_or_domains_without_their_capability_grant_nothing() -> None:
    granted = permissions_from_capabilities(
        ["repository.read"], shell_execute_allowlist=["npm test"], network_read_domains=["x.org"]
    )
    assert granted.shell.execute_allowlist == []
    assert granted.network.read_domains == []


def _scope(permissions: PermissionSet, part: str, field: str) -> object:
    return getattr(getattr(permissions, part), field)


@pytest.mark.parametrize(
    ("capability", "part", "field"),
    [
        ("repository.read", "repository", "read"),
        ("repository.write", "repository", "write"),
        ("repository.delete", "repository", "delete"),
        ("shell.execute", "shell", "execute_allowlist"),
        ("runtime.inspect", "runtime", "inspect"),
        ("runtime.restart", "runtime", "restart"),
        ("network.read", "network", "read_domains"),
    ],
)
def test_the_denied_set_uses_every_scope_for_list_capabilities(
    capability: Capability, part: str, field: str
) -> None:
    assert _scope(denied_permissions([capability]), part, field) == ["**"]
    assert _scope(denied_permissions([]), part, field) == []


def test_the_denied_set_sets_flags_true() -> None:
    denied = denied_permissions(
        ["shell.inspect", "browser.inspect", "browser.mutate", "external.write", "subagent.spawn"]
    )
    flags = [
        denied.shell.inspect,
        denied.browser.inspect,
        denied.browser.mutate_state,
        denied.network.external_write,
        denied.subagents.spawn,
    ]
    assert all(flags)


@pytest.mark.parametrize(
    ("native", "workers", "depth"),
    [("available", 3, 1), ("unavailable", 1, 0), ("unknown", 1, 0)],
)
def test_budgets_depend_only_on_native_subagents(
    native: NativeSubagents, workers: int, depth: int
) -> None:
    assert default_budgets(native) == RunBudgets(
        prompt_revisions=1,
        post_execution_remediations=1,
        maximum_parallel_workers=workers,
        maximum_subagent_depth=depth,
    )
