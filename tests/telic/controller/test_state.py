"""The run state's helpers: where a body's references are found."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, strategies as st

from telic.controller._state import body_refs
from telic.protocol._types import REFERENCE_URI_PATTERN

URI = "artifact://run-1/frame-1"


def _spec(value: object, path: str = "") -> Iterator[tuple[str, str, str]]:
    """The definition, walked naively: every field, at every depth."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "ref" or key.endswith(("Ref", "Refs")) or key == "evidenceInspected":
                for index, uri in enumerate(item if isinstance(item, list) else [item]):
                    if isinstance(uri, str) and re.match(REFERENCE_URI_PATTERN, uri):
                        yield (f"{where}.{index}" if isinstance(item, list) else where), key, uri
            else:
                yield from _spec(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _spec(item, f"{path}.{index}" if path else str(index))


_keys = st.sampled_from(
    ["ref", "frameRef", "sourceRefs", "evidenceInspected", "refs", "Ref", "goal", "items", "x"]
)
_leaves = st.one_of(
    st.sampled_from([URI, "repo://src/a.py", "artifact://", "not a uri", "Ref"]),
    st.integers(),
    st.booleans(),
    st.none(),
)
_bodies = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=30,
)


@given(body=_bodies)
def test_references_are_found_exactly_where_the_definition_finds_them(body: Any) -> None:
    assert body_refs(body) == tuple(_spec(body))


def test_references_carry_their_path_field_and_uri_in_document_order() -> None:
    body = {
        "goal": "x",
        "frameRef": URI,
        "nodes": [{"id": "n", "evidenceRefs": ["bad", URI]}, {"ref": "repo://src/a.py"}],
        "workPlanRef": {"nested": URI},  # a reference field holding no URI is not walked
    }
    assert body_refs(body) == (
        ("frameRef", "frameRef", URI),
        ("nodes.0.evidenceRefs.1", "evidenceRefs", URI),
        ("nodes.1.ref", "ref", "repo://src/a.py"),
    )
