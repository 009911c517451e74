"""Split a list into 1-based pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, per_page: int) -> int:
    """Return how many pages ``total`` items fill, ``per_page`` at a time."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    return (total + per_page - 1) // per_page


def paginate(items: Sequence[T], page: int, per_page: int) -> list[T]:
    """Return the items on 1-based ``page``, ``per_page`` at a time."""
    if page < 1:
        raise ValueError("pages are 1-based")
    start = page * per_page
    return list(items[start : start + per_page])
