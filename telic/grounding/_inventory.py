"""Listing the repository (docs/protocol.md §4 item 5): git, else ripgrep, else a bounded walk.

Every source streams its paths into a ``PathCollector``, which normalises them as they come. A
source that fails hands over to the next with a warning; the first that succeeds wins. Blocking,
for a worker thread started by anyio.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import anyio.from_thread

from telic.grounding._batch import PathCollector
from telic.grounding._git import GitState, StatusReader
from telic.grounding._paths import EXCLUDED_DIRECTORIES
from telic.grounding._process import NulSplitter, run_tool
from telic.grounding._read import is_within
from telic.protocol import InventorySource

_RG_FILES: Final = (
    "--files",
    "--hidden",
    "--no-ignore",
    "--null",
    "--no-config",
    "--no-messages",
    *(option for name in sorted(EXCLUDED_DIRECTORIES) for option in ("--glob", f"!{name}")),
)
_RIPGREP_WARNING: Final = (
    "The git inventory was unavailable; the repository was listed with ripgrep"
)
_WALK_WARNING: Final = (
    "The git and ripgrep inventories were unavailable; the repository was listed by a bounded"
    " filesystem walk"
)


@dataclass(slots=True)
class Inventory:
    """The listed paths (normalised as they arrived), their source, and what git said."""

    source: InventorySource
    paths: PathCollector
    warnings: list[str] = field(default_factory=list)
    status: StatusReader | None = None
    """The digest of ``git status``, when git could give it."""
    head: str | None = None
    """``git rev-parse HEAD``, when there is one."""


def _walk(root: str, limit: int, excluded_roots: Sequence[str]) -> list[str]:
    """List files below ``root`` in sorted depth-first order, stopping after ``limit``."""
    found: list[str] = []
    pending: list[tuple[str, str]] = [(root, "")]
    while pending and len(found) < limit:
        anyio.from_thread.check_cancelled()
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        subdirectories: list[tuple[str, str]] = []
        for entry in entries:
            try:
                is_directory = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_directory:
                found.append(prefix + entry.name)
                if len(found) >= limit:
                    break
            elif entry.name.lower() not in EXCLUDED_DIRECTORIES and not any(
                is_within(entry.path, excluded) for excluded in excluded_roots
            ):
                subdirectories.append((entry.path, prefix + entry.name + "/"))
        pending.extend(reversed(subdirectories))
    return found


def list_repository(
    root: str, *, git: GitState | None, limit: int, excluded_roots: Sequence[str]
) -> Inventory:
    """List the repository at ``root``; the first source that succeeds wins.

    ``git`` is what ``read_git`` found at ``root``, or None when ``root`` is not in a work tree.
    """
    status, head = None, None
    if git is not None:
        if git.paths is not None:
            return Inventory("git", git.paths, [], git.status, git.head)
        status, head = git.status, git.head
    collected = PathCollector()
    splitter = NulSplitter(collected)
    code = run_tool(("rg", *_RG_FILES), cwd=root, sink=splitter, check=False)
    splitter.finish()
    if code == 0 or (code == 1 and not splitter.count):  # 1 and no output: no file at all
        return Inventory("ripgrep", collected, [_RIPGREP_WARNING], status, head)
    collected = PathCollector()
    collected(_walk(root, limit + 1, tuple(excluded_roots)))
    return Inventory("filesystem", collected, [_WALK_WARNING], status, head)
