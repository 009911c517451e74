"""Repository globs and repo-relative, realpath-contained targets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from telic.permissions import glob_match, resolve_real_path
from telic.permissions._paths import Refusal, repository_target

from .conftest import FAKE_ROOT, Tree, fake_resolve


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**", "anything/at/all.txt", True),
        ("**", ".git/config", True),
        ("**", ".", True),
        ("src/**", "src/app.py", True),
        ("src/**", "src/lib/deep/x.py", True),
        ("src/**", "src", True),
        ("src/**", "srcx/app.py", False),
        ("src/**", "src/.env", False),
        ("src/**", "src/lib/.cache/x", False),
        ("src/.env", "src/.env", True),
        ("src/.*", "src/.env", True),
        ("src/*", "src/app.py", True),
        ("src/*", "src/lib/app.py", False),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/app.pyc", False),
        ("*.py", ".hidden.py", False),
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("**/*.py", ".github/c.py", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/**/x", "src/a/x", True),
        ("src/?.py", "src/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("src/[ab].py", "src/b.py", True),
        ("src/[!ab].py", "src/b.py", False),
        ("src/[!ab].py", "src/c.py", True),
        ("src/[a-c].py", "src/b.py", True),
        ("src/[z-a].py", "src/b.py", False),
        ("src/[.py", "src/[.py", True),
        ("src/\\*.py", "src/*.py", True),
        ("src/\\*.py", "src/a.py", False),
        ("src/{a,b}.py", "src/a.py", False),
        ("SRC/**", "src/a.py", False),
        ("src//a.py", "src/a.py", True),
        ("./src/a.py", "src/a.py", True),
        ("/src/a.py", "src/a.py", False),
        ("src/../src/a.py", "src/a.py", False),
        ("src/a.py", "src/a.py/b", False),
    ],
)
def test_globs_match_like_node_path_matches_glob(pattern: str, path: str, matches: bool) -> None:
    assert glob_match(pattern, path) is matches


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src/app.py/", "src/app.py"),
        (".", "."),
        ("/repo", "."),
        ("/repo/src/app.py", "src/app.py"),
        ("link/readme.md", "docs/readme.md"),
        ("src/up/src/app.py", "src/app.py"),
        ("a%20b.txt", "a%20b.txt"),
        ("src/100%.txt", "src/100%.txt"),
    ],
)
def test_targets_become_canonical_repo_relative_paths(target: str, expected: str) -> None:
    assert repository_target(target, FAKE_ROOT, fake_resolve) == expected


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("../outside", "path_traversal"),
        ("src/../app.py", "path_traversal"),
        ("/repo/../etc", "path_traversal"),
        ("%2e%2e/outside", "encoded_traversal"),
        ("src%2F..%2F..", "encoded_traversal"),
        ("%252e%252e/x", "encoded_traversal"),
        ("a%00b", "encoded_traversal"),
        ("src\\..\\..\\x", "invalid_path"),
        ("src/a\x00.py", "invalid_path"),
        ("src/a\n.py", "invalid_path"),
        ("~/.ssh/id_rsa", "invalid_path"),
        ("/etc/passwd", "path_escape"),
        ("/repository/x", "path_escape"),
        ("out/secret.txt", "symlink_escape"),
        ("out", "symlink_escape"),
        ("file:///etc/passwd", "not_repository_relative"),
        ("file:src/app.py", "not_repository_relative"),
        ("C:/Windows/system32", "not_repository_relative"),
        ("c:x", "not_repository_relative"),
        ("src/app.py:Zone.Identifier", "not_repository_relative"),
        ("${HOME}/.ssh/id_rsa", "not_repository_relative"),
        ("$HOME/.ssh/id_rsa", "not_repository_relative"),
        ("src/$(id)", "not_repository_relative"),
        ("%USERPROFILE%/.ssh/id_rsa", "not_repository_relative"),
        ("%ProgramFiles(x86)%/x", "not_repository_relative"),
    ],
)
def test_escaping_or_malformed_targets_are_refused(target: str, code: str) -> None:
    refusal = repository_target(target, FAKE_ROOT, fake_resolve)
    assert isinstance(refusal, Refusal)
    assert refusal.code == code


def test_the_real_resolver_follows_the_nearest_existing_ancestor(tree: Tree) -> None:
    real_outside = os.path.realpath(tree.outside)
    assert resolve_real_path(str(tree.root / "out" / "new" / "file.txt")) == os.path.join(
        real_outside, "new", "file.txt"
    )
    assert resolve_real_path(str(tree.root / "dangling")) == os.path.join(real_outside, "new.txt")
    missing = tree.root / "no" / "such" / "dir"
    assert resolve_real_path(str(missing)) == os.path.join(
        os.path.realpath(tree.root), "no", "such", "dir"
    )


@pytest.mark.parametrize(
    "target",
    ["out/secret.txt", "abs_out/secret.txt", "chain/secret.txt", "dangling", "out/new.txt"],
)
def test_real_symlinks_out_of_the_repository_are_refused(tree: Tree, target: str) -> None:
    refusal = repository_target(target, str(tree.root), resolve_real_path)
    assert refusal == Refusal("symlink_escape", "the path resolves outside the repository root")


def test_a_symlinked_file_pointing_outside_is_refused(tree: Tree) -> None:
    refusal = repository_target("src/secret_link.txt", str(tree.root), resolve_real_path)
    assert isinstance(refusal, Refusal)


def test_symlinks_inside_the_repository_resolve_to_their_destination(tree: Tree) -> None:
    assert repository_target("inner/readme.md", str(tree.root), resolve_real_path) == (
        "docs/readme.md"
    )
    assert repository_target("src/new/x.py", str(tree.root), resolve_real_path) == "src/new/x.py"


def test_a_symlinked_repository_root_still_contains_its_files(tree: Tree, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(tree.root, alias)
    assert repository_target("src/app.py", str(alias), resolve_real_path) == "src/app.py"
    assert isinstance(repository_target("out/x", str(alias), resolve_real_path), Refusal)


def test_a_resolved_path_that_cannot_be_matched_safely_is_refused() -> None:
    def encoded(path: str) -> str:
        return path.replace("/repo/weird", "/repo/%2e%2e")

    refusal = repository_target("weird/x", FAKE_ROOT, encoded)
    assert refusal == Refusal("invalid_path", "the resolved path cannot be matched safely")
