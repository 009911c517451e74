"""The selection loop over ranked candidates (docs/protocol.md §4 item 10), free of I/O.

The loop asks an injected ``reader`` for the bytes of a candidate; the reader does the
filesystem checks (containment, regular file, excluded roots, ``O_NOFOLLOW``, size) and returns
either the raw bytes or an exclusion reason. Everything that judges content — binary detection,
strict UTF-8, the secret scan, duplicates and the byte budget — happens here, and so does the
scan of each candidate's path (a path holding a token counts as ``secret_like_file`` and is
never read). Excluded files are only counted, by reason: their paths and contents never reach
the manifest, its documents, the trace or an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from telic._secrets import contains_secret
from telic.grounding._budget import GroundingBudget
from telic.grounding._plan import ZERO_RELEVANCE_CAP, Plan
from telic.grounding._rank import Ranked
from telic.protocol import sha256_hex_digest

BINARY_SAMPLE_BYTES: Final = 8_192
"""How much of a file binary detection looks at."""
ZERO_RELEVANCE_WARNING: Final = (
    f"Unpinned zero-relevance context was capped at {ZERO_RELEVANCE_CAP} files"
)

# Control bytes other than TAB, LF, VT, FF and CR; DEL counts as one too.
_CONTROL_BYTES: Final = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])
_PROGRESS_EVERY: Final = 64

Explain = Callable[[Ranked], str]
"""Returns the human-readable reason a candidate ranked where it did."""


@dataclass(frozen=True, slots=True)
class Selected:
    """A file chosen as context, with its exact text."""

    ranked: Ranked
    reason: str
    content_hash: str
    size: int
    text: str


@dataclass(slots=True)
class Selection:
    """What the loop chose, what it counted out, and every file it read."""

    selected: list[Selected] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    read_hashes: dict[str, str] = field(default_factory=dict)
    """Path → ``sha256:`` of the raw bytes, for every file read in full."""
    considered: int = 0
    selected_bytes: int = 0
    warnings: list[str] = field(default_factory=list)


def is_binary(sample: bytes) -> bool:
    """Return whether a file's first bytes look binary: a NUL, or over 10 % control bytes."""
    if b"\0" in sample:
        return True
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return controls * 10 > len(sample)


def _judge(
    selection: Selection,
    ranked: Ranked,
    outcome: bytes | str,
    seen: set[str],
    max_total: int,
    explain: Explain,
) -> str:
    """Return the exclusion reason of a read candidate, or "" once it is selected."""
    if isinstance(outcome, str):
        return outcome
    digest = sha256_hex_digest(outcome)
    selection.read_hashes[ranked.path] = digest
    if is_binary(outcome[:BINARY_SAMPLE_BYTES]):
        return "binary_file"
    try:
        text = outcome.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    if contains_secret(text):
        return "secret_content"
    if digest in seen:
        return "duplicate_content"
    if selection.selected_bytes + len(outcome) > max_total:
        return "total_bytes_budget"
    seen.add(digest)
    selection.selected_bytes += len(outcome)
    selection.selected.append(Selected(ranked, explain(ranked), digest, len(outcome), text))
    return ""


def select(
    plan: Plan,
    budget: GroundingBudget,
    reader: Callable[[str], bytes | str],
    *,
    explain: Explain,
    tick: Callable[[Selection], None] | None = None,
) -> Selection:
    """Run the selection loop over a plan, reading candidates through ``reader``.

    ``reader`` returns a candidate's raw bytes, or the exclusion reason that stopped the read.
    ``explain`` gives the reason of each selected candidate. ``tick`` is called every few
    candidates and once at the end, so the caller can report progress or check cancellation.
    """
    selection = Selection(counts=Counter(plan.counts))
    seen: set[str] = set()
    fallback = min(len(plan.zeros), ZERO_RELEVANCE_CAP)
    candidates = len(plan.scored) + fallback
    for ranked in plan.ranked():
        if len(selection.selected) >= budget.max_files:
            # Every candidate left is over the file-count budget; count them at once.
            left = candidates - selection.considered
            selection.counts["file_count_budget"] += left
            selection.considered += left
            break
        selection.considered += 1
        # A path that holds a secret (a token as a file name) would reach the manifest.
        outcome = "secret_like_file" if contains_secret(ranked.path) else reader(ranked.path)
        reason = _judge(selection, ranked, outcome, seen, budget.max_total_bytes, explain)
        if reason:
            selection.counts[reason] += 1
        if tick is not None and selection.considered % _PROGRESS_EVERY == 0:
            tick(selection)
    surplus = len(plan.zeros) - fallback
    if surplus > 0:
        selection.considered += surplus
        selection.counts["low_relevance"] += surplus
        selection.warnings.append(ZERO_RELEVANCE_WARNING)
    if tick is not None:
        tick(selection)
    return selection
