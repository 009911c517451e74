"""Canonical JSON of packet content and its ``sha256:`` digest.

The form is chosen so that a TypeScript or Julia implementation can reproduce it byte for byte:

- objects: keys sorted by their UTF-16 code units (as RFC 8785 and ECMAScript sort them), no
  white space; arrays keep their order;
- strings: UTF-8, escaping only ``"``, ``\\`` and the C0 controls (``\\b \\f \\n \\r \\t`` by
  name, the rest as ``\\u00xx``); lone surrogates are rejected;
- numbers: integers only, in plain decimal, within ±(2**53 - 1). A float is rejected even when
  it is whole (``1.0``): durations travel in ms and costs in micro-units;
- ``true``, ``false`` and ``null`` as themselves (a boolean is never written as a number).
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from telic_packets._bounds import MAX_SAFE_INTEGER
from telic_packets._errors import CanonicalJsonError

__all__ = ["canonical_json", "canonical_sha256", "plain_canonical_json", "sha256_text"]

SHA256_PREFIX: Final = "sha256:"
_MAX_DEPTH: Final = 64
_NAMED_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class _NotPlain(Exception):
    """The value holds something the C encoder would not write canonically."""


def _not_plain(value: object) -> object:
    raise _NotPlain


# The C encoder writes sorted keys, compact separators and exactly these string escapes; it
# differs only for floats, unsafe integers, astral characters in keys and types it does not know,
# which ``_plain`` rules out (``_write`` then writes the value or names what is wrong with it).
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
# markers=None: no circular check, so no state is shared between calls; a cycle ends in a
# RecursionError, after which the writer below reports it.
_encode_chunks = (
    _c_make_encoder(
        None, _not_plain, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    if _c_make_encoder is not None
    else None
)
_encoder = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"), default=_not_plain
)


def _encode_plain(value: object) -> str:
    if _encode_chunks is None:
        return _encoder.encode(value)
    return "".join(_encode_chunks(value, 0))


_ASTRAL: Final = "\U00010000"


def _plain(value: Any, max_depth: int, floats: bool, depth: int = 0) -> bool:
    """Whether ``value`` holds only what the C encoder writes canonically.

    Call it on values the C encoder accepted (so without cycles). With ``floats``, a float is
    plain when its ``repr`` is its ECMAScript form too (``_shortest_float``).
    """
    kind = type(value)
    if kind is dict:
        try:
            keys = "".join(value)
        except TypeError:
            return False  # a key that is not a string
        if not keys.isascii() and max(keys) >= _ASTRAL:
            return False  # UTF-16 order may differ from code-point order
        children = value.values()
    elif kind is list or kind is tuple:
        children = value
    else:
        return _plain_scalar(value, floats)
    if depth >= max_depth and children:
        return False  # its members would nest too deep
    for child in children:
        kind = type(child)
        if kind is str or child is None or kind is bool:
            continue
        if kind is int:
            if -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                continue
            return False
        if kind is float:
            if floats and _shortest_float(child):
                continue
            return False
        if not _plain(child, max_depth, floats, depth + 1):
            return False
    return True


def _shortest_float(number: float) -> bool:
    """Whether ``repr(number)`` is how ECMAScript's ``Number.prototype.toString`` writes it.

    Both write the shortest digits that round-trip. They agree on the layout for a finite
    float that is not whole with a magnitude of at least 1e-4: Python switches to an exponent
    below 1e-4 (ECMAScript below 1e-6) and writes a whole float as ``1.0`` (ECMAScript ``1``).
    Every float of 2**52 or more is whole, so the upper switch points (1e16, 1e21) never arise.
    """
    return math.isfinite(number) and not number.is_integer() and abs(number) >= 1e-4


def _plain_scalar(value: object, floats: bool) -> bool:
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is float:
        return floats and _shortest_float(value)  # type: ignore[arg-type]
    return kind is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]


def plain_canonical_json(
    value: object, *, max_depth: int = _MAX_DEPTH, floats: bool = False
) -> bytes | None:
    """Return the canonical JSON of ``value`` from the C encoder, or None when it might differ.

    The fast path shared by every canonical writer in Telic: it answers only for values made of
    objects, arrays, strings, booleans, null and safe integers, nested at most ``max_depth``
    deep, with no astral characters in keys — where the C encoder's output provably equals the
    canonical form. Anything else (floats, unsafe integers, lone surrogates, cycles, other
    types) gets None, and the caller's own writer decides.

    ``floats`` also answers for floats whose ``repr`` is their ECMAScript form (not whole,
    magnitude at least 1e-4: a confidence of 0.9, a ratio of 0.25) — for the writer of a
    canonical form that allows floats, as ``telic.protocol``'s does; packet content has none.
    """
    try:
        text = _encode_plain(value)
    except (_NotPlain, ValueError, TypeError, RecursionError):
        return None
    if not _plain(value, max_depth, floats):
        return None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None  # a lone surrogate: the writer names it


def canonical_json(value: object) -> bytes:
    """Return the canonical JSON bytes of ``value``.

    Raises:
        CanonicalJsonError: when ``value`` holds a float, an unsafe integer, a non-string key, a
            lone surrogate, a cycle or anything that is not JSON.
    """
    fast = plain_canonical_json(value)
    return fast if fast is not None else _written(value)


def _written(value: object) -> bytes:
    """The canonical JSON of ``value`` by the writer alone (what the fast path must equal)."""
    out: list[str] = []
    _write(value, out, 0, set())
    return "".join(out).encode("utf-8")


def canonical_sha256(value: object) -> str:
    """Return ``"sha256:"`` + the lowercase hex SHA-256 of ``canonical_json(value)``."""
    return SHA256_PREFIX + hashlib.sha256(canonical_json(value)).hexdigest()


def sha256_text(text: str) -> str:
    """Return ``"sha256:"`` + the lowercase hex SHA-256 of ``text`` encoded as UTF-8."""
    return SHA256_PREFIX + hashlib.sha256(_utf8(text)).hexdigest()


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalJsonError("a string holds a lone surrogate (no UTF-8 form)") from exc


def _string(text: str) -> str:
    _utf8(text)  # rejects lone surrogates before anything is written
    parts = ['"']
    for char in text:
        named = _NAMED_ESCAPES.get(char)
        if named is not None:
            parts.append(named)
        elif char < " ":
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _key_order(key: str) -> bytes:
    # UTF-16 code-unit order; differs from code-point order only when astral characters meet
    # characters in U+E000..U+FFFF.
    return key.encode("utf-16-be", "surrogatepass")


def _write(value: object, out: list[str], depth: int, open_containers: set[int]) -> None:
    if depth > _MAX_DEPTH:
        raise CanonicalJsonError(f"value nests deeper than {_MAX_DEPTH} levels")
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise CanonicalJsonError("an integer is beyond ±(2**53 - 1)")
        out.append(str(int(value)))
    elif isinstance(value, float):
        raise CanonicalJsonError("a hashed number must be an integer (ms, micro-units)")
    elif isinstance(value, Mapping):
        _enter(value, open_containers)
        pairs: list[tuple[str, object]] = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJsonError("an object key is not a string")
            pairs.append((key, item))
        pairs.sort(key=lambda pair: _key_order(pair[0]))
        out.append("{")
        for index, (key, item) in enumerate(pairs):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(item, out, depth + 1, open_containers)
        out.append("}")
        open_containers.discard(id(value))
    elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray, memoryview)):
        _enter(value, open_containers)
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out, depth + 1, open_containers)
        out.append("]")
        open_containers.discard(id(value))
    else:
        raise CanonicalJsonError(f"a {type(value).__name__} is not a JSON value")


def _enter(container: object, open_containers: set[int]) -> None:
    marker = id(container)
    if marker in open_containers:
        raise CanonicalJsonError("value contains a cycle")
    open_containers.add(marker)
