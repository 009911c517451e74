"""The schemas' small helpers: uniqueness, and rounding as ECMAScript's Math.round does."""

from __future__ import annotations

import telic.protocol
from telic.protocol._review import js_round2
from telic.protocol._types import unique


def test_unique_tells_distinct_values_from_repeated_ones() -> None:
    assert unique(["a", "b", "c"])
    assert unique([])
    assert not unique(["a", "b", "a"])


def test_js_round2_rounds_halves_toward_positive_infinity() -> None:
    assert js_round2(0.125) == 0.13
    assert js_round2(-0.125) == -0.12
    assert js_round2(0.124) == 0.12
    assert js_round2(7.77) == 7.77


def test_js_round2_is_not_floor_of_x_plus_a_half() -> None:
    # value * 100 is 0.49999999999999994, and that + 0.5 rounds to 1.0; Math.round gives 0.
    value = 0.49999999999999994 / 100
    assert value * 100 == 0.49999999999999994
    assert js_round2(value) == 0.0


def test_the_protocol_facade_exports_neither_helper() -> None:
    assert "unique" not in telic.protocol.__all__
    assert "js_round2" not in telic.protocol.__all__
