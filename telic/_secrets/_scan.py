"""Finding, redacting and locating secrets in text and in JSON values."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from telic._secrets._rules import ASSIGNMENT_KIND, Rule, assignments, rules
from telic._secrets._triggers import EXACT_TRIGGERS, FOLDED_ANCHORS, decoded_runs, probe

_TOKEN_END: Final = re.compile(r"[\s'\"`<>]")
_WINDOWED_FROM: Final = 16_384
"""Texts longer than this run each rule only around the occurrences of its anchors."""
_BEFORE: Final = 512
_AFTER: Final = 8_192
"""How far a match may reach before and after its anchor (a PEM block reaches furthest)."""
_MAX_WINDOWS: Final = 64
"""More anchor occurrences than this: the windows would cover the text, so scan it whole."""
_MEMO_CHARS: Final = 8_388_608
_MEMO_ENTRIES: Final = 65_536
"""Bounds of the clean-string memo: characters and strings it keeps alive at most."""


class _CleanMemo:
    """Strings a scan found clean lately, so that scanning them again costs a lookup.

    The ledger's backstop rescans what a gate has just scanned (docs/secrets.md). A hit
    compares the whole string; only a clean verdict is remembered, never a finding. Oldest
    first out, within ``_MEMO_CHARS`` characters and ``_MEMO_ENTRIES`` strings. Thread-safe
    (grounding scans in worker threads).
    """

    def __init__(self) -> None:
        self._strings: dict[str, None] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def unknown(self, strings: Iterable[str]) -> list[str]:
        """The strings not known to be clean, in order."""
        known = self._strings
        with self._lock:
            return [text for text in strings if text not in known]

    def remember(self, strings: Iterable[str]) -> None:
        """Record strings that were just scanned clean."""
        with self._lock:
            for text in strings:
                size = len(text)
                if size > _MEMO_CHARS or text in self._strings:
                    continue
                self._strings[text] = None
                self._chars += size
                while self._chars > _MEMO_CHARS or len(self._strings) > _MEMO_ENTRIES:
                    oldest = next(iter(self._strings))
                    del self._strings[oldest]
                    self._chars -= len(oldest)


CLEAN_MEMO: Final = _CleanMemo()


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


def _windows(haystack: bytes, keys: list[bytes], size: int) -> list[tuple[int, int]] | None:
    """Merged spans around each anchor occurrence, or None to scan the whole text."""
    spans: list[tuple[int, int]] = []
    for key in keys:
        at = haystack.find(key)
        while at >= 0:
            if len(spans) == _MAX_WINDOWS:
                return None  # the windows would cover the text: scan it whole
            spans.append((max(0, at - _BEFORE), min(size, at + len(key) + _AFTER)))
            at = haystack.find(key, at + 1)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _matches(text: str, whole: bool) -> Iterator[SecretFinding]:
    exact_probe = probe(text)
    folded_probe = exact_probe.lower()
    exact = {key for key in EXACT_TRIGGERS if key in exact_probe}
    folded = {key for key in FOLDED_ANCHORS if key in folded_probe}
    # A long text runs each rule only near its anchors (every match holds one), unless the
    # caller needs whole spans (redaction).
    near = not whole and len(text) > _WINDOWED_FROM
    for rule in rules() if exact or folded else ():
        present = folded if rule.folded else exact
        keys = [key for key in rule.keys if key in present]
        if not keys:
            continue
        windows = None
        if near:
            windows = _windows(folded_probe if rule.folded else exact_probe, keys, len(text))
        for start, end in [(0, len(text))] if windows is None else windows:
            yield from _rule_matches(rule, text, start, end)
    for start, end in assignments(text, folded_probe):
        yield SecretFinding(ASSIGNMENT_KIND, start, end)


def _rule_matches(rule: Rule, text: str, pos: int, endpos: int) -> Iterator[SecretFinding]:
    for match in rule.pattern.finditer(text, pos, endpos):
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


def _find(text: str, depth: int, whole: bool = False) -> list[SecretFinding]:
    findings = list(_matches(text, whole))
    raw: bytes | None = None
    for start, end, run, decoded in decoded_runs(text, depth):
        inner = _find(decoded, depth + 1, whole)
        if inner:
            if not text.isascii():  # byte offsets to character offsets
                if raw is None:
                    raw = text.encode("utf-8", "surrogatepass")
                start = len(raw[:start].decode("utf-8", "surrogatepass"))
                end = start + len(run)
            first = min(inner, key=_order)
            findings.append(SecretFinding(first.kind, start, end, first.depth + 1))
    return findings


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Return every likely secret in ``text``, in order of position."""
    return _sorted(text, whole=False)


def _sorted(text: str, whole: bool) -> tuple[SecretFinding, ...]:
    return tuple(sorted(set(_find(text, 0, whole)), key=_order))


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
    findings = _sorted(text, whole=True)  # whole spans, however long the text
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
    return first_secret_in(((path, value),), shown=shown)


def first_secret_in(
    fields: Iterable[tuple[str, object]], *, shown: Callable[[str], bool] = _every_key
) -> tuple[str, SecretFinding] | None:
    """Return ``(path, finding)`` of the first likely secret among several JSON values, or None.

    ``fields`` pairs each value with the path it stands at (as ``first_secret``'s ``path``).
    Every string of every value is scanned as one text, less the strings a scan found clean
    lately (``CLEAN_MEMO``); only after a hit are the values walked one by one with paths.
    """
    pairs = list(fields)
    strings = [text for _, value in pairs for text in iter_strings(value)]
    fresh = CLEAN_MEMO.unknown(strings)
    if not fresh or not _find("\n".join(fresh), 0):
        CLEAN_MEMO.remember(fresh)
        return None
    for prefix, value in pairs:
        for where, text in _walk(value, prefix, shown):
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
