"""Path checks in blocks: the inventory-sized versions of the ``_paths`` predicates.

An inventory holds up to 100,000 paths, nearly all of them plain. Each function here joins a
block of paths with NUL and asks a few substring questions of the whole block; only a block
that might hold an odd, excluded or instruction path is checked path by path. The results are
exactly those of the per-path functions (a property the tests check).
"""

from __future__ import annotations

from typing import Final

from telic._secrets import SECRET_EXTENSIONS, SECRET_HINTS
from telic.grounding._paths import (
    EXCLUDED_DIRECTORIES,
    INSTRUCTION_BASENAMES,
    PLAIN_REF_SAFE_CHARS,
    excluded_reason,
    is_instruction_path,
    normalize_path,
)

# Substrings that may betray a path needing normalisation, over NUL-joined paths: a block
# holding none of them (nor a suspect start or end) needs no per-path work.
_SUSPECT_PARTS: Final = tuple(
    sorted(
        {"\\", "//", "\0\0", "\0/", "/\0"}
        | {f"{left}{dots}{right}" for left in "\0/" for dots in (".", "..") for right in "\0/"}
    )
)
_SUSPECT_STARTS: Final = ("/", "\0", "./", ".\0", "../", "..\0")
_SUSPECT_ENDS: Final = ("/", "\0", "/.", "\0.", "/..", "\0..")
_INSTRUCTION_PARTS: Final = (*INSTRUCTION_BASENAMES, "rules/", "instructions/")
# Lower-case substrings of every excluded directory and every secret-like name.
_EXCLUSION_PARTS: Final = (*EXCLUDED_DIRECTORIES, *SECRET_HINTS, *SECRET_EXTENSIONS)
_BLOCK: Final = 512


def normalize_paths(raw: list[str]) -> tuple[list[str], int]:
    """Return the valid paths of ``raw`` in normal form, and how many were invalid.

    Paths are checked in blocks: a block of plain ASCII paths without anything suspect is
    taken as it is, so only blocks holding an odd path pay for path-by-path normalisation.
    """
    valid: list[str] = []
    invalid = 0
    for start in range(0, len(raw), _BLOCK):
        block = raw[start : start + _BLOCK]
        joined = "\0".join(block)
        if (
            joined.isascii()
            and not any(part in joined for part in _SUSPECT_PARTS)
            and not joined.startswith(_SUSPECT_STARTS)
            and not joined.endswith(_SUSPECT_ENDS)
            and joined not in {"", ".", ".."}
            and joined.count("\0") == len(block) - 1
            and max(map(len, block)) <= PLAIN_REF_SAFE_CHARS
        ):
            valid.extend(block)
            continue
        for path in block:
            normal = normalize_path(path)
            if normal is None:
                invalid += 1
            else:
                valid.append(normal)
    return valid, invalid


def instruction_paths(paths: list[str]) -> list[str]:
    """Return the instruction paths among normalised ``paths``, in their order."""
    found: list[str] = []
    for start in range(0, len(paths), _BLOCK):
        block = paths[start : start + _BLOCK]
        joined = "\0".join(block)
        if any(part in joined for part in _INSTRUCTION_PARTS):
            found.extend(path for path in block if is_instruction_path(path))
    return found


class PathCollector:
    """Normalises inventory paths as they stream in, and notes the instruction paths."""

    def __init__(self) -> None:
        self.valid: list[str] = []
        """Normalised paths, in listing order (repeats possible)."""
        self.invalid = 0
        """Listed paths that could not be normalised."""
        self.instructions: list[str] = []
        """The instruction paths among ``valid``."""

    def __call__(self, raw: list[str]) -> None:
        """Take the next listed paths."""
        valid, invalid = normalize_paths(raw)
        self.valid.extend(valid)
        self.invalid += invalid
        self.instructions.extend(instruction_paths(valid))

    @property
    def listed(self) -> int:
        """How many paths were listed, valid or not."""
        return len(self.valid) + self.invalid


def filter_excluded(paths: list[str], counts: dict[str, int]) -> list[str]:
    """Return the paths that may be context, adding the others to ``counts`` by reason.

    Works in blocks like ``normalize_paths``: a plain ASCII block in which neither an excluded
    directory nor a hint of a secret-like name occurs is kept without path-by-path checks.
    """
    kept: list[str] = []
    for start in range(0, len(paths), _BLOCK):
        block = paths[start : start + _BLOCK]
        joined = "\0".join(block)
        lowered = joined.lower()
        if joined.isascii() and not any(part in lowered for part in _EXCLUSION_PARTS):
            kept.extend(block)
            continue
        for path in block:
            reason = excluded_reason(path)
            if reason is None:
                kept.append(path)
            else:
                counts[reason] = counts.get(reason, 0) + 1
    return kept
