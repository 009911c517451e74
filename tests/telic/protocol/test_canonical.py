"""Canonical JSON must hash exactly as the original's JSON.stringify-based canonical form."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
from hypothesis import given, strategies as st

from telic.protocol._canonical import (
    CanonicalJsonError,
    canonical_json,
    canonical_sha256,
    parse_json_strict,
    sha256_hex_digest,
)


def test_keys_are_sorted_recursively_and_output_is_compact() -> None:
    value = {"b": [{"z": 1, "a": 2}], "a": {"d": None, "c": True}}
    assert canonical_json(value) == b'{"a":{"c":true,"d":null},"b":[{"a":2,"z":1}]}'


def test_non_ascii_is_written_as_utf8_not_escaped() -> None:
    assert canonical_json({"k": "é€😀"}) == '{"k":"é€😀"}'.encode()


def test_control_characters_are_escaped_as_json_stringify_does() -> None:
    assert canonical_json('\n\t\b\f\r\x01"\\') == b'"\\n\\t\\b\\f\\r\\u0001\\"\\\\"'


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (85.35, "85.35"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-6, "0.0000015"),
        (5e-324, "5e-324"),
        (2**60, "1152921504606847000"),
        (2**53 + 1, "9007199254740992"),
    ],
)
def test_numbers_are_formatted_as_ecmascript_does(number: float, text: str) -> None:
    assert canonical_json(number) == text.encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_rejected(bad: float) -> None:
    with pytest.raises(CanonicalJsonError, match="NaN and Infinity"):
        canonical_json({"x": bad})


@pytest.mark.parametrize("bad", [b"bytes", {1: "int key"}, object(), {"s": {1, 2}}])
def test_values_that_are_not_json_are_rejected(bad: object) -> None:
    with pytest.raises(CanonicalJsonError):
        canonical_json(bad)


def test_a_cycle_is_rejected() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(CanonicalJsonError, match="cycle"):
        canonical_json(cyclic)


def test_a_lone_surrogate_is_rejected() -> None:
    with pytest.raises(CanonicalJsonError, match="surrogate"):
        canonical_json("\ud800")


def test_keys_sort_by_utf16_code_units_like_javascript() -> None:
    # U+FF61 sorts after U+1F600 in code points, but before it in UTF-16 code units.
    assert canonical_json({"\U0001f600": 1, "\uff61": 2}) == '{"😀":1,"｡":2}'.encode()


def test_digest_is_sha256_of_the_canonical_bytes() -> None:
    value = {"b": 1, "a": "x"}
    expected = "sha256:" + hashlib.sha256(b'{"a":"x","b":1}').hexdigest()
    assert canonical_sha256(value) == expected == sha256_hex_digest(b'{"a":"x","b":1}')


def test_strict_parse_rejects_duplicate_keys_and_constants() -> None:
    with pytest.raises(CanonicalJsonError, match="duplicate"):
        parse_json_strict('{"a":1,"a":2}')
    with pytest.raises(CanonicalJsonError, match="NaN"):
        parse_json_strict('{"a":NaN}')


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_canonical_json_round_trips_and_is_a_fixed_point(value: object) -> None:
    encoded = canonical_json(value)
    assert canonical_json(parse_json_strict(encoded)) == encoded


_JSON_KEYS = st.text(max_size=6)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(_JSON_KEYS, children, max_size=4)
    ),
    max_leaves=24,
)


@given(_JSON)
def test_the_fast_path_writes_exactly_what_the_writer_writes(value: Any) -> None:
    from telic.protocol._canonical import _written

    try:
        expected = _written(value)
    except CanonicalJsonError:
        with pytest.raises(CanonicalJsonError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


def test_the_fast_path_leaves_depth_cycles_and_odd_types_to_the_writer() -> None:
    deep: list[Any] = []
    cursor = deep
    for _ in range(300):
        cursor.append([])
        cursor = cursor[0]
    with pytest.raises(CanonicalJsonError, match="deeper"):
        canonical_json(deep)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(CanonicalJsonError, match="cycle"):
        canonical_json(loop)
    with pytest.raises(CanonicalJsonError):
        canonical_json({1: "a"})
    with pytest.raises(CanonicalJsonError):
        canonical_json({"k": "\ud800"})
    expected = '{"\U0001f600":1,"\ue000":2}'.encode()  # UTF-16 order, not code points
    assert canonical_json({"\ue000": 2, "\U0001f600": 1}) == expected


@pytest.mark.parametrize("number", [0.5, 0.25, 0.9, -0.125, 123.456, 0.0001, 4503599627370495.5])
def test_a_float_whose_repr_is_its_ecmascript_form_takes_the_fast_path(
    number: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from telic.protocol import _canonical

    def no_writer(value: object) -> bytes:
        raise AssertionError("the writer was asked")

    monkeypatch.setattr(_canonical, "_written", no_writer)
    assert canonical_json({"confidence": number, "n": [1, number]}) == (
        f'{{"confidence":{number!r},"n":[1,{number!r}]}}'.encode()
    )


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e-05, "0.00001"),
        (1e-07, "1e-7"),
        (1e21, "1e+21"),
        (2.0**60, "1152921504606847000"),
    ],
)
def test_a_float_repr_would_lay_out_differently_is_left_to_the_writer(
    number: float, text: str
) -> None:
    from telic_packets import plain_canonical_json

    assert plain_canonical_json([number], floats=True) is None
    assert canonical_json([number]) == f"[{text}]".encode()


def test_a_whole_float_is_written_as_its_integer_without_the_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from telic.protocol import _canonical

    def no_writer(value: object) -> bytes:
        raise AssertionError("the writer was asked")

    monkeypatch.setattr(_canonical, "_written", no_writer)
    body = {"score": 1.0, "zero": -0.0, "big": 9007199254740991.0, "nested": [[2.0, 0.5]]}
    expected = b'{"big":9007199254740991,"nested":[[2,0.5]],"score":1,"zero":0}'
    assert canonical_json(body) == expected
    assert type(body["score"]) is float  # the value itself is kept
