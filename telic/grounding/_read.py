"""Reading one candidate safely (docs/protocol.md §4 items 10.3–10.5), blocking, in a thread.

The candidate is resolved inside the root with ``realpath``; an escape is ``symlink_escape``
(or ``path_escape`` when the lexical path already leaves the root). The resolved path is judged
again by the static exclusions, so a harmless name cannot smuggle in ``.env`` or ``.git/config``
through a symlink, and, when git listed the repository, the file a symlink leads to must be
one git lists too (tracked, or untracked and not ignored). The file is then opened with
``O_NOFOLLOW`` and checked with ``fstat`` on the open descriptor — it must be the regular file
that was resolved, with one link only (a hard link's other name may lie outside the
repository), no larger than the budget.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from typing import Final

from telic.grounding._paths import excluded_reason

_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
)


def is_within(path: str, root: str) -> bool:
    """Return whether absolute ``path`` is ``root`` or lies below it (both normalised)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


class CandidateReader:
    """Reads candidates of one repository root; call it with a normalised relative path."""

    def __init__(
        self,
        root: str,
        *,
        max_file_bytes: int,
        excluded_roots: Sequence[str],
        listed: Callable[[str], bool] | None = None,
    ) -> None:
        self._root = root
        self._max = max_file_bytes
        self._excluded = tuple(excluded_roots)
        self._listed = listed

    def __call__(self, path: str) -> bytes | str:
        """Return the raw bytes of ``path``, or the exclusion reason that stopped the read."""
        full = os.path.join(self._root, *path.split("/"))
        if not is_within(os.path.normpath(full), self._root):
            return "path_escape"
        try:
            real = os.path.realpath(full)
        except (OSError, ValueError):
            return "unreadable_file"
        if not is_within(real, self._root):
            return "symlink_escape"
        relative = path if real == full else os.path.relpath(real, self._root).replace(os.sep, "/")
        if real != full and relative != "." and (reason := excluded_reason(relative)) is not None:
            return reason
        try:
            expected = os.stat(real)
        except OSError:
            return "unreadable_file"
        if not stat.S_ISREG(expected.st_mode):
            return "non_regular_file"
        if real != full and self._listed is not None and not self._listed(relative):
            return "excluded_directory"  # a link to a file git does not list (ignored)
        if any(is_within(real, excluded) for excluded in self._excluded):
            return "excluded_directory"
        return self._read(real, expected)

    def _read(self, real: str, expected: os.stat_result) -> bytes | str:
        try:
            descriptor = os.open(real, _OPEN_FLAGS)
        except OSError as exc:
            # ELOOP: the resolved file was swapped for a symlink after the checks above.
            return "symlink_escape" if exc.errno == errno.ELOOP else "unreadable_file"
        try:
            opened = os.fstat(descriptor)
            if not stat.S_ISREG(opened.st_mode):
                return "non_regular_file"
            if (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino):
                return "unreadable_file"
            if opened.st_nlink > 1:
                # Another name of this file may lie outside the repository, and only a search
                # of the whole file system could tell: a hard-linked file is never read.
                return "non_regular_file"
            if opened.st_size > self._max:
                return "file_too_large"
            chunks: list[bytes] = []
            remaining = self._max + 1
            while remaining > 0:
                chunk = os.read(descriptor, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
        except OSError:
            return "unreadable_file"
        finally:
            os.close(descriptor)
        data = b"".join(chunks)
        # The file may have grown between fstat and read; the budget is on what was read.
        return "file_too_large" if len(data) > self._max else data
