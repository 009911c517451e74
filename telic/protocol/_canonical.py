"""Canonical JSON and content digests.

Telic addresses every stored body by ``sha256:`` + the hex digest of its canonical JSON: object
keys sorted recursively, no insignificant white space, UTF-8, and numbers and strings formatted
exactly as ECMAScript's ``JSON.stringify`` formats them, so that a body hashed here and a body
hashed by the original TypeScript implementation get the same digest. NaN, infinities, lone
surrogates and values that are not JSON are rejected rather than silently coerced.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import telic_packets
from telic._errors import SchemaViolation
from telic_packets import plain_canonical_json

SHA256_PREFIX: Final = "sha256:"
"""The prefix of every content digest: ``sha256:`` + 64 lowercase hex digits."""
_MAX_DEPTH: Final = 256


class CanonicalJsonError(SchemaViolation, telic_packets.CanonicalJsonError):
    """A value cannot be written as canonical JSON (NaN, infinity, a non-JSON type, a cycle).

    A ``SchemaViolation`` of Telic's tree, and a ``telic_packets.CanonicalJsonError`` (hence a
    ``ValueError``), so one ``except`` of either catches the canonical-JSON failures of both.
    """


def canonical_json(value: object) -> bytes:
    """Return the canonical JSON encoding of ``value`` as UTF-8 bytes.

    Raises:
        CanonicalJsonError: when ``value`` holds something JSON cannot represent exactly.
    """
    # Most bodies take the shared C-encoder fast path; the writer below handles the rest
    # (ECMAScript number formatting of whole, tiny or unsafe numbers) and names what is not JSON.
    fast = plain_canonical_json(value, max_depth=_MAX_DEPTH, floats=True)
    if fast is None:
        # A whole float (a score of 1.0, a count of 0.0) is written as the integer it is.
        whole = _whole_as_int(value, 0)
        if whole is not value:
            fast = plain_canonical_json(whole, max_depth=_MAX_DEPTH, floats=True)
    return fast if fast is not None else _written(value)


def _whole_as_int(value: Any, depth: int) -> Any:
    """``value`` with each whole float of a safe magnitude as the int ECMAScript writes for it.

    Below 2**53 every whole float is an integer exactly, and its shortest round-trip digits
    padded with zeros are that integer's, so ``str(int(f))`` is its ECMAScript form (``-0.0``
    included: ``0``). Only plain dicts, lists and tuples are copied, and only where something
    changed; anything deeper than the writer's limit is left for the writer to refuse.
    """
    kind = type(value)
    if kind is float:
        if value.is_integer() and abs(value) <= telic_packets.MAX_SAFE_INTEGER:
            return int(value)
        return value
    if depth > _MAX_DEPTH:
        return value
    if kind is dict:
        items = {key: _whole_as_int(item, depth + 1) for key, item in value.items()}
        changed = any(items[key] is not item for key, item in value.items())
        return items if changed else value
    if kind is list or kind is tuple:
        members = [_whole_as_int(item, depth + 1) for item in value]
        changed = any(new is not old for new, old in zip(members, value, strict=True))
        return members if changed else value
    return value


def _written(value: object) -> bytes:
    """The canonical JSON of ``value`` by the writer alone (what the fast path must equal)."""
    parts: list[str] = []
    _write(value, parts, 0, set())
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        raise CanonicalJsonError("string holds a lone surrogate, which has no UTF-8 form") from exc


def sha256_hex_digest(data: bytes) -> str:
    """Return ``sha256:<64 lowercase hex>`` of raw bytes."""
    return SHA256_PREFIX + hashlib.sha256(data).hexdigest()


def canonical_sha256(value: object) -> str:
    """Return the ``sha256:`` digest of the canonical JSON of ``value``."""
    return sha256_hex_digest(canonical_json(value))


def _write(value: object, out: list[str], depth: int, seen: set[int]) -> None:
    if depth > _MAX_DEPTH:
        raise CanonicalJsonError(f"value nests deeper than {_MAX_DEPTH} levels")
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int):
        out.append(_format_number(float(value)) if abs(value) >= 2**53 else str(value))
    elif isinstance(value, float):
        out.append(_format_number(value))
    elif isinstance(value, Mapping):
        marker = id(value)
        if marker in seen:
            raise CanonicalJsonError("value contains a cycle")
        seen.add(marker)
        items: list[tuple[str, object]] = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJsonError(f"object key {key!r} is not a string")
            items.append((key, item))
        # ECMAScript sorts property names by UTF-16 code units; this differs from code-point
        # order only for keys mixing astral characters with characters above U+E000.
        items.sort(key=lambda pair: pair[0].encode("utf-16-be", "surrogatepass"))
        out.append("{")
        for index, (key, item) in enumerate(items):
            if index:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _write(item, out, depth + 1, seen)
        out.append("}")
        seen.discard(marker)
    elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        marker = id(value)
        if marker in seen:
            raise CanonicalJsonError("value contains a cycle")
        seen.add(marker)
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out, depth + 1, seen)
        out.append("]")
        seen.discard(marker)
    else:
        raise CanonicalJsonError(f"{type(value).__name__} is not a JSON value")


def _format_number(number: float) -> str:
    """Format a finite double as ECMAScript ``Number.prototype.toString`` does."""
    if not math.isfinite(number):
        raise CanonicalJsonError("NaN and Infinity are not JSON numbers")
    if number == 0:
        return "0"  # includes -0, which JSON.stringify writes as 0
    sign = "-" if number < 0 else ""
    # repr gives the shortest round-tripping digits; re-lay them out by the ECMAScript rules.
    mantissa, _, exp_text = repr(abs(number)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    exponent_shift = int(exp_text) if exp_text else 0
    if int_part.strip("0"):  # the decimal point sits after `point` significant digits
        point = len(int_part) + exponent_shift
    else:  # 0.000ddd: each leading fractional zero moves the point one place left
        point = exponent_shift - (len(frac_part) - len(frac_part.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


class DuplicateKeyError(CanonicalJsonError):
    """A JSON object gives one key twice; ``key`` is that key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate object key {key!r}")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: one object, or ``DuplicateKeyError``."""
    result: dict[str, Any] = {}
    for key, item in pairs:
        if key in result:
            raise DuplicateKeyError(key)
        result[key] = item
    return result


def parse_json_strict(text: str | bytes) -> Any:
    """Parse JSON text, rejecting NaN, Infinity and duplicate object keys."""

    def _no_constants(name: str) -> Any:
        raise CanonicalJsonError(f"{name} is not a JSON number")

    return json.loads(text, parse_constant=_no_constants, object_pairs_hook=unique_keys)
