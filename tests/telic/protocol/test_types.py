"""Common protocol types: the empty permission set."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from telic.protocol import PermissionSet, ShellPermissions

NOTHING = {
    "repository": {"read": [], "write": [], "delete": []},
    "shell": {"inspect": False, "executeAllowlist": []},
    "runtime": {"inspect": [], "restart": []},
    "browser": {"inspect": False, "mutateState": False},
    "network": {"readDomains": [], "externalWrite": False},
    "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0},
}


def test_the_empty_permission_set_is_one_shared_instance() -> None:
    assert PermissionSet.empty() is PermissionSet.empty()


def test_the_shared_empty_set_equals_one_built_afresh_from_the_wire() -> None:
    fresh = PermissionSet.from_wire(NOTHING)
    assert PermissionSet.empty() == fresh
    assert PermissionSet.empty().model_dump(by_alias=True) == NOTHING


def test_the_shared_empty_set_cannot_be_changed() -> None:
    empty = PermissionSet.empty()
    with pytest.raises(ValidationError):
        empty.shell = ShellPermissions(inspect=True, execute_allowlist=[])  # type: ignore[misc]
    assert PermissionSet.empty() == PermissionSet.from_wire(NOTHING)
