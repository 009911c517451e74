"""Secret detection and redaction for every string that enters the ledger (docs/secrets.md).

The rules are detect-secrets' regex plugins plus Telic's own (``rule_sources`` lists them); each
runs only where one of its anchor literals occurs, and base64 runs are decoded and scanned again
down to ``MAX_DECODE_DEPTH`` layers. A finding records only the kind and the span of a match,
never the matched text, so nothing found here can leak through an error, a log or the trace.
``redact`` replaces each span with ``[redacted:<kind>]``; ``first_secret`` names the path of a
JSON value's first hit without naming a key that holds one; ``CLEAN_MEMO`` remembers strings
scanned clean; ``cannot_hold_secret`` clears a text without loading detect-secrets.
"""

from __future__ import annotations

from telic._secrets._paths import (
    SECRET_EXTENSIONS as SECRET_EXTENSIONS,
    SECRET_HINTS as SECRET_HINTS,
    is_secret_like_path as is_secret_like_path,
)
from telic._secrets._rules import rule_sources as rule_sources, warm as warm
from telic._secrets._scan import (
    CLEAN_MEMO as CLEAN_MEMO,
    SecretFinding as SecretFinding,
    contains_secret as contains_secret,
    find_secrets as find_secrets,
    first_secret as first_secret,
    first_secret_in as first_secret_in,
    iter_strings as iter_strings,
    marker as marker,
    redact as redact,
)
from telic._secrets._triggers import (
    MAX_DECODE_DEPTH as MAX_DECODE_DEPTH,
    cannot_hold_secret as cannot_hold_secret,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
