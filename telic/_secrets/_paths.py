"""Secret-like file names (docs/protocol.md §4 item 8): judged by name alone, for grounding."""

from __future__ import annotations

import re
from typing import Final

_SECRET_BASENAMES: Final = frozenset({".git-credentials", ".netrc", ".npmrc", ".pypirc"})
_SECRET_SEGMENTS: Final = frozenset({"credential", "credentials", "secret", "secrets"})
_SECRET_BASENAME_PREFIX: Final = re.compile(
    r"^(?:credentials?\.|secrets?\.|service-account[._-]|id_(?:dsa|ecdsa|ed25519|rsa))",
    re.IGNORECASE,
)
SECRET_EXTENSIONS: Final = (".key", ".p12", ".pfx", ".pem")
"""Lower-case endings of key files, secret-like wherever they stand."""
SECRET_HINTS: Final = (
    ".env",
    "credential",
    "secret",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "service-account",
    "id_",
)
"""Lower-case substrings of which every ASCII secret-like path holds one, unless it ends with
one of ``SECRET_EXTENSIONS``: a path with neither needs no exact check."""


def is_secret_like_path(path: str) -> bool:
    """Return whether a repository-relative path names a file that likely holds secrets."""
    segments = [segment for segment in path.replace("\\", "/").split("/") if segment]
    if not segments:
        return False
    if any(segment.lower() in _SECRET_SEGMENTS for segment in segments):
        return True
    basename = segments[-1]
    lowered = basename.lower()
    return (
        lowered.startswith(".env")
        or lowered in _SECRET_BASENAMES
        or _SECRET_BASENAME_PREFIX.match(basename) is not None
        or lowered.endswith(SECRET_EXTENSIONS)
    )
