"""One real repository per exclusion reason: each reason is counted, and only counted."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from telic.grounding import GroundingBudget, ground_repository
from telic.grounding._read import CandidateReader
from telic.protocol import EXCLUSION_REASONS

from .repos import exclusions, git, make_repo, selected_paths

pytestmark = pytest.mark.anyio

PASSWORD = "pass" + "word = 'Zq8-not-a-placeholder'\n"


@dataclass
class Case:
    files: dict[str, str | bytes]
    count: int = 1
    budget: GroundingBudget = field(default_factory=GroundingBudget)
    setup: Callable[[Path, Path], None] | None = None
    """Called with (repository, its parent) after the files are committed."""


def _symlink(name: str, target: str) -> Callable[[Path, Path], None]:
    def setup(repo: Path, outside: Path) -> None:
        (outside / "outside.txt").write_text("outside the repository\n", encoding="utf-8")
        os.symlink(target.format(outside=outside), repo / name)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "link")

    return setup


def _odd_names(repo: Path, outside: Path) -> None:
    (repo / "back\\slash.txt").write_text("a backslash in the name\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(repo), b"bad-\xff-name.txt"), "wb") as handle:
        handle.write(b"not a UTF-8 file name\n")


def _delete_after_commit(repo: Path, outside: Path) -> None:
    (repo / "gone.txt").unlink()


def _many(count: int, size: int = 8) -> dict[str, str | bytes]:
    return {f"notes/n{n:02d}.txt": f"{n:0{size - 1}d}\n" for n in range(count)}


CASES: dict[str, Case] = {
    "binary_file": Case({"data/blob.bin": b"\x00\x01\x02\x03binary"}),
    "duplicate_content": Case({"a.txt": "same text\n", "b.txt": "same text\n"}),
    "excluded_directory": Case(
        {"dist/app.js": "x\n", "node_modules/p/index.js": "y\n", "Build/out.txt": "z\n"}, 3
    ),
    "file_count_budget": Case(_many(3), 2, GroundingBudget(max_files=1)),
    "file_too_large": Case(
        {"big.txt": "x" * 101, "ok.txt": "y" * 100}, 1, GroundingBudget(max_file_bytes=100)
    ),
    "inventory_budget": Case(_many(5), 3, GroundingBudget(max_inventory_files=2)),
    "invalid_path": Case({"ok.txt": "fine\n"}, 2, setup=_odd_names),
    "invalid_utf8": Case({"latin.txt": b"caf\xe9 au lait\n"}),
    "low_relevance": Case(_many(11), 3),
    "non_regular_file": Case({"docs/guide.md": "guide\n"}, setup=_symlink("docs-link", "docs")),
    "secret_content": Case({"src/settings.py": PASSWORD}),
    "secret_like_file": Case({".env": "MODE=dev\n", "keys/id_rsa": "k\n"}, 2),
    "symlink_escape": Case(
        {"ok.txt": "fine\n"}, setup=_symlink("escape.txt", "{outside}/outside.txt")
    ),
    "total_bytes_budget": Case(_many(3, size=40), 1, GroundingBudget(max_total_bytes=80)),
    "unreadable_file": Case({"gone.txt": "deleted after commit\n"}, setup=_delete_after_commit),
}  # fmt: skip


def test_every_reason_but_path_escape_has_a_repository_case() -> None:
    assert set(CASES) | {"path_escape"} == set(EXCLUSION_REASONS)


@pytest.mark.parametrize("reason", sorted(CASES))
async def test_each_exclusion_reason_is_counted(reason: str, tmp_path: Path) -> None:
    case = CASES[reason]
    repo = make_repo(tmp_path / "repo", case.files)
    if case.setup is not None:
        case.setup(repo, tmp_path)
    result = await ground_repository(
        run_id="run-1",
        original_request="Summarise everything",
        repository_root=repo,
        mode="analyze_only",
        budget=case.budget,
    )
    assert exclusions(result).get(reason) == case.count, exclusions(result)
    wire = result.wire
    assert wire.budget.selected_files == len(wire.selected_sources)
    for source in wire.selected_sources:
        assert source.size_bytes <= case.budget.max_file_bytes


async def test_the_file_size_limit_is_inclusive(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"at.txt": "x" * 100, "over.txt": "y" * 101})
    budget = GroundingBudget(max_file_bytes=100)
    result = await ground_repository(
        run_id="run-1", original_request="at over", repository_root=repo, mode="plan_only",
        budget=budget,
    )  # fmt: skip
    assert selected_paths(result) == ["at.txt"]
    assert exclusions(result) == {"file_too_large": 1}


def test_a_path_that_leaves_the_root_lexically_is_a_path_escape(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "root").mkdir()
    reader = CandidateReader(str(tmp_path / "root"), max_file_bytes=100, excluded_roots=())
    assert reader("../outside.txt") == "path_escape"


def test_a_symlink_to_a_secret_inside_the_root_is_judged_by_its_target(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MODE=dev\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    os.symlink(".env", tmp_path / "notes.txt")
    os.symlink(".git/config", tmp_path / "settings.ini")
    reader = CandidateReader(str(tmp_path), max_file_bytes=100, excluded_roots=())
    assert reader("notes.txt") == "secret_like_file"
    assert reader("settings.ini") == "excluded_directory"


def test_files_under_an_excluded_root_are_excluded_directories(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "db.txt").write_text("x\n", encoding="utf-8")
    reader = CandidateReader(
        str(tmp_path), max_file_bytes=100, excluded_roots=(str(tmp_path / "state"),)
    )
    assert reader("state/db.txt") == "excluded_directory"


def test_a_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    reader = CandidateReader(str(tmp_path), max_file_bytes=100, excluded_roots=())
    assert reader("pipe") == "non_regular_file"
