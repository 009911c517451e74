"""Listing the repository (docs/protocol.md §4 item 5): git, else ripgrep, else a bounded walk.

Every source streams its paths into a ``PathCollector``, which normalises them as they come. A
source that fails hands over to the next with a warning; the first that succeeds wins. Blocking,
for a worker thread started by anyio.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

import anyio.from_thread

from telic.grounding._batch import PathCollector
from telic.grounding._paths import EXCLUDED_DIRECTORIES
from telic.grounding._process import list_paths
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
SOURCE_WARNINGS: Final[dict[InventorySource, str]] = {
    "ripgrep": "The git inventory was unavailable; the repository was listed with ripgrep",
    "filesystem": "The git and ripgrep inventories were unavailable; the repository was listed"
    " by a bounded filesystem walk",
}
"""The warning of an inventory that git did not list, by its source."""


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
    root: str, *, git: PathCollector | None, limit: int, excluded_roots: Sequence[str]
) -> tuple[InventorySource, PathCollector]:
    """List the repository at ``root``; the first source that succeeds wins.

    ``git`` is what ``read_git`` listed at ``root``, or None when git could not list it.
    """
    if git is not None:
        return "git", git
    code, collected = list_paths(("rg", *_RG_FILES), cwd=root, check=False)
    if code == 0 or (code == 1 and not collected.listed):  # 1 and no output: no file at all
        return "ripgrep", collected
    collected = PathCollector()
    collected(_walk(root, limit + 1, tuple(excluded_roots)))
    return "filesystem", collected
