"""body_json decodes to one object, and a key given twice anywhere in it is refused."""

from __future__ import annotations

import pytest

from telic._errors import SchemaViolation
from telic.server._json import decode_body_json


def test_an_object_without_repeated_keys_decodes() -> None:
    text = '{"a": {"b": 1, "c": [{"b": 2}, {"b": 3}]}, "b": null}'
    assert decode_body_json(text) == {"a": {"b": 1, "c": [{"b": 2}, {"b": 3}]}, "b": None}


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "frame-1", "id": "frame-2"}',
        '{"outer": {"k": 1, "k": 1}}',
        '{"list": [{"x": 1}, {"x": 2, "x": 3}]}',
        '{"\\u0069d": 1, "id": 2}',
    ],
)
def test_a_key_repeated_in_any_object_is_refused_by_name(text: str) -> None:
    with pytest.raises(SchemaViolation) as refused:
        decode_body_json(text)
    assert [(i.path, i.code) for i in refused.value.issues] == [("body_json", "duplicate_key")]
    assert "without duplicate keys" in refused.value.message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must encode a JSON object"),
        ("[" * 100_000, "not valid JSON"),
    ],
)
def test_anything_but_one_object_is_refused(text: str, says: str) -> None:
    with pytest.raises(SchemaViolation, match=says):
        decode_body_json(text)
