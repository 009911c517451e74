"""Fixtures of the permission tests: a real repository with symlinks, and a pure fake resolver."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

FAKE_ROOT = "/repo"
"""The repository root the pure tests use; the fake resolver never touches the filesystem."""

FAKE_LINKS = {"/repo/link": "/repo/docs", "/repo/out": "/outside", "/repo/src/up": "/repo"}
"""Symlinks the fake resolver pretends exist (source → canonical destination)."""


def fake_resolve(path: str) -> str:
    """Resolve ``path`` through ``FAKE_LINKS`` only, like realpath on an imaginary tree."""
    for _ in range(8):
        for source, destination in FAKE_LINKS.items():
            if path == source or path.startswith(source + "/"):
                path = destination + path[len(source) :]
                break
        else:
            return path
    return path


@dataclass(frozen=True)
class Tree:
    """A real repository on disk, with an outside directory and symlinks of every kind."""

    root: Path
    outside: Path


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """Build ``repo/`` with files and symlinks next to an ``outside/`` directory."""
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    (root / "src" / "lib").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    outside.mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / ".env").write_text("X=1\n")
    (root / "docs" / "readme.md").write_text("# hi\n")
    (root / ".git" / "config").write_text("[core]\n")
    (outside / "secret.txt").write_text("secret\n")
    os.symlink("../outside", root / "out")
    os.symlink(str(outside), root / "abs_out")
    os.symlink("out", root / "chain")
    os.symlink("../outside/new.txt", root / "dangling")
    os.symlink("docs", root / "inner")
    os.symlink("../../outside/secret.txt", root / "src" / "secret_link.txt")
    return Tree(root=root, outside=outside)
