"""Secret detection and redaction for every string that enters the ledger (docs/secrets.md).

The rules come from two sources. Most are the regex detectors of Yelp's ``detect-secrets``
(a dependency: its plugin classes' ``denylist`` patterns, named by each plugin's
``secret_type``), so its maintainers' knowledge of token formats is reused rather than copied.
The rest are Telic's own
supplements for shapes that package does not know (fine-grained GitHub tokens, Google API keys,
current OpenAI project keys, Authorization headers, URL query tokens, Docker registry ``auth``
entries, kubeconfig key data, unquoted AWS secret keys, and credential assignments such as
``password=…`` or ``SIGNING_KEY=<hex>``). Base64 runs are decoded and scanned again, up to
``MAX_DECODE_DEPTH`` layers, so wrapping a secret in base64 (twice) hides nothing.

A finding records only the kind and the span of a match, never the matched text, so nothing
found here can leak through an error, a log or the trace. ``redact`` replaces each span with a
typed marker ``[redacted:<kind>]`` and keeps the rest of the text; ``first_secret`` walks a JSON
value and names the path of the first hit without ever naming an object key that holds one.
The fast path is cheap: a rule's regular expression runs only when one of its anchor literals
occurs in the text, and ``first_secret`` scans all the strings of a value as one text, walking
them one by one with their paths only after a hit. Strings found clean lately are kept in a
bounded memo (``CLEAN_MEMO``), so the ledger's backstop (``telic.ledger``) rescanning what a
gate has just scanned costs a lookup, not a second scan. ``cannot_hold_secret`` answers the
commonest question cheaper still: it says, from the anchors, keywords and base64 runs alone and
without loading detect-secrets, that a text holds nothing the detector flags (a fresh
``telic hook`` process asks it before redacting a Bash command).
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
