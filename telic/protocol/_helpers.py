"""Small pure helpers the schemas use; they are not part of the protocol and not exported.

``unique`` backs every "ids must be unique" validator; ``js_round2`` is the ECMAScript rounding
the PromptReview score is defined by (``weighted_score`` in ``_review`` is the protocol's part).
"""

from __future__ import annotations

import math

__all__ = ["js_round2", "unique"]


def unique(values: list[str]) -> bool:
    """Return whether ``values`` holds no duplicates."""
    return len(set(values)) == len(values)


def js_round2(value: float) -> float:
    """Round to two decimals as ECMAScript's ``Math.round(value * 100) / 100`` does.

    ``Math.round`` rounds halves toward +∞. It is not ``floor(x + 0.5)``, which errs when adding
    0.5 itself rounds (for 0.49999999999999994, say); ``x - floor(x)`` is always exact.
    """
    scaled = value * 100
    whole = math.floor(scaled)
    if scaled - whole >= 0.5:
        whole += 1
    return whole / 100
