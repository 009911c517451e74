"""Finding, redacting and locating secrets in text and in JSON values."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from telic._secrets._rules import ASSIGNMENT_KIND, assignments, decode_text, table

__all__ = [
    "MAX_DECODE_DEPTH",
    "SecretFinding",
    "contains_secret",
    "find_secrets",
    "first_secret",
    "iter_strings",
    "marker",
    "redact",
]

MAX_DECODE_DEPTH: Final = 3
"""Layers of base64 decoded while scanning: a secret inside three nested encodings is found."""

_MIN_BASE64: Final = 16
_TOKEN_END: Final = re.compile(r"[\s'\"`<>]")
_BASE64_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where a likely secret was found: its kind and character span, never its text.

    ``depth`` is 0 for a match in the text itself and ``n`` for one found after decoding ``n``
    layers of base64; then the span covers the whole encoded run.
    """

    kind: str
    start: int
    end: int
    depth: int = 0


def _order(finding: SecretFinding) -> tuple[int, int, bool, str]:
    # Among findings that cover the same span, a specific kind names it before the generic one.
    generic = finding.kind == ASSIGNMENT_KIND
    return finding.start, -finding.end, generic, finding.kind


def _matches(text: str, lowered: str) -> Iterator[SecretFinding]:
    rules = table()
    exact = {anchor for anchor in rules.exact if anchor in text}
    folded = {anchor for anchor in rules.folded if anchor in lowered}
    for rule in rules.rules if exact or folded else ():
        if (folded if rule.folded else exact).isdisjoint(rule.anchors):
            continue
        for match in rule.pattern.finditer(text):
            if rule.accept is not None and not rule.accept(match):
                continue
            group = rule.group
            if group is None:
                group = 1 if rule.pattern.groups and len(match.group(1) or "") >= 8 else 0
            start, end = match.span(group)
            if rule.clip:
                # Some upstream patterns run to the end of the line (npm's ``npm_.+``): a token
                # ends at the first space or quote, and the rest of the text is kept.
                stop = _TOKEN_END.search(text, start, end)
                end = end if stop is None or stop.start() == start else stop.start()
            if start < end:
                yield SecretFinding(rule.kind, start, end)
    for start, end in assignments(text, lowered):
        yield SecretFinding(ASSIGNMENT_KIND, start, end)


def _find(text: str, depth: int) -> list[SecretFinding]:
    findings = list(_matches(text, text.lower()))
    if depth < MAX_DECODE_DEPTH and len(text) >= _MIN_BASE64:
        for run in _BASE64_RUN.finditer(text):
            if run.group().isalpha():
                continue  # an identifier: the base64 of a secret has digits or symbols
            decoded = decode_text(run.group())
            if decoded is None:
                continue
            inner = _find(decoded, depth + 1)
            if inner:
                first = min(inner, key=_order)
                findings.append(SecretFinding(first.kind, run.start(), run.end(), first.depth + 1))
    return findings


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Return every likely secret in ``text``, in order of position."""
    return tuple(sorted(set(_find(text, 0)), key=_order))


def contains_secret(text: str) -> bool:
    """Return whether ``text`` holds at least one likely secret."""
    return bool(_find(text, 0))


def marker(kind: str) -> str:
    """Return the typed marker that stands in for a redacted secret of ``kind``."""
    return f"[redacted:{kind}]"


def redact(text: str) -> str:
    """Return ``text`` with every likely secret replaced by its typed marker.

    Overlapping findings are merged and named by the first of them; everything outside a
    finding is kept, so a redacted target still says what was attempted.
    """
    findings = find_secrets(text)
    if not findings:
        return text
    pieces: list[str] = []
    position = 0
    for finding in findings:
        if finding.end <= position:
            continue
        start = max(finding.start, position)
        if start == position and pieces and pieces[-1].startswith("[redacted:"):
            position = finding.end  # extends the marker just written
            continue
        pieces.append(text[position:start])
        pieces.append(marker(finding.kind))
        position = finding.end
    pieces.append(text[position:])
    return "".join(pieces)


_UNSHOWN: Final = "(key)"


def _walk(value: object, path: str, shown: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """Yield ``(path, string)`` for every string of a JSON value, object keys included.

    A key becomes a path segment only when ``shown`` accepts it and it holds no secret; any
    other key is ``(key)`` in the paths, its own included.
    """
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            text = key if isinstance(key, str) else str(key)
            segment = text if shown(text) and not contains_secret(text) else _UNSHOWN
            yield (f"{path}.{_UNSHOWN}" if path else _UNSHOWN), text
            yield from _walk(item, f"{path}.{segment}" if path else segment, shown)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}.{index}" if path else str(index), shown)


def _every_key(key: str) -> bool:
    return True


def first_secret(
    value: object, path: str = "", *, shown: Callable[[str], bool] = _every_key
) -> tuple[str, SecretFinding] | None:
    """Return ``(path, finding)`` of the first likely secret in a JSON value, or None.

    ``path`` is dot-joined below ``path``: array indexes as numbers, object keys as themselves
    when ``shown`` accepts them, and ``(key)`` for any other key and for a key that itself
    holds the secret, so the path can be shown to the caller. All the strings are scanned as
    one text first; the walk with paths runs only after a hit.
    """
    if not _find("\n".join(iter_strings(value)), 0):
        return None
    for where, text in _walk(value, path, shown):
        findings = find_secrets(text)
        if findings:
            return (where or "(body)"), findings[0]
    return None  # a match that only spans two strings is no finding


def iter_strings(value: object) -> Iterator[str]:
    """Yield every string in a decoded JSON value: object keys, values and array items."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, list | tuple):
            stack.extend(item)
        # dict before the Mapping ABC, whose check costs several times as much
        elif isinstance(item, dict) or isinstance(item, Mapping):  # noqa: SIM101
            for key, child in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(child)
