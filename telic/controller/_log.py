"""An append-only log shared by run states, each of which sees its own prefix of it.

A ``RunState`` is a snapshot, and the next state is the same run with one or two artifacts more.
Copying the run's artifacts (and the indexes over them) into every new state would make each step
cost O(n) in the run's length; instead consecutive states share one ``_Store`` — the items, an
index from key to position and, per group, the positions and items of that group — and a
``Log`` is a view of the store's first ``length`` items. Appending to the newest view extends the
store in place and returns a longer view; every older view still sees exactly its own prefix,
because it ignores positions at or past its length.

Two different appends to the same view (a step abandoned after a version conflict, then another
step from the same parent) diverge: the second finds the store already longer than its view, and
copies its own prefix into a fresh store first, so neither branch ever sees the other's items.
Appending the very items that already follow the view (``step`` extending the same parent with
the same artifact twice) shares the store instead.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

T = TypeVar("T")

Keys = Callable[[T], Iterable[Hashable]]
"""The keys an item is found by (unique within one log)."""
Group = Callable[[T], str]
"""The group an item belongs to (an artifact's type)."""


def _no_keys(item: object) -> tuple[()]:
    return ()


class _Store(Generic[T]):
    """The shared, append-only part: items in order, their keys and their groups."""

    __slots__ = ("group", "groups", "index", "items", "keys")

    def __init__(self, keys: Keys[T], group: Group[T] | None) -> None:
        self.keys = keys
        self.group = group
        self.items: list[T] = []
        self.index: dict[Hashable, int] = {}
        self.groups: dict[str, tuple[list[int], list[T]]] = {}

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            position = len(self.items)
            self.items.append(item)
            for key in self.keys(item):
                self.index[key] = position
            if self.group is not None:
                positions, members = self.groups.setdefault(self.group(item), ([], []))
                positions.append(position)
                members.append(item)


class Log(Sequence[T]):
    """The first ``len(self)`` items of a shared store: an immutable sequence, cheap to extend."""

    __slots__ = ("_length", "_store")

    def __init__(self, store: _Store[T], length: int) -> None:
        self._store = store
        self._length = length

    @classmethod
    def of(
        cls, items: Iterable[T], keys: Keys[T] | None = None, group: Group[T] | None = None
    ) -> Log[T]:
        """Return a log of ``items`` in a store of its own (found by no key when ``keys`` is
        None)."""
        store: _Store[T] = _Store(_no_keys if keys is None else keys, group)
        store.extend(items)
        return cls(store, len(store.items))

    def appended(self, items: Sequence[T]) -> Log[T]:
        """Return this log with ``items`` after it; this log itself is unchanged."""
        if not items:
            return self
        store, length = self._store, self._length
        if len(store.items) != length:
            following = store.items[length : length + len(items)]
            if len(following) == len(items) and all(
                a is b for a, b in zip(following, items, strict=True)
            ):
                return Log(store, length + len(items))  # the same append, made before
            store = _Store(store.keys, store.group)  # diverging: copy this log's prefix
            store.extend(itertools.islice(self._store.items, length))
        store.extend(items)
        return Log(store, length + len(items))

    # ------------------------------------------------------------------ lookups

    def position(self, key: Hashable) -> int | None:
        """Return the position of the item found by ``key``, or None."""
        position = self._store.index.get(key)
        return position if position is not None and position < self._length else None

    def find(self, key: Hashable) -> T | None:
        """Return the item found by ``key``, or None."""
        position = self.position(key)
        return None if position is None else self._store.items[position]

    def _span(self, group: str, after: int) -> tuple[list[T], int, int]:
        found = self._store.groups.get(group)
        if found is None:
            return [], 0, 0
        positions, members = found
        start = 0 if after < 0 else bisect.bisect_right(positions, after)
        return members, start, bisect.bisect_left(positions, self._length)

    def members(self, group: str, after: int = -1) -> tuple[T, ...]:
        """Return the items of ``group`` in order, only those after position ``after``."""
        members, start, stop = self._span(group, after)
        return tuple(members[start:stop])

    def last(self, group: str, count: int = 1) -> tuple[T, ...]:
        """Return the last ``count`` items of ``group``, in order."""
        members, start, stop = self._span(group, -1)
        return tuple(members[max(start, stop - count) : stop]) if count > 0 else ()

    # ------------------------------------------------------------------ Sequence

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            start, stop, stride = index.indices(self._length)
            return tuple(self._store.items[start:stop:stride])
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("log index out of range")
        return self._store.items[index]

    def __iter__(self) -> Iterator[T]:
        return itertools.islice(self._store.items, self._length)

    def __reversed__(self) -> Iterator[T]:
        items = self._store.items
        return (items[i] for i in range(self._length - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Log({list(self)!r})"
