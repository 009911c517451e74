"""A host that follows drafts and knows nothing of the protocol's rules.

It takes a draft as the wire carries it (``{type, body, fill, sourceRefs?, before?, instead?}``),
writes a fixed placeholder at every ``fill`` path chosen only by the JSON type of the value
found there, and for a fill entry offering ``choices`` takes the one ``choose`` picks, applying
that choice's ``set`` and filling its own ``fill`` paths. Shared by the controller's property
test and the MCP draft-host test, so both exercise exactly the same host.

Placeholders by type: an empty string becomes ``"placeholder"``; a non-empty string, a number
and a boolean keep the draft's value (the draft shows a legal value of the field's format, e.g.
a ``sha256:`` digest or a path inside the granted scope, which the model would replace with its
own); an array or object keeps its shape with its empty strings filled. Asked to ``grow`` a fill
path that offers an ``item``, it appends one entry made from it: ``""`` becomes the placeholder
and an ``a|b`` enum text its first value, as the draft's ``item`` convention says.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["PLACEHOLDER", "Choose", "first", "follow", "from_item", "pointer_get", "pointer_set"]

PLACEHOLDER = "placeholder"

Choose = Callable[[str, Sequence[Mapping[str, Any]]], int]
"""Picks a choice: (the fill path, the offered choices) → an index into them."""


def first(_path: str, _choices: Sequence[Mapping[str, Any]]) -> int:
    """Always the first (the draft's default) choice."""
    return 0


def _parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def pointer_get(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer."""
    for part in _parts(pointer):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def pointer_set(document: Any, pointer: str, value: Any) -> None:
    """Replace the value at an RFC 6901 pointer."""
    *head, last = _parts(pointer)
    for part in head:
        document = document[int(part)] if isinstance(document, list) else document[part]
    if isinstance(document, list):
        document[int(last)] = value
    else:
        document[last] = value


def _placeholder(value: Any) -> Any:
    if value == "":
        return PLACEHOLDER
    if isinstance(value, list):
        return [_placeholder(v) for v in value]
    if isinstance(value, dict):
        return {k: _placeholder(v) for k, v in value.items()}
    return value


def from_item(item: Any) -> Any:
    """The entry a host writes from a fill line's ``item``: text filled, each enum's first."""
    if isinstance(item, str):
        return PLACEHOLDER if item == "" else item.split("|", 1)[0]
    if isinstance(item, list):
        return [from_item(v) for v in item]
    if isinstance(item, dict):
        return {k: from_item(v) for k, v in item.items()}
    return item


def _fill(
    body: Any, entries: Sequence[Mapping[str, Any]], choose: Choose, grow: frozenset[str]
) -> None:
    for line in entries:
        if line["path"] in grow and "item" in line:
            pointer_get(body, line["path"]).append(from_item(line["item"]))
    for entry in entries:
        choices = entry.get("choices") or ()
        if choices:
            choice = choices[choose(entry["path"], choices)]
            pointer_set(body, entry["path"], choice["value"])
            for pointer, value in (choice.get("set") or {}).items():
                pointer_set(body, pointer, copy.deepcopy(value))
            _fill(body, choice.get("fill") or (), choose, grow)
        else:
            pointer_set(body, entry["path"], _placeholder(pointer_get(body, entry["path"])))


def follow(
    draft: Mapping[str, Any], choose: Choose = first, grow: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Return the body to submit for ``draft``: its body with every fill path written, and one
    entry appended from ``item`` to each array whose fill path is in ``grow``."""
    body = copy.deepcopy(dict(draft["body"]))
    _fill(body, draft["fill"], choose, grow)
    return body
