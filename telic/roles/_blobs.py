"""The blob stage: large bodies wait here, content-addressed, while a small message points at them.

Mailboxes take messages of at most 8 KiB of canonical JSON, so whoever sends an artifact body, a
grounding or a child's return first stages it here and sends its digest. The stage is in-process
and bounded (bytes and entries); entries are reference-counted because two senders may stage the
same content at once, and each sender releases what it staged when its ask is answered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from telic._errors import Issue, LimitExceeded, SchemaViolation, UsageError
from telic.protocol import CanonicalJsonError, canonical_json

__all__ = ["DEFAULT_STAGE_BYTES", "DEFAULT_STAGE_ENTRIES", "BlobStage", "StageStatistics"]

DEFAULT_STAGE_BYTES: Final = 256 * 1024 * 1024
"""Default bound on the bytes staged at once."""
DEFAULT_STAGE_ENTRIES: Final = 4096
"""Default bound on the entries staged at once."""


@dataclass(slots=True)
class _Entry:
    value: object
    size: int
    references: int


@dataclass(frozen=True, slots=True)
class StageStatistics:
    """What the stage holds now."""

    entries: int
    bytes: int
    max_entries: int
    max_bytes: int


class BlobStage:
    """A bounded, reference-counted, content-addressed store of staged values."""

    def __init__(
        self, *, max_bytes: int = DEFAULT_STAGE_BYTES, max_entries: int = DEFAULT_STAGE_ENTRIES
    ) -> None:
        self._entries: dict[str, _Entry] = {}
        self._bytes = 0
        self._max_bytes = max_bytes
        self._max_entries = max_entries

    def put_json(self, value: object) -> str:
        """Stage a JSON value under ``sha256:<hex of its canonical JSON>`` and return that key.

        Raises:
            SchemaViolation: the value is not JSON (NaN, infinity, a non-JSON type, a cycle).
            LimitExceeded: the stage is full.
        """
        try:
            data = canonical_json(value)
        except CanonicalJsonError as exc:
            message = f"the value is not JSON: {exc}"
            raise SchemaViolation(message, issues=(Issue("", "not_json", message),)) from None
        key = "sha256:" + hashlib.sha256(data).hexdigest()
        return self.put(key, value, size=len(data))

    def put(self, key: str, value: object, *, size: int) -> str:
        """Stage ``value`` under a content key the caller computed; return the key.

        Raises:
            LimitExceeded: the stage is full.
        """
        entry = self._entries.get(key)
        if entry is not None:
            entry.references += 1
            return key
        if len(self._entries) >= self._max_entries or self._bytes + size > self._max_bytes:
            raise LimitExceeded(
                f"the blob stage is full ({len(self._entries)} entries, {self._bytes} bytes); "
                "retry when in-flight calls have finished"
            )
        self._entries[key] = _Entry(value, size, 1)
        self._bytes += size
        return key

    def get(self, key: str) -> object:
        """Return the staged value of ``key``.

        Raises:
            UsageError: nothing is staged under ``key``.
        """
        entry = self._entries.get(key)
        if entry is None:
            raise UsageError(f"nothing is staged under {key[:80]!r}")
        return entry.value

    def release(self, key: str) -> None:
        """Drop one reference to ``key``; the value goes when the last one is dropped."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.references -= 1
        if entry.references <= 0:
            del self._entries[key]
            self._bytes -= entry.size

    @contextmanager
    def staged_json(self, value: object) -> Iterator[str]:
        """Stage ``value`` for the duration of a ``with`` block and yield its key."""
        key = self.put_json(value)
        try:
            yield key
        finally:
            self.release(key)

    @contextmanager
    def staged(self, key: str, value: object, *, size: int) -> Iterator[str]:
        """Stage ``value`` under ``key`` for the duration of a ``with`` block."""
        self.put(key, value, size=size)
        try:
            yield key
        finally:
            self.release(key)

    def statistics(self) -> StageStatistics:
        """Return how much the stage holds."""
        return StageStatistics(len(self._entries), self._bytes, self._max_entries, self._max_bytes)
