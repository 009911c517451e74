"""Repository targets: repo-relative, realpath-contained paths and a small glob matcher.

A repository target is refused before any permission layer is consulted when it is not a plain
repository path: a URI (``file:///etc/passwd``) or drive path (``C:/Windows``; any colon, which
also spells NTFS streams), a variable to expand (``${HOME}/.ssh``, ``$HOME``, ``%USERPROFILE%``),
a ``..`` segment, a percent-encoded dot, slash, backslash, percent or NUL, a backslash, a
control character, a home-relative ``~`` first segment, or an absolute path outside the root.
Telic never expands anything: refusing is the only way to be sure the host, its shell or its
platform will not read the text as a path outside the repository. What is
left is made repo-relative, and the *nearest existing ancestor* of the path is realpath'd, so a
symlink that leads out of the repository is denied even when the file behind it does not exist
yet. The filesystem is reached only through a ``Resolver``, so the algebra stays pure and tests
can inject a fake one.

Globs follow Node's ``path.matchesGlob`` on POSIX: ``*``, ``?`` and ``[...]`` match within one
segment, a ``**`` segment matches zero or more segments, ``\\`` escapes, and wildcards do not
match a segment that starts with ``.`` unless the pattern spells the dot. The lone pattern ``**``
matches every path, dot-files and the root included. Braces and extglobs are not supported and
match literally, which can only deny more.

Paths are POSIX paths: the repository root must be absolute and ``/``-separated.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

Resolver = Callable[[str], str]
"""Map an absolute path to its canonical form: realpath of the nearest existing ancestor plus
the rest of the path unchanged."""

_ENCODED: Final = re.compile(r"%(?:2e|2f|5c|25|00)", re.IGNORECASE)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_WINDOWS_VARIABLE: Final = re.compile(r"%[A-Za-z_][A-Za-z0-9_()]*%")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a target was refused before any layer was asked."""

    code: str
    reason: str


def resolve_real_path(path: str) -> str:
    """Realpath the nearest existing ancestor of ``path`` and re-append the missing rest."""
    current = os.path.normpath(path)
    missing: list[str] = []
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        missing.append(os.path.basename(current))
        current = parent
    return os.path.join(os.path.realpath(current), *reversed(missing))


def _inside(root: str, path: str) -> bool:
    return path == root or os.path.commonpath([root, path]) == root


def repository_target(target: str, repository_root: str, resolve: Resolver) -> str | Refusal:
    """Return the canonical repo-relative POSIX path of ``target`` (``"."`` for the root)."""
    if _CONTROL.search(target):
        return Refusal("invalid_path", "the path contains a control character")
    if "\\" in target:
        return Refusal("invalid_path", "the path contains a backslash")
    if _ENCODED.search(target):
        return Refusal("encoded_traversal", "the path contains a percent-encoded separator or dot")
    if ":" in target:
        return Refusal(
            "not_repository_relative",
            "the path contains a colon (a URI, a drive or a stream), not a repository path",
        )
    if "$" in target or _WINDOWS_VARIABLE.search(target):
        return Refusal(
            "not_repository_relative",
            "the path names a variable to expand ($NAME, ${NAME}, %NAME%), not a repository path",
        )
    segments = [s for s in target.split("/") if s not in ("", ".")]
    if ".." in segments:
        return Refusal("path_traversal", "the path contains a '..' segment")
    if target.startswith("/"):
        root_segments = [s for s in os.path.normpath(repository_root).split("/") if s]
        if segments[: len(root_segments)] != root_segments:
            return Refusal("path_escape", "the absolute path lies outside the repository root")
        segments = segments[len(root_segments) :]
    real_root = resolve(os.path.normpath(repository_root))
    real = resolve(os.path.join(os.path.normpath(repository_root), *segments))
    if not _inside(real_root, real):
        return Refusal("symlink_escape", "the path resolves outside the repository root")
    relative = os.path.relpath(real, real_root).replace(os.sep, "/")
    if relative.startswith("~"):
        # Checked on the canonical result, so that normalising a result again is the identity.
        return Refusal("invalid_path", "the path is home-relative")
    if (
        _ENCODED.search(relative)
        or _CONTROL.search(relative)
        or _WINDOWS_VARIABLE.search(relative)
        or any(char in relative for char in "\\:$")
    ):
        return Refusal("invalid_path", "the resolved path cannot be matched safely")
    return relative


def _segment_regex(segment: str) -> re.Pattern[str] | None:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := segment.find("]", i + 2)) != -1:
            body = segment[i + 1 : end]
            negate = body[0] in "!^"
            body = body[1:] if negate else body
            escaped = "".join(c if c == "-" else re.escape(c) for c in body)
            out.append(f"[{'^' if negate else ''}{escaped}]")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    if not segment.startswith("."):
        out.insert(0, r"(?!\.)")
    try:
        return re.compile("".join(out))
    except re.error:
        return None


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> tuple[re.Pattern[str] | None, ...] | None:
    if pattern.startswith("/"):
        return None
    parts: list[str] = []
    for segment in pattern.split("/"):
        if segment in ("", ".") or (segment == "**" and parts[-1:] == ["**"]):
            continue
        if segment == "..":
            return None
        parts.append(segment)
    compiled: list[re.Pattern[str] | None] = []
    for part in parts:
        if part == "**":
            compiled.append(None)
            continue
        regex = _segment_regex(part)
        if regex is None:
            return None
        compiled.append(regex)
    return tuple(compiled)


def glob_match(pattern: str, path: str) -> bool:
    """Tell whether a repo-relative ``path`` matches ``pattern`` (``None`` parts are ``**``)."""
    if pattern == "**":
        return True
    parts = _compile(pattern)
    if parts is None:
        return False
    segments = [] if path == "." else path.split("/")
    # reachable[j]: the pattern parts consumed so far can end right before segment j.
    reachable = [j == 0 for j in range(len(segments) + 1)]
    for part in parts:
        nxt = [False] * (len(segments) + 1)
        for j, ok in enumerate(reachable):
            if not ok:
                continue
            if part is None:
                nxt[j] = True
                for k in range(j, len(segments)):
                    if segments[k].startswith("."):
                        break
                    nxt[k + 1] = True
            elif j < len(segments) and part.fullmatch(segments[j]):
                nxt[j + 1] = True
        reachable = nxt
    return reachable[-1]
