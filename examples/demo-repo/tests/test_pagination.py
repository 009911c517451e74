"""Tests of the pagination helper (standard library only)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pagination import page_count, paginate


class PaginateTest(unittest.TestCase):
    def test_first_page_starts_at_the_first_item(self) -> None:
        self.assertEqual(paginate(list(range(10)), 1, 3), [0, 1, 2])

    def test_last_page_may_be_short(self) -> None:
        self.assertEqual(paginate(list(range(10)), 4, 3), [9])

    def test_page_count_rounds_up(self) -> None:
        self.assertEqual(page_count(10, 3), 4)

    def test_pages_are_one_based(self) -> None:
        with self.assertRaises(ValueError):
            paginate([1, 2, 3], 0, 2)


if __name__ == "__main__":
    unittest.main()
