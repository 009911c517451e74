"""What git says: ls-files --cached plus status's untracked entries equal the full ls-files, and
one rev-parse gives the top level and HEAD."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import anyio
import pytest

from telic.grounding import ground_repository
from telic.grounding._batch import PathCollector
from telic.grounding._git import GitState, StatusReader, parse_rev_parse, read_git
from telic.grounding._process import NulSplitter

from .repos import GIT_ENV, git, make_repo, selected_paths

pytestmark = pytest.mark.anyio


def _tricky_repository(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "*.log\nbuild-output/\n",
            "src/old_name.py": "x = 1\n",
            "src/keep.py": "y = 2\n",
            "src/gone.py": "z = 3\n",
            "docs/with space.md": "spaced\n",
            "docs/ünï.md": "unicode\n",
        },
    )
    git(repo, "mv", "src/old_name.py", "src/new_name.py")  # a staged rename: "R  new\0old\0"
    (repo / "src" / "keep.py").write_text("y = 20\n", encoding="utf-8")  # modified
    (repo / "src" / "gone.py").unlink()  # deleted in the work tree, still in the index
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_text("untracked\n", encoding="utf-8")
    (repo / "notes" / "deep" / "er").mkdir(parents=True)
    (repo / "notes" / "deep" / "er" / "x.md").write_text("untracked, deep\n", encoding="utf-8")
    (repo / "notes" / "line\nbreak.txt").write_text("newline in the name\n", encoding="utf-8")
    (repo / "debug.log").write_text("ignored\n", encoding="utf-8")
    (repo / "build-output").mkdir()
    (repo / "build-output" / "a.o").write_text("ignored\n", encoding="utf-8")
    make_repo(repo / "vendored", {"inner.txt": "a nested repository\n"})
    return repo


def _git_output(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True
    ).stdout


async def _read_git(root: Path) -> GitState:
    return await anyio.to_thread.run_sync(read_git, str(root))


def _full_ls_files(repo: Path) -> PathCollector:
    output = _git_output(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    collected = PathCollector()
    splitter = NulSplitter(collected)
    splitter(output)
    splitter.finish()
    return collected


async def test_the_inventory_equals_the_full_ls_files_listing(tmp_path: Path) -> None:
    repo = _tricky_repository(tmp_path)
    state = await _read_git(repo)
    assert state.paths is not None
    assert state.status is not None
    expected = _full_ls_files(repo)
    assert sorted(set(state.paths.valid)) == sorted(set(expected.valid))
    assert state.paths.invalid == expected.invalid == 1  # the nested repository's "vendored/"
    assert "src/new_name.py" in state.paths.valid
    assert "src/old_name.py" not in state.paths.valid
    assert "notes/line\nbreak.txt" in state.paths.valid
    assert state.head == git(repo, "rev-parse", "HEAD").strip()


async def test_the_status_digest_covers_the_exact_status_output(tmp_path: Path) -> None:
    repo = _tricky_repository(tmp_path)
    output = _git_output(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    state = await _read_git(repo)
    assert state.status is not None
    reader = StatusReader(lambda paths: None)
    for start in range(0, len(output), 7):  # any chunking gives the same digest
        reader(output[start : start + 7])
    expected = "sha256:" + hashlib.sha256(output + b"tail").hexdigest()
    assert reader.digest_with(b"tail") == state.status.digest_with(b"tail") == expected


async def test_when_status_fails_the_full_ls_files_lists_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _tricky_repository(tmp_path)
    monkeypatch.setattr("telic.grounding._git._STATUS", ("git", "status", "--no-such-option"))
    state = await _read_git(repo)
    assert state.status is None
    assert state.paths is not None
    assert sorted(set(state.paths.valid)) == sorted(set(_full_ls_files(repo).valid))
    result = await ground_repository(
        run_id="run-1", original_request="notes", repository_root=repo, mode="plan_only"
    )
    assert result.wire.inventory_source == "git"
    assert any("fingerprint covers only" in warning for warning in result.wire.warnings)
    assert "notes/todo.txt" in selected_paths(result)


async def test_one_rev_parse_gives_the_top_level_and_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "a\n"})
    for root in (repo, repo / "src"):
        state = await _read_git(root)
        assert state.top_level == str(repo.resolve())
        assert state.head == git(repo, "rev-parse", "HEAD").strip()


async def test_a_repository_without_commits_has_a_top_level_but_no_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"}, commit=False)
    state = await _read_git(repo)
    assert state.top_level == str(repo.resolve())
    assert state.head is None
    assert state.paths is not None
    assert state.paths.valid == ["a.py"]  # untracked, from status


async def test_outside_a_work_tree_git_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_text("a\n", encoding="utf-8")
    assert await _read_git(tmp_path / "plain") == GitState(None, None, None, None)


@pytest.mark.parametrize(
    ("code", "output", "expected"),
    [
        (0, b"/repo\n" + b"a" * 40 + b"\n", ("/repo", "a" * 40)),
        (1, b"/repo\n", ("/repo", None)),  # no commit yet
        (0, b"/odd\nname\n" + b"b" * 40 + b"\n", ("/odd\nname", "b" * 40)),
        (1, b"/odd\nname\n", ("/odd\nname", None)),
        (128, b"", (None, None)),  # not a work tree
        (None, b"", (None, None)),  # git missing
        (0, b"c" * 40 + b"\n", (None, "c" * 40)),  # no top level printed: not a work tree
    ],
)
def test_rev_parse_output_splits_into_top_level_and_head(
    code: int | None, output: bytes, expected: tuple[str | None, str | None]
) -> None:
    assert parse_rev_parse(code, output) == expected
