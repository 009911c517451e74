"""Protected repository paths: what no repository grant reaches without a separate user grant.

Writing ``.git/hooks/pre-commit`` runs code on the user's next commit, ``.git/config`` can name
a program git runs, ``.github/workflows/*`` runs code in CI with the repository's secrets, and
``.env`` files hold secrets. A grant of ``repository.write`` or ``repository.delete`` over
``**`` (every fix mode's default) would otherwise cover them all. So the mutating repository
capabilities never reach a protected path unless the user also granted that path explicitly,
in ``protected_paths_granted`` at start_run; reads are not affected.

``PROTECTED_PATHS`` is the documented set (docs/security.md). Matching is deliberately wider
than the patterns' spelling, because the file systems Telic runs on are: a segment is compared
case-insensitively and without trailing dots and spaces (``.GIT``, ``.git.`` and ``.git `` are
``.git`` on macOS and Windows), the code points HFS+ ignores in names (zero-width joiners,
direction marks, U+FEFF, as git's ``core.protectHFS`` lists them) are dropped first, and
``git~1`` and ``github~1`` (the 8.3 short names of ``.git`` and ``.github`` on NTFS) count as
``.git`` and ``.github``. An explicit grant is matched by ``glob_match`` against the path
exactly as given, so a grant of ``.git/config`` does not reach ``.GIT/config``: near-misses
stay protected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from telic.permissions._paths import glob_match
from telic.permissions._targets import GLOB_CHARS

PROTECTED_PATHS: Final[tuple[str, ...]] = (".git/**", "**/.git/**", ".github/**", "**/.env*")
"""The protected set: every git directory (nested ones too), the CI folder, and env files."""

MUTATING_REPOSITORY: Final = frozenset({"repository.write", "repository.delete"})
"""The capabilities the protected set applies to."""

_SHORT_GIT: Final = re.compile(r"git~\d+")
_SHORT_GITHUB: Final = re.compile(r"github~\d+")
_HFS_IGNORED: Final = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
"""The code points HFS+ leaves out when it compares names (``str.translate`` deletes them)."""


def protected_pattern(path: str) -> str | None:
    """Return the ``PROTECTED_PATHS`` entry that covers the repo-relative ``path``, or ``None``."""
    if path == ".":
        return None
    segments = [s.translate(_HFS_IGNORED).rstrip(". ").lower() for s in path.split("/")]
    for index, segment in enumerate(segments):
        if segment == ".git" or _SHORT_GIT.fullmatch(segment):
            return ".git/**" if index == 0 else "**/.git/**"
    if segments[0] == ".github" or _SHORT_GITHUB.fullmatch(segments[0]):
        return ".github/**"
    if segments[-1].startswith(".env"):
        return "**/.env*"
    return None


def protection_lifted(path: str, granted: Sequence[str]) -> bool:
    """Whether one of the user's explicit ``granted`` patterns covers ``path``."""
    return any(glob_match(pattern, path) for pattern in granted)


def protected_grant_problem(pattern: str) -> str | None:
    """Say why ``pattern`` cannot be an explicit protected-path grant, or return ``None``.

    A grant names its paths: it is repo-relative, its first segment is literal (so ``**`` and
    ``*/...`` cannot grant every protected path at once), it has no ``..`` segment, backslash,
    colon, control character or ``$``/``~`` expansion, and it reaches a protected path.
    """
    if not pattern or len(pattern) > 1024:
        return "the pattern must be 1-1,024 characters"
    if pattern.startswith("/") or re.search(r"[\\:$\x00-\x1f\x7f]", pattern):
        return "the pattern is not a plain repository-relative path"
    segments = pattern.split("/")
    if any(s in ("", ".", "..") for s in segments) or segments[0].startswith("~"):
        return "the pattern has an empty, '.', '..' or home-relative segment"
    if any(char in GLOB_CHARS for char in segments[0]):
        return "the first segment must be literal: name the protected paths granted"
    literal = segments[: next((i for i, s in enumerate(segments) if GLOB_CHARS & set(s)), None)]
    if protected_pattern("/".join(literal)) is None:
        return "the pattern reaches no protected path (its literal prefix is not protected)"
    return None
