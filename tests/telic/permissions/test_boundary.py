"""The boundary says what each granted capability covers, in one line, before the host acts."""

from __future__ import annotations

from telic.demo import permissions
from telic.permissions import TYPED_INSPECT_TARGETS, boundary
from telic.protocol import PermissionSet


def _set(**changes: object) -> PermissionSet:
    wire = permissions(read=["src/**"])
    wire["shell"] = {"inspect": True, "executeAllowlist": ["pytest tests/test_pager.py"]}
    wire.update(changes)
    return PermissionSet.from_wire(wire)


def test_only_capabilities_whose_scope_cannot_say_their_reach_get_a_line() -> None:
    children = permissions(read=["src/**"], write=["src/**"], children=2)
    children["shell"] = {"inspect": True, "executeAllowlist": ["pytest"]}
    lines = boundary(PermissionSet.from_wire(children))
    # repository.read and .write list their paths in effectivePermissions already.
    assert set(lines) == {"shell.inspect", "shell.execute", "subagent.spawn"}
    assert lines["subagent.spawn"] == "Through telic_cast only: up to 2 children, depth 1."
    assert all("\n" not in line for line in lines.values())


def test_shell_inspect_names_the_six_typed_targets_and_says_a_test_run_is_execute() -> None:
    line = boundary(_set())["shell.inspect"]
    assert all(target in line for target in TYPED_INSPECT_TARGETS)
    assert "a test included, is shell.execute" in line


def test_shell_execute_names_its_exact_commands_and_when_a_run_must_change_nothing() -> None:
    line = boundary(_set())["shell.execute"]
    assert "Only these exact commands: pytest tests/test_pager.py" in line
    assert "only a run that changes no file is allowed, as mutating false" in line


def test_without_a_read_scope_reading_natively_is_said_to_be_outside_the_phase() -> None:
    assert boundary(PermissionSet.empty()) == {"repository.read": "None: no native file reads."}
