"""Repository-relative paths: normalisation, instruction paths, static exclusions and refs.

All functions here are pure and work on POSIX-style relative paths (docs/protocol.md §4 items
6–8 and 10.11). A normalised path has no backslash, NUL, ``.``, ``..`` or empty segment, no leading
``./`` and no doubled ``/``; it is valid UTF-8, at most 1024 characters long, and its
``repo://`` reference fits in 2048 characters.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

from telic._secrets import SECRET_EXTENSIONS, SECRET_HINTS, is_secret_like_path
from telic.protocol import MAX_REFERENCE_URI, MAX_RELATIVE_PATH

PLAIN_REF_SAFE_CHARS: Final = (MAX_REFERENCE_URI - len("repo://")) // 3
"""Longest ASCII path whose reference surely fits (each character encodes to at most 3)."""

PINNED_INSTRUCTION_FILES: Final = (
    "AGENTS.md",
    "CLAUDE.md",
    "CODEX.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".github/copilot-instructions.md",
)
"""Instruction files always added to the candidates when they exist at the root."""

EXCLUDED_DIRECTORIES: Final = frozenset(
    {".git", ".telic", "build", "coverage", "dist", "node_modules"}
)
"""Path segments (compared case-insensitively) whose files are never context."""

INSTRUCTION_BASENAMES: Final = frozenset(
    name.rpartition("/")[2] for name in PINNED_INSTRUCTION_FILES
)
"""File names that make an instruction file wherever they stand."""

_INSTRUCTION_DIRECTORIES: Final = (
    ".roo/rules/",
    ".cursor/rules/",
    ".agents/rules/",
    ".github/instructions/",
)
# Anything that might need rewriting or rejection; paths without a match are already normal.
_SUSPECT: Final = re.compile(r"[\\\x00]|//|^\.{1,2}(?:/|$)|/\.{1,2}(?:/|$)|^/|/$|^$")
_SLASHES: Final = re.compile(r"/{2,}")
# encodeURIComponent's unreserved set, so refs read as the original's do.
_REF_SAFE: Final = "!~*'()"


def normalize_path(raw: str) -> str | None:
    """Return the normal form of a repository-relative path, or None if it is invalid."""
    path = raw
    if _SUSPECT.search(path) is not None:
        if "\\" in path or "\0" in path:
            return None
        path = _SLASHES.sub("/", path)
        while path.startswith("./"):
            path = path[2:]
        if not path or path.startswith("/") or path.endswith("/"):
            return None
        if any(segment in {".", ".."} for segment in path.split("/")):
            return None
    if len(path) > MAX_RELATIVE_PATH:
        return None
    if not path.isascii():
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in the file name (surrogateescape)
            return None
    if (len(path) > PLAIN_REF_SAFE_CHARS or not path.isascii()) and len(
        repository_ref(path)
    ) > MAX_REFERENCE_URI:
        return None  # its repo:// reference would be too long
    return path


def is_instruction_path(path: str) -> bool:
    """Return whether a normalised path is an agent instruction file (protocol.md §4 item 6)."""
    if path.rpartition("/")[2] in INSTRUCTION_BASENAMES:
        return True
    if "rules/" not in path and "instructions/" not in path:
        return False
    return any(
        path.startswith(directory) or f"/{directory}" in path
        for directory in _INSTRUCTION_DIRECTORIES
    )


def instruction_scope(path: str) -> str:
    """Return the directory an instruction file governs, or "." for a root-level file."""
    directory = path.rpartition("/")[0]
    return directory or "."


def excluded_reason(path: str) -> str | None:
    """Return the static exclusion of a normalised path, or None when it may be context.

    ``excluded_directory`` when a segment is a build, dependency or VCS directory;
    ``secret_like_file`` when the path looks like it holds credentials (``telic._secrets``).
    """
    lowered = path.lower()
    if any(segment in EXCLUDED_DIRECTORIES for segment in lowered.split("/")):
        return "excluded_directory"
    # the exact (slower) check runs only on the few paths the hints cannot clear
    hinted = any(hint in lowered for hint in SECRET_HINTS) or lowered.endswith(SECRET_EXTENSIONS)
    if path.isascii() and not hinted:
        return None
    return "secret_like_file" if is_secret_like_path(path) else None


def repository_ref(path: str) -> str:
    """Return the ``repo://`` reference of a normalised path, segments percent-encoded."""
    return "repo://" + "/".join(quote(segment, safe=_REF_SAFE) for segment in path.split("/"))
