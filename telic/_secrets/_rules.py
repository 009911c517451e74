"""The rule set: detect-secrets' regex plugins with their anchors, and Telic's own rules.

See ``telic._secrets`` for how they are used and docs/secrets.md for what they find.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from telic._secrets._triggers import KEYWORD_BYTES, OWN_RULES, PLUGINS, decode_text

_ASSIGNED: Final = re.compile(
    r"[A-Za-z0-9_.-]*[\"']?\s*(?:=|:=|=>|:(?!:))\s*(?P<quote>[\"']?)(?P<value>[^\s\"'`,;(){}\[\]<>\\]{8,})"
)
_PLACEHOLDERS: Final = (
    "${",
    "$(",
    "{{",
    "%(",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "your",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "....",
)
_SYMBOLS: Final = frozenset("!@#$%^&*+=~")
_SNAKE: Final = re.compile(r"[a-z]+[0-9]*(?:_[a-z]+[0-9]*){2,}")
_DOTTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _value_looks_secret(value: str) -> bool:
    """A credential-shaped value: not a placeholder, a code expression, a path or a word.

    Values of letters only are let through: in code they are type names and identifiers.
    """
    lowered = value.lower()
    if lowered.startswith(_PLACEHOLDERS) or "://" in value or _DOTTED.fullmatch(value):
        return False
    if _SNAKE.fullmatch(value):
        return False  # an identifier such as a test name
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 12 and bool(_SYMBOLS.intersection(value))


def _boundary(text: str, start: int) -> bool:
    """Whether a keyword at ``start`` begins a word or a camelCase part of an identifier."""
    if start == 0:
        return True
    before = text[start - 1]
    if not before.isalpha():
        return True
    return text[start].isupper() and before.islower()


def assignments(text: str, lowered: bytes) -> Iterator[tuple[int, int]]:
    """Yield the value spans of ``<credential name> = <credential-shaped value>``.

    ``lowered`` is the text as lowered ASCII bytes, one byte per character (see ``probe``).
    """
    seen: set[int] = set()
    for keyword in KEYWORD_BYTES:
        at = lowered.find(keyword)
        while at >= 0:
            author = lowered.startswith(b"author", at) and not lowered.startswith(b"authoriz", at)
            if _boundary(text, at) and not author:
                match = _ASSIGNED.match(text, at + len(keyword))
                if match is not None and match.start("value") not in seen:
                    end = match.end("value")
                    call = text[end : end + 1] == "("
                    if not call and _value_looks_secret(match.group("value")):
                        seen.add(match.start("value"))
                        yield match.start("value"), end
            at = lowered.find(keyword, at + 1)


def _docker_auth(match: re.Match[str]) -> bool:
    decoded = decode_text(match.group("value"))
    return decoded is not None and ":" in decoded


@dataclass(frozen=True, slots=True)
class Rule:
    """One regular expression, the kind it reports and the literals that gate it."""

    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    """Literals of which every match holds one (case-sensitive)."""
    group: int | str | None = 0
    """The group whose span is the secret; None: the first group when it is 8+ characters
    (detect-secrets' patterns capture the secret there), else the whole match."""
    accept: Callable[[re.Match[str]], bool] | None = None
    source: str = "telic"
    folded: bool = False
    """Whether the pattern ignores case, so its anchors are looked for in the lowered text."""
    clip: bool = False
    """Whether a match ends at its first space or quote (for upstream patterns)."""

    keys: tuple[bytes, ...] = ()
    """The anchors as ASCII bytes, as they are looked for (see ``probe``)."""

    def __post_init__(self) -> None:
        if self.pattern.flags & re.IGNORECASE:
            object.__setattr__(self, "folded", True)
            object.__setattr__(self, "anchors", tuple(a.lower() for a in self.anchors))
        object.__setattr__(self, "keys", tuple(a.encode() for a in self.anchors))


_OWN: Final = tuple(
    Rule(
        kind,
        re.compile(pattern),
        anchors,
        group,
        _docker_auth if kind == "docker-registry-auth" else None,
    )
    for kind, pattern, anchors, group in OWN_RULES
)
ASSIGNMENT_KIND: Final = "credential-assignment"


@functools.cache
def rules() -> tuple[Rule, ...]:
    """Every regex rule, detect-secrets' first, then Telic's own (their anchors are the
    ``_triggers`` sets)."""
    import importlib

    found: list[Rule] = []
    for module_name, class_name, anchors in PLUGINS:
        module = importlib.import_module(f"detect_secrets.plugins.{module_name}")
        plugin = getattr(module, class_name)
        kind = re.sub(r"[^a-z0-9]+", "-", plugin.secret_type.lower()).strip("-")
        for pattern in plugin.denylist:
            source = f"detect-secrets {class_name}"
            found.append(Rule(kind, pattern, anchors, None, source=source, clip=True))
    return (*found, *_OWN)


def rule_sources() -> tuple[tuple[str, str], ...]:
    """Return ``(kind, source)`` for every rule, in the order they run (for the docs)."""
    pairs = [(rule.kind, rule.source) for rule in rules()]
    pairs.append((ASSIGNMENT_KIND, "telic"))
    return tuple(dict.fromkeys(pairs))


def warm() -> None:
    """Import detect-secrets and compile its rules now rather than on the first scan."""
    rules()
