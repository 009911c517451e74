"""Common protocol types: the empty permission set and the identifier syntax."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from telic.protocol import Identifier, PermissionSet, ShellPermissions, is_identifier

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


@pytest.mark.parametrize(
    "value", ["a", "run-1", "A.b:c_d-e", "a" * 128, "a" * 129, "", "-a", ".a", "a\n", "a b", "é"]
)
def test_is_identifier_agrees_with_the_identifier_schema(value: str) -> None:
    # The pydantic-free check (ledger, grounding, reports) and the wire type are one syntax.
    try:
        TypeAdapter(Identifier).validate_python(value)
    except ValidationError:
        assert not is_identifier(value)
    else:
        assert is_identifier(value)
