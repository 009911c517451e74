"""Grounding reads only files git lists (tracked, or untracked and not ignored) and only files
with one link: a git-ignored file named as an active path or reached through a symlink, and a
hard link to content outside the repository, are counted and never read. Outside git nothing
is ignored. Every marker is fresh per run, so no earlier run can make a test pass."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from telic.grounding import GroundingResult, ground_repository

from .repos import exclusions, git, make_repo, selected_paths, write_tree

pytestmark = pytest.mark.anyio


def _marker() -> str:
    return f"MARKER-{secrets.token_hex(8)}"


async def _ground(root: Path, active: list[str] | None = None) -> GroundingResult:
    return await ground_repository(
        run_id="run-1",
        original_request="look at the invoice notes",
        repository_root=root,
        mode="analyze_only",
        active_paths=active or [],
    )


def _read(result: GroundingResult) -> str:
    return "".join(document.content for document in result.documents)


@pytest.mark.parametrize("spelling", ["relative", "absolute"])
async def test_a_git_ignored_file_named_as_an_active_path_is_never_read(
    spelling: str, tmp_path: Path
) -> None:
    hidden, shown = _marker(), _marker()
    repo = make_repo(
        tmp_path / "repo",
        {".gitignore": "local/\n", "src/invoice.py": f"# {shown}\n"},
    )
    write_tree(repo, {"local/invoice-notes.txt": f"{hidden}\n"})
    named = "local/invoice-notes.txt"
    active = [named if spelling == "relative" else str(repo / named)]
    result = await _ground(repo, active)
    assert named not in selected_paths(result)
    assert hidden not in _read(result)
    assert shown in _read(result)  # the tracked file beside it still is
    assert exclusions(result)["excluded_directory"] == 1


async def test_an_untracked_file_git_does_not_ignore_is_read_as_an_active_path(
    tmp_path: Path,
) -> None:
    fresh = _marker()
    repo = make_repo(tmp_path / "repo", {".gitignore": "local/\n", "src/app.py": "x = 1\n"})
    write_tree(repo, {"drafts/invoice-notes.txt": f"{fresh}\n"})
    result = await _ground(repo, ["drafts/invoice-notes.txt"])
    assert "drafts/invoice-notes.txt" in selected_paths(result)
    assert fresh in _read(result)


async def test_a_tracked_symlink_to_a_git_ignored_file_is_never_read(tmp_path: Path) -> None:
    hidden = _marker()
    repo = make_repo(tmp_path / "repo", {".gitignore": "local/\n", "src/app.py": "x = 1\n"})
    write_tree(repo, {"local/invoice-notes.txt": f"{hidden}\n"})
    os.symlink("local/invoice-notes.txt", repo / "invoice-notes.txt")
    git(repo, "add", "invoice-notes.txt")
    git(repo, "commit", "-q", "-m", "link")
    result = await _ground(repo, ["invoice-notes.txt"])
    assert hidden not in _read(result)
    assert exclusions(result)["excluded_directory"] == 1


async def test_a_symlink_to_a_tracked_file_is_still_read(tmp_path: Path) -> None:
    fresh = _marker()
    repo = make_repo(tmp_path / "repo", {"docs/invoice.md": f"{fresh}\n"})
    os.symlink("docs/invoice.md", repo / "invoice-notes.md")
    git(repo, "add", "invoice-notes.md")
    git(repo, "commit", "-q", "-m", "link")
    result = await _ground(repo, ["invoice-notes.md"])
    assert "invoice-notes.md" in selected_paths(result)
    assert fresh in _read(result)


@pytest.mark.parametrize("tracked", [True, False], ids=["committed", "untracked"])
async def test_a_hard_link_to_a_file_outside_the_repository_is_never_read(
    tracked: bool, tmp_path: Path
) -> None:
    outside = _marker()
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    (tmp_path / "outside.txt").write_text(f"{outside}\n", encoding="utf-8")
    os.link(tmp_path / "outside.txt", repo / "invoice-notes.txt")
    if tracked:
        git(repo, "add", "invoice-notes.txt")
        git(repo, "commit", "-q", "-m", "linked")
    result = await _ground(repo, ["invoice-notes.txt"])
    assert outside not in _read(result)
    assert exclusions(result)["non_regular_file"] == 1


async def test_two_hard_links_inside_the_repository_are_not_read_either(tmp_path: Path) -> None:
    # The simple sound rule: more than one link is refused, wherever the other link is.
    fresh = _marker()
    repo = make_repo(tmp_path / "repo", {"a/invoice-notes.txt": f"{fresh}\n"})
    os.link(repo / "a/invoice-notes.txt", repo / "b-invoice-notes.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "linked")
    result = await _ground(repo)
    assert fresh not in _read(result)
    assert exclusions(result)["non_regular_file"] == 2


async def test_outside_git_nothing_is_ignored_and_hard_links_are_still_refused(
    tmp_path: Path,
) -> None:
    listed, outside = _marker(), _marker()
    root = tmp_path / "plain"
    write_tree(root, {".gitignore": "local/\n", "local/invoice-notes.txt": f"{listed}\n"})
    (tmp_path / "outside.txt").write_text(f"{outside}\n", encoding="utf-8")
    os.link(tmp_path / "outside.txt", root / "invoice-linked.txt")
    result = await _ground(root, ["local/invoice-notes.txt"])
    assert result.wire.inventory_source != "git"
    assert listed in _read(result)  # no git, no ignore rules: the file is listed and read
    assert outside not in _read(result)
    assert exclusions(result)["non_regular_file"] == 1
