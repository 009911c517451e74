"""Protected paths: no write or delete reaches git directories, ``.github`` or env files without
the user's explicit, separate grant; reads are not affected; the grant's own form is checked."""

from __future__ import annotations

import pytest

from telic._errors import RuleViolation
from telic.permissions import (
    PROTECTED_PATHS,
    Decision,
    Grant,
    Layer,
    authorize_action,
    protected_pattern,
    start_run_authority,
)
from telic.permissions._protected import protected_grant_problem
from telic.protocol._types import CAPABILITIES, Capability

from .conftest import FAKE_ROOT, fake_resolve

EVERYTHING = Layer("authorization", allow=tuple(Grant(c, ("**",)) for c in CAPABILITIES))


def decide(
    capability: Capability, target: str, *granted: str, layers: list[Layer] | None = None
) -> Decision:
    stack = layers or [Layer.for_mode("analyze_and_fix"), EVERYTHING]
    return authorize_action(
        capability,
        target,
        stack,
        repository_root=FAKE_ROOT,
        resolve=fake_resolve,
        protected_granted=granted,
    )


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        (".git", ".git/**"),
        (".git/config", ".git/**"),
        (".git/hooks/pre-commit", ".git/**"),
        (".GIT/config", ".git/**"),
        (".git./config", ".git/**"),
        (".git /config", ".git/**"),
        ("GIT~1/config", ".git/**"),
        ("vendor/lib/.git/config", "**/.git/**"),
        (".github/workflows/ci.yml", ".github/**"),
        (".GitHub/workflows/ci.yml", ".github/**"),
        (".env", "**/.env*"),
        (".env.local", "**/.env*"),
        (".envrc", "**/.env*"),
        ("services/api/.env", "**/.env*"),
    ],
)
def test_the_protected_set_covers_git_ci_and_env_files_in_every_spelling(
    path: str, pattern: str
) -> None:
    assert protected_pattern(path) == pattern
    assert pattern in PROTECTED_PATHS


@pytest.mark.parametrize(
    "path", [".", "src/app.py", ".gitignore", ".gitattributes", "docs/.github.md", "env/x", "a.env"]
)
def test_ordinary_paths_are_not_protected(path: str) -> None:
    assert protected_pattern(path) is None


@pytest.mark.parametrize(
    "target",
    [".git/hooks/pre-commit", ".git/config", ".github/workflows/ci.yml", ".env", "/repo/.git/HEAD"],
)
@pytest.mark.parametrize("capability", ["repository.write", "repository.delete"])
def test_a_write_or_delete_grant_over_everything_does_not_reach_a_protected_path(
    capability: Capability, target: str
) -> None:
    decision = decide(capability, target)
    assert (decision.allowed, decision.deciding_layer, decision.code) == (
        False,
        "protected",
        "protected_path",
    )
    assert "protected_paths_granted" in decision.reason
    assert decide("repository.read", target).allowed


def test_an_explicit_grant_lifts_the_protection_of_exactly_what_it_names() -> None:
    assert decide("repository.write", ".github/workflows/ci.yml", ".github/workflows/*").allowed
    assert decide("repository.write", ".git/hooks/pre-commit", ".git/hooks/*").allowed
    assert not decide("repository.write", ".git/config", ".git/hooks/*").allowed
    assert not decide("repository.write", ".GIT/hooks/pre-commit", ".git/hooks/*").allowed
    assert not decide("repository.delete", "src/.env", ".env").allowed
    assert decide("repository.delete", "src/.env", "src/.env").allowed


def test_an_explicit_grant_never_allows_what_a_layer_does_not() -> None:
    contract = Layer("task_contract", allow=(Grant("repository.write", ("src/**",)),))
    layers = [Layer.for_mode("analyze_and_fix"), EVERYTHING, contract]
    decision = decide("repository.write", ".git/config", ".git/**", layers=layers)
    assert (decision.allowed, decision.deciding_layer, decision.code) == (
        False,
        "task_contract",
        "out_of_scope",
    )
    report_only = [Layer.for_mode("report_only"), EVERYTHING]
    assert not decide("repository.write", ".git/config", ".git/**", layers=report_only).allowed


@pytest.mark.parametrize(
    "pattern",
    [
        "**",
        "*/.git/config",
        "**/.env",
        "src/**",
        "/repo/.git/config",
        "../.git/config",
        ".git/../src",
        "C:/x/.git",
        "$HOME/.env",
        "~/.env",
        ".git\\config",
        "",
        "a//.env",
    ],
)
def test_a_grant_must_name_protected_paths_by_a_literal_repo_relative_prefix(pattern: str) -> None:
    assert protected_grant_problem(pattern) is not None


@pytest.mark.parametrize(
    "pattern", [".git/hooks/*", ".git/**", ".github/workflows/ci.yml", ".env", "api/.env.local"]
)
def test_a_grant_that_names_protected_paths_is_accepted(pattern: str) -> None:
    assert protected_grant_problem(pattern) is None


def test_start_run_refuses_a_malformed_or_unbacked_protected_grant_naming_the_rules() -> None:
    with pytest.raises(RuleViolation) as excinfo:
        start_run_authority(
            mode="analyze_only",
            host_capabilities=["repository.read"],
            protected_paths_granted=["**", ".git/hooks/*"],
        )
    issues = [(i.rule, i.path) for i in excinfo.value.issues]
    assert issues == [
        ("SR-PROTECTED-UNAUTHORIZED", "protected_paths_granted"),
        ("SR-PROTECTED-FORM", "protected_paths_granted.0"),
    ]
    assert excinfo.value.code == "invariant_violation"


def test_start_run_keeps_valid_protected_grants_sorted_and_unique() -> None:
    authority = start_run_authority(
        mode="fix_only",
        host_capabilities=["repository.read", "repository.write"],
        authorization_granted=["repository.read", "repository.write"],
        protected_paths_granted=[".github/workflows/*", ".git/hooks/*", ".github/workflows/*"],
    )
    assert authority.protected_paths_granted == (".git/hooks/*", ".github/workflows/*")


# Issue 28, item 7: the spellings the docs claim for macOS and Windows. HFS+ ignores these code
# points when it compares names (git's core.protectHFS list), and NTFS answers to 8.3 names.
HFS_IGNORED = [
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u202a",
    "\u202e",
    "\u206a",
    "\u206f",
    "\ufeff",
]


@pytest.mark.parametrize("ignored", HFS_IGNORED, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize(
    ("spelled", "pattern"),
    [
        (".g{}it/config", ".git/**"),
        ("{}.git/hooks/pre-commit", ".git/**"),
        (".git{}/config", ".git/**"),
        ("vendor/.gi{}t/config", "**/.git/**"),
        (".git{}hub/workflows/ci.yml", ".github/**"),
    ],
)
def test_a_protected_name_with_a_code_point_hfs_ignores_is_still_protected(
    ignored: str, spelled: str, pattern: str
) -> None:
    path = spelled.format(ignored)
    assert protected_pattern(path) == pattern
    decision = decide("repository.write", path)
    assert (decision.allowed, decision.code) == (False, "protected_path")


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("GIT~1/config", ".git/**"),
        ("git~2/hooks/pre-commit", ".git/**"),
        ("GITHUB~1/workflows/ci.yml", ".github/**"),
        ("github~3/workflows/ci.yml", ".github/**"),
    ],
)
def test_an_ntfs_short_name_of_a_protected_folder_is_still_protected(
    path: str, pattern: str
) -> None:
    assert protected_pattern(path) == pattern
    assert not decide("repository.delete", path).allowed
