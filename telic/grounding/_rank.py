"""Deterministic relevance ranking by path tokens only (docs/protocol.md §4 item 9).

Contents are never searched. A path scores for being pinned (an instruction file or an exact
active path), for its nearness to an active path, for request path hints it ends with, for
request terms among its file-name tokens and its directory tokens, and for being root project
metadata. Candidates sort by score, highest first, then by path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

PINNED_SCORE: Final = 1_000_000
ACTIVE_SCORE: Final = 50_000
NEAR_ACTIVE_SCORE: Final = 10_000
HINT_SCORE: Final = 5_000
BASENAME_TERM_SCORE: Final = 250
PATH_TERM_SCORE: Final = 75
METADATA_SCORE: Final = 20

# fmt: off
STOP_WORDS: Final = frozenset({
    "a", "about", "after", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can",
    "check", "code", "could", "do", "does", "file", "fix", "for", "from", "how", "if", "in",
    "into", "investigate", "is", "it", "make", "me", "my", "not", "of", "on", "or", "please",
    "project", "report", "review", "should", "task", "that", "the", "this", "to", "we", "what",
    "when", "with", "you", "your",
})
# fmt: on
"""Words too common in requests to say anything about which files matter (53 of them)."""

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_TOKEN: Final = re.compile(r"[a-z0-9]+")
_HINT: Final = re.compile(r"[A-Za-z0-9_.@~+-]+(?:/[A-Za-z0-9_.@~+-]+)+")
_METADATA: Final = frozenset(
    {"package.json", "package-lock.json", "pyproject.toml", "cargo.toml", "go.mod"}
)
_MAX_REASON_ITEMS: Final = 8
_MAX_REASON_ITEM_CHARS: Final = 64


def tokenize(text: str) -> list[str]:
    """Split camelCase, lowercase, keep ``[a-z0-9]+`` runs and crudely stem plurals.

    A token longer than four characters that ends in ``s`` but not in ``ss``, ``is`` or ``us``
    loses the ``s``.
    """
    if not text.islower():  # only text with an upper-case letter has camelCase to split
        text = _CAMEL.sub(" ", text)
    return [
        token[:-1] if len(token) > 4 and token[-1] == "s" and token[-2] not in "siu" else token
        for token in _TOKEN.findall(text.lower())
    ]


@dataclass(frozen=True, slots=True)
class RequestTerms:
    """What a request contributes to ranking: its terms and its path hints."""

    terms: frozenset[str]
    """Tokens of length ≥2 that are not stop words."""
    hints: tuple[str, ...]
    """Substrings that look like ``a/b[/c…]``, trailing punctuation removed."""


def request_terms(request: str) -> RequestTerms:
    """Return the ranking terms and path hints of an original request."""
    terms = {token for token in tokenize(request) if len(token) >= 2 and token not in STOP_WORDS}
    hints = dict.fromkeys(
        hint
        for match in _HINT.findall(request)
        if (hint := match.rstrip(".").removeprefix("./")) and "/" in hint
    )
    return RequestTerms(frozenset(terms), tuple(hints))


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate in ranking order: its path, score and whether it is pinned."""

    path: str
    score: int
    pinned: bool
    instruction: bool


def _listing(items: Iterable[str]) -> str:
    ordered = sorted(items)
    shown = [item[:_MAX_REASON_ITEM_CHARS] for item in ordered[:_MAX_REASON_ITEMS]]
    more = len(ordered) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


class Scorer:
    """Scores normalised paths against one request and one set of active paths.

    ``scoring`` gives the hot path, run once per inventoried path; ``explain`` builds the
    human-readable reason and runs only for selected files.
    """

    def __init__(self, request: RequestTerms, active: Sequence[str]) -> None:
        self._terms = request.terms
        # Every raw token whose stem is a term, mapped to that term: terms are fixed points of
        # the stemmer, so a raw token matches term t exactly when it is t or a plural t + "s".
        self._variants = {term: term for term in request.terms} | {
            term + "s": term for term in request.terms if len(term) >= 4 and term[-1] not in "siu"
        }
        self._hints = tuple(("/" + hint, hint) for hint in request.hints)
        self._active = frozenset(active)
        self._active_ancestors = frozenset(
            path[:index] for path in active for index, char in enumerate(path) if char == "/"
        )
        self._tokens: dict[str, frozenset[str]] = {}

    def _near_active(self, path: str) -> bool:
        if path in self._active_ancestors:
            return True
        index = path.find("/")
        while index > 0:
            if path[:index] in self._active:
                return True
            index = path.find("/", index + 1)
        return False

    def _matches(self, text: str) -> frozenset[str]:
        """Return the request terms among the tokens of ``text`` (memoised per text)."""
        found = self._tokens.get(text)
        if found is None:
            found = self._tokens[text] = self._terms.intersection(tokenize(text))
        return found

    def scoring(self) -> Callable[[str, bool], int]:
        """Return the deterministic relevance score of a normalised path as a plain function of
        (path, instruction), for the hot loop.

        Everything it needs is bound as a local of the closure: this runs once per inventoried
        path, up to 100,000 times per grounding.
        """
        active, near, hints, has_terms = (
            self._active,
            self._near_active,
            self._hints,
            bool(self._terms),
        )
        variants, matches, memo = self._variants, self._matches, self._tokens
        keys, camel, findall = self._variants.keys(), _CAMEL.sub, _TOKEN.findall

        def score(path: str, instruction: bool) -> int:
            value = PINNED_SCORE if instruction else 0
            if active:
                if path in active:
                    value = PINNED_SCORE + ACTIVE_SCORE
                elif near(path):
                    value += NEAR_ACTIVE_SCORE
            for suffix, hint in hints:
                if path.endswith(suffix) or path == hint:
                    value += HINT_SCORE
            directory, _, name = path.rpartition("/")
            if has_terms:
                hits = keys & findall(name.lower() if name.islower() else camel(" ", name).lower())
                in_path = memo.get(directory) if directory else None
                if in_path is None and directory:
                    in_path = matches(directory)
                if hits:
                    in_name = {variants[hit] for hit in hits}
                    value += BASENAME_TERM_SCORE * len(in_name)
                    if in_path:
                        value += PATH_TERM_SCORE * len(in_path - in_name)
                elif in_path:
                    value += PATH_TERM_SCORE * len(in_path)
            if not directory and _is_metadata(name):
                value += METADATA_SCORE
            return value

        return score

    def explain(self, path: str, *, instruction: bool) -> str:
        """Return why ``path`` scored as it did, as one sentence of clauses."""
        reasons: list[str] = []
        if instruction:
            reasons.append("agent instruction file, always included")
        if path in self._active:
            reasons.append("named as an active path")
        elif self._active and self._near_active(path):
            reasons.append("next to an active path")
        hints = [hint for suffix, hint in self._hints if path.endswith(suffix) or path == hint]
        if hints:
            reasons.append(f"a path the request names: {_listing(hints)}")
        directory, _, name = path.rpartition("/")
        in_name = self._terms.intersection(tokenize(name))
        if in_name:
            reasons.append(f"request terms in the name: {_listing(in_name)}")
        in_path = self._matches(directory) - in_name if directory else frozenset()
        if in_path:
            reasons.append(f"request terms in the path: {_listing(in_path)}")
        if not directory and _is_metadata(name):
            reasons.append("root project metadata")
        if not reasons:
            reasons.append("no path relevance; kept as low-relevance fallback context")
        reason = "; ".join(reasons)
        return reason[:1].upper() + reason[1:]


def _is_metadata(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in _METADATA
        or lowered.startswith("readme")
        or (lowered.startswith("tsconfig") and lowered.endswith(".json"))
    )
