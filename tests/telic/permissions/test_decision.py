"""authorize_action: layers, the deciding layer and each capability's matching rule."""

from __future__ import annotations

import pytest

from telic._errors import UsageError
from telic.permissions import (
    TYPED_INSPECT_TARGETS,
    Decision,
    Grant,
    Layer,
    authorize_action,
    permissions_from_capabilities,
)
from telic.protocol._types import CAPABILITIES, Capability, Mode, PermissionSet

from .conftest import FAKE_ROOT, fake_resolve

GRANTED = permissions_from_capabilities(
    CAPABILITIES,
    shell_execute_allowlist=["npm test", "pytest -q"],
    network_read_domains=["example.com", "localhost", "::1"],
)


def decide(
    capability: Capability,
    target: str | None,
    *layers: Layer,
    mode: Mode = "analyze_and_fix",
) -> Decision:
    stack = layers or (Layer.for_mode(mode), Layer.from_permissions("authorization", GRANTED))
    return authorize_action(
        capability, target, stack, repository_root=FAKE_ROOT, resolve=fake_resolve
    )


def test_no_layers_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        authorize_action("repository.read", "a", [], repository_root=FAKE_ROOT)


def test_a_relative_root_is_a_usage_error_for_repository_targets() -> None:
    with pytest.raises(UsageError):
        authorize_action(
            "repository.read", "a", [Layer.for_mode("plan_only")], repository_root="repo"
        )


def test_an_allowed_decision_names_no_layer_and_reports_the_normalised_scope() -> None:
    decision = decide("repository.read", "./src//app.py")
    assert decision == Decision(
        allowed=True,
        capability="repository.read",
        scope="src/app.py",
        deciding_layer=None,
        reason="allowed by every layer (mode, authorization)",
        code="allowed",
    )
    assert decision.verdict == "allow"


def test_an_unknown_capability_is_denied() -> None:
    decision = decide("shell.sudo", "x")  # type: ignore[arg-type]
    assert (decision.allowed, decision.code) == (False, "unknown_capability")


def test_a_mode_deny_overrides_any_grant() -> None:
    decision = decide("external.write", "https://example.com", mode="fix_only")
    assert (decision.deciding_layer, decision.code) == ("mode", "explicitly_denied")
    assert decision.verdict == "deny"


def test_explicit_denies_win_over_an_earlier_missing_grant() -> None:
    empty = Layer.from_permissions("task_contract", PermissionSet.empty())
    denier = Layer("work_order", deny=(Grant("repository.read", ("secrets/**",)),))
    decision = decide("repository.read", "secrets/key", empty, denier)
    assert (decision.deciding_layer, decision.code) == ("work_order", "explicitly_denied")


def test_a_scoped_deny_only_denies_inside_its_scope() -> None:
    layer = Layer(
        "authorization",
        allow=(Grant("repository.read"),),
        deny=(Grant("repository.read", ("secrets/**",)),),
    )
    assert decide("repository.read", "src/a.py", layer).allowed
    assert decide("repository.read", "secrets/a", layer).code == "explicitly_denied"


def test_a_layer_that_only_denies_allows_nothing() -> None:
    everything = Layer("authorization", allow=(Grant("repository.read"),))
    denier = Layer("policy", deny=(Grant("repository.read", ("secrets/**",)),))
    decision = decide("repository.read", "src/a.py", everything, denier)
    assert (decision.deciding_layer, decision.code) == ("policy", "not_granted")


def test_a_scoped_deny_also_denies_an_action_without_target() -> None:
    layer = Layer(
        "authorization",
        allow=(Grant("subagent.spawn"),),
        deny=(Grant("subagent.spawn", ("worker",)),),
    )
    assert decide("subagent.spawn", None, layer).code == "explicitly_denied"


def test_the_first_layer_without_the_grant_decides() -> None:
    contract = Layer.from_permissions(
        "task_contract", permissions_from_capabilities(["repository.read"])
    )
    node = Layer.from_permissions("work_plan_node", PermissionSet.empty())
    decision = decide("repository.write", "src/a.py", Layer.for_mode("fix_only"), contract, node)
    assert (decision.deciding_layer, decision.code) == ("task_contract", "not_granted")


def test_a_scoped_grant_requires_a_target() -> None:
    for target in (None, ""):
        decision = decide("repository.read", target)
        assert (decision.deciding_layer, decision.code) == ("mode", "target_required")


def test_an_unscoped_grant_needs_no_target() -> None:
    assert decide("browser.inspect", None).allowed
    assert decide("subagent.spawn", None).allowed


def test_a_target_outside_the_scope_is_out_of_scope() -> None:
    contract = Layer.from_permissions(
        "task_contract",
        PermissionSet.empty().model_copy(
            update={"repository": GRANTED.repository.model_copy(update={"write": ["src/**"]})}
        ),
    )
    decision = decide("repository.write", "docs/a.md", Layer.for_mode("fix_only"), contract)
    assert (decision.deciding_layer, decision.code) == ("task_contract", "out_of_scope")
    assert decide("repository.write", "src/a.md", Layer.for_mode("fix_only"), contract).allowed


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("../x", "path_traversal"),
        ("%2e%2e/x", "encoded_traversal"),
        ("/etc/passwd", "path_escape"),
        ("out/secret.txt", "symlink_escape"),
    ],
)
def test_a_refused_repository_target_is_decided_before_any_layer(target: str, code: str) -> None:
    decision = decide("repository.read", target)
    assert (decision.allowed, decision.deciding_layer, decision.code) == (False, None, code)
    assert decision.scope == target


def test_repository_scopes_match_the_canonical_path_behind_a_symlink() -> None:
    docs_only = Layer("task_contract", allow=(Grant("repository.read", ("docs/**",)),))
    decision = decide("repository.read", "link/readme.md", Layer.for_mode("plan_only"), docs_only)
    assert (decision.allowed, decision.scope) == (True, "docs/readme.md")


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("npm test", "allowed"),
        ("pytest -q", "allowed"),
        ("npm test ", "out_of_scope"),
        ("npm  test", "out_of_scope"),
        ("npm test --x", "out_of_scope"),
        ("npm test; rm -rf /", "inexact_command"),
        ("npm test *", "inexact_command"),
        ("**", "inexact_command"),
        (None, "target_required"),
    ],
)
def test_shell_execute_matches_exactly_and_refuses_compound_commands(
    target: str | None, code: str
) -> None:
    assert decide("shell.execute", target).code == code


def test_a_compound_command_is_refused_even_under_an_every_scope_allowlist() -> None:
    every = Layer("ceiling", allow=(Grant("shell.execute", ("**",)),))
    assert decide("shell.execute", "make && make install", every).code == "inexact_command"
    assert decide("shell.execute", "make install", every).allowed


@pytest.mark.parametrize("target", TYPED_INSPECT_TARGETS)
def test_shell_inspect_allows_the_six_typed_targets(target: str) -> None:
    assert decide("shell.inspect", target).allowed


@pytest.mark.parametrize("target", ["git status", "cat /etc/passwd", "GIT.STATUS", "", None])
def test_shell_inspect_refuses_anything_else(target: str | None) -> None:
    decision = decide("shell.inspect", target)
    assert (decision.allowed, decision.code) == (False, "untyped_inspect_target")


@pytest.mark.parametrize(
    ("target", "allowed", "scope"),
    [
        ("https://example.com/a?b#c", True, "example.com"),
        ("http://EXAMPLE.COM:8080", True, "example.com"),
        ("http://localhost:3000/health", True, "localhost"),
        ("http://[::1]:9/", True, "::1"),
        ("http://[0:0:0:0:0:0:0:1]/", True, "::1"),
        ("https://api.example.com/", False, "api.example.com"),
        ("https://example.com./", False, "example.com."),
        ("https://user:pw@example.com/", False, "example.com"),
        ("ftp://example.com/", False, "example.com"),
        ("example.com", False, "example.com"),
        ("javascript:alert(1)", False, None),
    ],
)
def test_network_reads_compare_the_canonical_host_exactly(
    target: str, allowed: bool, scope: str | None
) -> None:
    decision = decide("network.read", target)
    assert (decision.allowed, decision.scope) == (allowed, scope)


def test_network_domain_patterns_are_canonicalised_too() -> None:
    upper = Layer("task_contract", allow=(Grant("network.read", ("EXAMPLE.com", "[::1]")),))
    assert decide("network.read", "https://example.com", upper).allowed
    assert decide("network.read", "http://[::1]/", upper).allowed


@pytest.mark.parametrize(
    ("capability", "target", "allowed"),
    [
        ("runtime.inspect", "local", True),
        ("runtime.inspect", "Local", False),
        ("runtime.inspect", None, False),
        ("runtime.restart", "local", False),
    ],
)
def test_runtime_targets_match_the_runtime_lists(
    capability: Capability, target: str | None, allowed: bool
) -> None:
    assert decide(capability, target).allowed is allowed


@pytest.mark.parametrize(
    ("capability", "mode", "allowed"),
    [
        ("browser.inspect", "analyze_only", True),
        ("browser.inspect", "fix_only", False),
        ("browser.mutate", "analyze_and_fix", False),
        ("external.write", "analyze_and_fix", False),
        ("subagent.spawn", "plan_only", True),
        ("subagent.spawn", "report_only", False),
    ],
)
def test_flag_capabilities_follow_their_flags_and_the_mode(
    capability: Capability, mode: Mode, allowed: bool
) -> None:
    assert decide(capability, "anything", mode=mode).allowed is allowed


def test_a_flag_set_to_false_grants_nothing() -> None:
    no_spawn = Layer.from_permissions("task_contract", PermissionSet.empty())
    decision = decide("subagent.spawn", None, Layer.for_mode("plan_only"), no_spawn)
    assert (decision.deciding_layer, decision.code) == ("task_contract", "not_granted")


def test_url_credentials_never_reach_a_flag_capability_scope() -> None:
    decision = decide("browser.inspect", "http://user:hunter2@localhost:3000/login")
    assert decision.scope == "http://localhost:3000/login"


def test_layers_built_from_a_denied_set_deny() -> None:
    denied = permissions_from_capabilities(["network.read"], network_read_domains=["example.com"])
    layer = Layer.from_permissions("authorization", GRANTED, denied=denied)
    mode = Layer.for_mode("analyze_only")
    assert not decide("network.read", "https://example.com", mode, layer).allowed
    assert decide("network.read", "https://localhost", mode, layer).allowed


def test_a_decision_refuses_truth_testing() -> None:
    with pytest.raises(TypeError):
        bool(decide("repository.read", "../x"))
