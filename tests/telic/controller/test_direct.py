"""Evidence-bearing fields are found wherever a wire body nests them, with their paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, strategies as st

from telic.controller._direct import evidence_fields

_KEYS = ("evidenceRefs", "directEvidenceRefs", "verificationRefs")


def _walk(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """The plain walk: every key and index, scalars included."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in _KEYS and isinstance(item, list):
                for index, uri in enumerate(item):
                    if isinstance(uri, str):
                        yield f"{where}.{index}", uri
            else:
                yield from _walk(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}.{index}" if path else str(index))


_BODIES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(("a", "b", *_KEYS)), children, max_size=4)
    ),
    max_leaves=16,
)


def test_a_nested_evidence_list_is_found_with_its_path() -> None:
    body = {"criteria": [{"id": "c1", "evidenceRefs": ["artifact://r/e1", 3]}], "note": "x"}
    assert list(evidence_fields(body)) == [("criteria.0.evidenceRefs.0", "artifact://r/e1")]


@given(_BODIES)
def test_the_walk_finds_what_a_walk_of_every_value_finds(body: Any) -> None:
    assert list(evidence_fields(body)) == list(_walk(body))
