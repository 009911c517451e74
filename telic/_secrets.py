"""Heuristic detection of secret-like paths and secret-like content (reference §4 items 8, 10).

Grounding excludes files whose path or content looks secret; the Evidence service rejects a
submission holding a likely secret ("redact before submission"). A finding records only the
kind and position of a match, never the matched text, so nothing found here can leak through an
error message, a log or the trace. This is a heuristic: it catches the common shapes of private
keys, cloud and forge tokens, JWTs and ``password=``-style assignments, and lets obvious
placeholders through; it is no substitute for a real secret scanner.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "SecretFinding",
    "contains_secret",
    "find_secrets",
    "is_secret_like_path",
    "iter_strings",
]

_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("aws_access_key", re.compile(r"(?<![A-Z0-9])AKIA[0-9A-Z]{16}(?![A-Z0-9])")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}")),
    (
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"),
    ),
)
_ASSIGNMENT: Final = re.compile(
    r"(?i)(?<![a-z0-9])(api[_-]?key|authorization|client[_-]?secret|password|secret|token)"
    r"[\"']?\s*[:=]\s*[\"']?([^\s\"'`,;]{8,})"
)
_PLACEHOLDER_PREFIXES: Final = ("${", "<", "example", "placeholder", "redacted", "changeme")

_SECRET_BASENAMES: Final = frozenset({".git-credentials", ".netrc", ".npmrc", ".pypirc"})
_SECRET_SEGMENTS: Final = frozenset({"credential", "credentials", "secret", "secrets"})
_SECRET_BASENAME_PREFIX: Final = re.compile(
    r"^(?:credentials?\.|secrets?\.|service-account[._-]|id_(?:dsa|ecdsa|ed25519|rsa))",
    re.IGNORECASE,
)
_SECRET_EXTENSIONS: Final = (".key", ".p12", ".pfx", ".pem")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where a likely secret was found: its kind and character span, never its text."""

    kind: str
    start: int
    end: int


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Return every likely secret in ``text``, in order of position."""
    findings = [
        SecretFinding(kind, match.start(), match.end())
        for kind, pattern in _PATTERNS
        for match in pattern.finditer(text)
    ]
    for match in _ASSIGNMENT.finditer(text):
        if not match.group(2).lower().startswith(_PLACEHOLDER_PREFIXES):
            findings.append(SecretFinding("assignment", match.start(), match.end()))
    return tuple(sorted(findings, key=lambda f: (f.start, f.kind)))


def contains_secret(text: str) -> bool:
    """Return whether ``text`` holds at least one likely secret."""
    if any(pattern.search(text) for _, pattern in _PATTERNS):
        return True
    return any(
        not match.group(2).lower().startswith(_PLACEHOLDER_PREFIXES)
        for match in _ASSIGNMENT.finditer(text)
    )


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
        or lowered.endswith(_SECRET_EXTENSIONS)
    )


def iter_strings(value: object) -> Iterator[str]:
    """Yield every string in a decoded JSON value: object keys, values and array items."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
