"""Decoding ``body_json``: one JSON object, and no object in it with a key given twice.

Python's ``json`` keeps the last of two equal keys, and so do most parsers, but not all of them
(some keep the first, some refuse), so a body whose meaning depends on which parser reads it
must never reach the ledger: the stored canonical form would say something a reviewer reading
the submitted text did not see. RFC 8259 says names SHOULD be unique; Telic refuses duplicates.
"""

from __future__ import annotations

import json
from typing import Any

from telic._errors import Issue, SchemaViolation
from telic.protocol import DuplicateKeyError, unique_keys

_RULE = "body_json must be one JSON object without duplicate keys"


def decode_body_json(text: str) -> dict[str, Any]:
    """Return the object ``text`` encodes.

    Raises:
        SchemaViolation: ``text`` is not JSON, not an object, or repeats a key in any object
            (issue code ``duplicate_key``; the message names the key, cut to 64 characters).
    """
    try:
        value = json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKeyError as duplicate:
        message = f"body_json repeats the key {duplicate.key[:64]!r} in one object ({_RULE})"
        raise SchemaViolation(
            message, issues=(Issue("body_json", "duplicate_key", message),)
        ) from None
    except (ValueError, RecursionError):
        raise SchemaViolation("body_json is not valid JSON") from None
    if not isinstance(value, dict):
        raise SchemaViolation("body_json must encode a JSON object")
    return value
