"""The repository root, the active paths and the pinned files (docs/protocol.md §4 items 3, 4, 6).

Blocking filesystem calls; the shell runs them in a worker thread. Relative active paths are
relative to the repository root; absolute ones must lie below the root as given or as resolved.
An active path that leaves the root, lexically or through a symlink, is refused with
``ContextSecurityError``; the message names the path by its position only (``active path #2``),
never its text, which may itself be or hold a secret that no scan recognises.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from telic._errors import ContextSecurityError, UsageError
from telic.grounding._paths import PINNED_INSTRUCTION_FILES, normalize_path
from telic.grounding._read import is_within


def real_directory(path: str) -> tuple[str, str]:
    """Return the absolute and the real path of a directory; ``UsageError`` if it is not one."""
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    if not os.path.isdir(real):
        raise UsageError("repository_root must be an existing directory")
    return absolute, real


@dataclass(frozen=True, slots=True)
class ActivePaths:
    """Active paths as normalised repository paths."""

    hints: tuple[str, ...]
    """Every active path, existing or not, in the order given without repeats."""
    files: tuple[str, ...]
    """Those that exist and are not directories: they become pinned candidates."""


def _relative(raw: str, root: str, given: str) -> str | None:
    """Return ``raw`` relative to the root, or None when it leaves it lexically."""
    if not os.path.isabs(raw):
        relative = posixpath.normpath(raw.replace(os.sep, "/"))
        return None if relative == ".." or relative.startswith("../") else relative
    lexical = os.path.normpath(raw)
    for anchor in (root, given):
        if is_within(lexical, anchor):
            offset = os.path.relpath(os.path.realpath(anchor), root)
            inside = os.path.relpath(lexical, anchor)
            return posixpath.normpath(os.path.join(offset, inside).replace(os.sep, "/"))
    return None


def resolve_active_paths(root: str, given: str, raw_paths: Sequence[str]) -> ActivePaths:
    """Resolve active paths against the repository ``root`` (``given`` is the root as passed).

    Raises:
        ContextSecurityError: when a path escapes the root lexically or through a symlink.
        UsageError: when a path cannot name a repository file (backslash, too long, …).
    """
    hints: dict[str, None] = {}
    files: dict[str, None] = {}
    for number, raw in enumerate(raw_paths, start=1):
        # Where, never what: an active path may itself be (or hold) a secret the scan misses.
        shown = f"active path #{number}"
        relative = _relative(raw, root, given)
        if relative is None:
            raise ContextSecurityError(
                f"{shown} lies outside the repository root; pass a path inside"
                " the repository, relative to its root or absolute"
            )
        if relative == ".":
            continue  # the whole repository: no hint and no candidate
        path = normalize_path(relative)
        if path is None:
            raise UsageError(f"{shown} is not a valid repository path")
        full = os.path.join(root, *path.split("/"))
        if not is_within(os.path.realpath(full), root):
            raise ContextSecurityError(
                f"{shown} escapes the repository root through a symbolic link;"
                " pass the file's real location inside the repository instead"
            )
        hints[path] = None
        if _exists_not_directory(full):  # a missing one is kept as a lexical hint only
            files[path] = None
    return ActivePaths(tuple(hints), tuple(files))


def _exists_not_directory(full: str) -> bool:
    try:
        return not stat.S_ISDIR(os.lstat(full).st_mode)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Prepared:
    """The resolved root, active paths, pinned files and excluded roots of a grounding."""

    root: str
    active: ActivePaths
    pinned: list[str]
    excluded: tuple[str, ...]
    """Excluded roots as absolute paths, lexical and real spellings."""
    excluded_prefixes: tuple[str, ...]
    """Excluded roots inside the repository, relative ("" when one holds the repository)."""


def git_root(root: str, top_level: str) -> str:
    """Return the real git top level when it is a directory holding ``root``, else ``root``."""
    real_top = os.path.realpath(top_level)
    if os.path.isdir(real_top) and os.path.commonpath([real_top, root]) == real_top:
        return real_top
    return root


def prepare(root: str, given: str, active: Sequence[str], excluded: Sequence[str]) -> Prepared:
    """Resolve everything about the (final) root before selecting (blocking; run in a thread)."""
    spellings = dict.fromkeys(
        spelling
        for path in excluded
        for spelling in (os.path.normpath(os.fspath(path)), os.path.realpath(path))
    )
    prefixes: dict[str, None] = {}
    for spelling in spellings:
        if os.path.commonpath([spelling, root]) == spelling:
            prefixes[""] = None  # the excluded root holds the repository
        elif os.path.commonpath([spelling, root]) == root:
            prefixes[os.path.relpath(spelling, root).replace(os.sep, "/")] = None
    return Prepared(
        root=root,
        active=resolve_active_paths(root, given, active),
        pinned=[
            name
            for name in PINNED_INSTRUCTION_FILES
            if _exists_not_directory(os.path.join(root, *name.split("/")))
        ],
        excluded=tuple(spellings),
        excluded_prefixes=tuple(prefixes),
    )
