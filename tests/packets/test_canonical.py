"""Canonical JSON: sorted keys, compact, UTF-8, integers only."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, strategies as st

from telic_packets import CanonicalJsonError, canonical_json, canonical_sha256, sha256_text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            {"b": 1, "a": {"d": [3, 2, 1], "c": None}},
            b'{"a":{"c":null,"d":[3,2,1]},"b":1}',
            marks=pytest.mark.covers("hashing.key-order", "hashing.key-order-is-irrelevant"),
            id="nested-keys-sorted",
        ),
        pytest.param(
            {"claim": "délai ≤ 5 s ✓"},
            '{"claim":"délai ≤ 5 s ✓"}'.encode(),
            marks=pytest.mark.covers("hashing.unicode"),
            id="unicode-raw-utf8",
        ),
        pytest.param(
            {"s": 'q " b \\ n \n t \t bell \u0007 del \u007f'},
            b'{"s":"q \\" b \\\\ n \\n t \\t bell \\u0007 del \x7f"}',
            marks=pytest.mark.covers("hashing.escapes"),
            id="short-escapes",
        ),
        pytest.param(
            {"\ue000": 1, "😀": 2, "z": 3},
            '{"z":3,"😀":2,"\ue000":1}'.encode(),
            marks=pytest.mark.covers("hashing.utf16-key-order"),
            id="utf16-order",
        ),
        pytest.param(
            [0, -1, 42, 2**53 - 1, -(2**53 - 1)],
            b"[0,-1,42,9007199254740991,-9007199254740991]",
            marks=pytest.mark.covers("hashing.integers"),
            id="integers",
        ),
        pytest.param(
            {"v": True, "w": False},
            b'{"v":true,"w":false}',
            marks=pytest.mark.covers("hashing.boolean-is-not-a-number"),
            id="booleans",
        ),
        pytest.param(
            {"o": {}, "a": [], "s": ""},
            b'{"a":[],"o":{},"s":""}',
            marks=pytest.mark.covers("hashing.empty-containers"),
            id="empty",
        ),
        pytest.param(("x", 1), b'["x",1]', id="tuple-as-array"),
    ],
)
def test_canonical_json_writes_the_exact_bytes(value: object, expected: bytes) -> None:
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"ms": 1.5}, marks=pytest.mark.covers("hashing.fraction-rejected"), id="1.5"),
        pytest.param(
            {"ms": 1.0}, marks=pytest.mark.covers("hashing.whole-float-rejected"), id="1.0"
        ),
        pytest.param(
            [1, -0.5], marks=pytest.mark.covers("hashing.negative-fraction-rejected"), id="-0.5"
        ),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(
            2**53, marks=pytest.mark.covers("hashing.unsafe-integer-rejected"), id="2**53"
        ),
        pytest.param(-(2**53), id="-2**53"),
        pytest.param({1: "x"}, id="non-string-key"),
        pytest.param(b"bytes", id="bytes"),
        pytest.param({"s": "\ud800"}, id="lone-surrogate"),
        pytest.param({"\ud800": 1}, id="lone-surrogate-key"),
        pytest.param(object(), id="object"),
    ],
)
def test_values_that_cannot_hash_identically_everywhere_are_rejected(value: object) -> None:
    with pytest.raises(CanonicalJsonError):
        canonical_json(value)


def test_a_cycle_is_rejected() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(CanonicalJsonError, match="cycle"):
        canonical_json(looped)


def test_a_shared_but_acyclic_value_is_written_twice() -> None:
    shared = {"k": 1}
    assert canonical_json([shared, shared]) == b'[{"k":1},{"k":1}]'


def test_nesting_deeper_than_the_limit_is_rejected() -> None:
    deep: object = 0
    for _ in range(100):
        deep = [deep]
    with pytest.raises(CanonicalJsonError, match="deeper"):
        canonical_json(deep)


def test_canonical_sha256_is_the_prefixed_hex_digest_of_the_bytes() -> None:
    value = {"b": [1, 2], "a": "x"}
    digest = hashlib.sha256(canonical_json(value)).hexdigest()
    assert canonical_sha256(value) == "sha256:" + digest


def test_sha256_text_hashes_the_utf8_bytes() -> None:
    assert sha256_text("✓") == "sha256:" + hashlib.sha256("✓".encode()).hexdigest()


def test_sha256_text_rejects_a_lone_surrogate() -> None:
    with pytest.raises(CanonicalJsonError):
        sha256_text("\udfff")


def test_canonical_json_errors_are_value_errors() -> None:
    assert issubclass(CanonicalJsonError, ValueError)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**54), max_value=2**54)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=24,
)


@given(_JSON)
def test_the_fast_path_writes_exactly_what_the_writer_writes(value: Any) -> None:
    from telic_packets._canonical import _written

    try:
        expected = _written(value)
    except CanonicalJsonError:
        with pytest.raises(CanonicalJsonError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected
