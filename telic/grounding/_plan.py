"""From raw inventory paths to a ranked candidate list (docs/protocol.md §4 items 5–9), purely.

``plan_candidates`` normalises the inventory, drops paths under excluded roots, adds the pinned
instruction files and the existing active paths (inside git only active paths git lists:
tracked, or untracked and not ignored), puts instruction and active paths first and
the rest in path order, truncates to the inventory budget, applies the static exclusions and
ranks the survivors. Exclusions are only counted; no excluded path is kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from telic.grounding._batch import PathCollector, filter_excluded, instruction_paths
from telic.grounding._rank import Ranked, Scorer

ZERO_RELEVANCE_CAP: Final = 8
"""Most unpinned zero-score candidates the selection loop considers."""


@dataclass(slots=True)
class Plan:
    """Ranked candidates and what was counted out on the way."""

    scored: list[tuple[int, str]]
    """``(-score, path)`` of candidates with a positive score, in ranking order."""
    zeros: list[str]
    """Unpinned candidates without relevance, in path order."""
    inventory: list[str]
    """Every valid path kept after truncation, excluded or not, in candidate order."""
    candidate_files: int
    """Distinct files discovered before truncation."""
    truncated: int
    """Files dropped by the inventory budget."""
    counts: Counter[str] = field(default_factory=Counter)
    """Exclusion reason → how many candidates it excluded so far."""
    instructions: frozenset[str] = frozenset()
    """Instruction paths among the candidates."""
    active: frozenset[str] = frozenset()
    """Exact active paths."""

    def ranked(self) -> Iterator[Ranked]:
        """Yield the scored candidates in ranking order, then the zero-relevance fallback."""
        for negative, path in self.scored:
            instruction = path in self.instructions
            yield Ranked(path, -negative, instruction or path in self.active, instruction)
        for path in self.zeros[:ZERO_RELEVANCE_CAP]:
            yield Ranked(path, 0, False, False)


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(not prefix or path == prefix or path.startswith(prefix + "/") for prefix in prefixes)


def plan_candidates(
    listed: PathCollector,
    *,
    added: Sequence[str],
    active: Sequence[str],
    excluded_prefixes: Sequence[str],
    max_inventory_files: int,
    scorer: Scorer,
    listed_only: Sequence[str] = (),
) -> Plan:
    """Return the ranked candidates of an inventory.

    Args:
        listed: the normalised inventory, possibly with repeats.
        added: normalised pinned instruction files and active paths known to exist.
        active: every normalised active path, existing or not.
        excluded_prefixes: excluded roots inside the repository, as normalised paths.
        max_inventory_files: how many candidates are kept after ordering.
        scorer: the ranking of this request.
        listed_only: those of ``added`` that are candidates only when the inventory lists them
            (active paths, when git listed it: one it did not list is ignored by the
            repository or belongs to a nested one); the others are counted as
            ``excluded_directory`` and never read.
    """
    counts: Counter[str] = Counter()
    if listed.invalid:
        counts["invalid_path"] = listed.invalid
    unique = list(dict.fromkeys([*listed.valid, *added]))
    candidate_files = listed.invalid + len(unique)
    if listed_only:
        unlisted = set(listed_only)
        unlisted.difference_update(listed.valid)
        if unlisted:
            counts["excluded_directory"] += len(unlisted)
            unique = [path for path in unique if path not in unlisted]
            added = [path for path in added if path not in unlisted]
    if excluded_prefixes:
        kept = [path for path in unique if not _under(path, excluded_prefixes)]
        if len(kept) < len(unique):
            counts["excluded_directory"] += len(unique) - len(kept)
        unique = kept
    instructions = frozenset([*listed.instructions, *instruction_paths(list(added))])
    if excluded_prefixes:
        instructions = instructions.intersection(unique)
    active_set = frozenset(active)
    first = sorted(instructions.union(active_set.intersection(unique)))
    if first:
        chosen = frozenset(first)
        rest = [path for path in unique if path not in chosen]
    else:
        rest = unique
    rest.sort()
    ordered = first + rest
    del first, rest, unique
    truncated = max(0, len(ordered) - max_inventory_files)
    if truncated:
        counts["inventory_budget"] = truncated
        del ordered[max_inventory_files:]
    scored: list[tuple[int, str]] = []
    zeros: list[str] = []
    score = scorer.scoring()
    for path in filter_excluded(ordered, counts):
        value = score(path, path in instructions)
        if value:
            scored.append((-value, path))
        else:
            zeros.append(path)
    scored.sort()
    return Plan(
        scored, zeros, ordered, candidate_files, truncated, counts, instructions, active_set
    )
