"""The anchors and keywords the detector needs, and the pre-filter built on them.

The detector (``_scan``) reports a rule's match only where one of the rule's anchor literals
occurs, a credential assignment only where one of ``KEYWORDS`` starts, and a finding below a
base64 layer only where a decodable run of ``MIN_BASE64`` or more characters holds one. So
``cannot_hold_secret`` clears a text by substring tests alone, without importing detect-secrets
or compiling a rule (docs/secrets.md, "The pre-filter"). Telic's own rules are declared here as
data (``OWN_RULES``) so that their anchors are read without compiling them; ``_rules`` compiles
them. ``tests/telic/test_secrets.py`` checks that the trigger sets hold every anchor of every
rule, and that the pre-filter never clears a text the detector flags.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Final

# The detect-secrets plugins whose regex rule sets Telic runs: (module, class, anchors), the
# anchors being literals every match of the plugin's patterns contains (docs/secrets.md, "Cost").
# Left out on purpose: IPPublicDetector (a public address is no secret), the keyword and entropy
# plugins (they judge whole source lines by file type; Telic's credential-assignment rule stands
# in), Cloudant, IBM Cloud IAM, IBM COS HMAC and SoftLayer (keyword-assignment patterns that the
# credential-assignment and basic-auth rules cover, at a tenth of their cost), and Discord and
# Telegram bot tokens (no literal to anchor on: scanning for them would cost every submission
# more than all other rules together).
PLUGINS: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("artifactory", "ArtifactoryDetector", ("AKC", *(f"AP{c}" for c in "0123456789ABCDEF"))),
    ("aws", "AWSKeyDetector", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T", "aws")),
    ("azure_storage_key", "AzureStorageKeyDetector", ("AccountKey=",)),
    ("basic_auth", "BasicAuthDetector", ("@",)),
    ("github_token", "GitHubTokenDetector", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (
        "gitlab_token",
        "GitLabTokenDetector",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "GR1348941",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
        ),
    ),
    ("jwt", "JwtTokenDetector", ("eyJ",)),
    ("mailchimp", "MailchimpDetector", ("-us",)),
    ("npm", "NpmDetector", ("_authToken=",)),
    ("openai", "OpenAIDetector", ("T3BlbkFJ",)),
    ("private_key", "PrivateKeyDetector", ("BEGIN", "PuTTY-User-" + "Key-File-2")),
    ("pypi_token", "PypiTokenDetector", ("pypi-Ag",)),
    ("sendgrid", "SendGridDetector", ("SG.",)),
    ("slack", "SlackDetector", ("xox", "hooks.slack.com")),
    ("square_oauth", "SquareOAuthDetector", ("sq0csp-",)),
    ("stripe", "StripeDetector", ("k_live_",)),
    ("twilio", "TwilioKeyDetector", ("AC", "SK")),
)

KEYWORDS: Final = ("pass", "pwd", "secret", "token", "key", "auth", "credential")
"""Where a credential assignment may start (lowercased; a word or camelCase boundary first)."""
KEYWORD_BYTES: Final = tuple(keyword.encode() for keyword in KEYWORDS)

FOLDED_PLUGINS: Final = frozenset({"AWSKeyDetector", "SlackDetector"})
"""The plugins with a case-insensitive pattern: their anchors are also looked for lowered."""

OWN_RULES: Final[tuple[tuple[str, str, tuple[str, ...], int | str], ...]] = (
    # (kind, pattern, anchors, the group whose span is the secret). A pattern that opens with
    # ``(?i)`` ignores case, so its anchors are lowered and looked for in the lowered text.
    (
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=\s:,.\\-]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\s:,.\\-]*)",
        ("PRIVATE KEY",),
        0,
    ),
    (
        "aws-access-key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])",
        ("AKIA", "ASIA"),
        0,
    ),
    (
        "aws-secret-access-key",
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?"
        r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ("aws",),
        "value",
    ),
    (
        "github-token",
        r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        0,
    ),
    ("github-token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}", ("github_pat_",), 0),
    ("google-api-key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}", ("AIza",), 0),
    (
        "openai-token",
        r"(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
        ("sk-",),
        0,
    ),
    ("npm-tokens", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}", ("npm_",), 0),
    (
        "json-web-token",
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}",
        ("eyJ",),
        0,
    ),
    (
        "authorization-header",
        r"(?i)(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic|digest)|bearer)"
        r"\s+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)",
        ("bearer", "authorization"),
        "value",
    ),
    (
        "url-query-secret",
        r"(?i)[?&#;](?:access_token|token|api[_-]?key|apikey|key|secret|password|passwd|sig"
        r"|signature|auth|code|client_secret)=(?P<value>[^&#\s\"'<>\[\]]{8,})",
        ("=",),
        "value",
    ),
    # Accepted only when the value decodes to ``user:password`` (``_rules``).
    (
        "docker-registry-auth",
        r"\"auth\"\s*:\s*\"(?P<value>[A-Za-z0-9+/]{8,}={0,2})\"",
        ('"auth"',),
        "value",
    ),
    # A PuTTY key file from its header to its MAC line: the private lines are the secret, and
    # they may come JSON-escaped (``\n`` as two characters), so the body's class holds ``\\``.
    (
        "private-key",
        r"PuTTY-User-Key-File-[23]:[A-Za-z0-9+/=\s:,.@\\-]{0,16384}?"
        r"(?:Private-MAC:[\s\\n]*[0-9a-fA-F]+|Private-Lines:[\s\\n]*\d+[A-Za-z0-9+/=\s\\]*)",
        ("PuTTY-User-Key-File-",),
        0,
    ),
    # A password in a URL's user information, whatever characters it holds (detect-secrets'
    # rule stops at ``! # $ & * ( ) + = , ; ? [ ] '``), and with an empty user name (a Redis
    # URL's colon right after the scheme). The user information ends before the first ``/``.
    (
        "basic-auth-credentials",
        r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]\"<>]*:(?P<value>(?!\[redacted:|\$?\{|%\()[^\s/@\"<>`]+)"
        r"@(?=[A-Za-z0-9\[_-])",
        ("@",),
        "value",
    ),
    (
        "anthropic-api-key",
        r"(?<![A-Za-z0-9_-])sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{20,}",
        ("sk-ant-",),
        0,
    ),
    ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}", ("hf_",), 0),
    ("huggingface-token", r"(?<![A-Za-z0-9_])api_org_[A-Za-z0-9]{30,}", ("api_org_",), 0),
    ("slack-token", r"(?<![A-Za-z0-9_-])xapp-\d-[A-Za-z0-9-]{20,}", ("xapp-",), 0),
    ("slack-token", r"(?<![A-Za-z0-9_-])xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9-]{20,}", ("xoxe",), 0),
    (
        "google-oauth-client-secret",
        r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,}",
        ("GOCSPX-",),
        0,
    ),
    ("google-oauth-token", r"(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,}", ("ya29.",), 0),
    (
        "vault-token",
        r"(?<![A-Za-z0-9_.-])hv[sbr]\.[A-Za-z0-9_-]{20,}",
        ("hvs.", "hvb.", "hvr."),
        0,
    ),
    (
        "digitalocean-token",
        r"(?<![A-Za-z0-9_])do[por]_v1_[a-f0-9]{64}",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        0,
    ),
    (
        "shopify-token",
        r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        0,
    ),
    ("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("AGE-SECRET-KEY-1",), 0),
    ("databricks-token", r"(?<![A-Za-z0-9_])dapi[a-f0-9]{32}(?:-\d)?", ("dapi",), 0),
    ("atlassian-api-token", r"(?<![A-Za-z0-9_])ATATT3[A-Za-z0-9_=-]{30,}", ("ATATT3",), 0),
    ("postman-api-key", r"(?<![A-Za-z0-9_])PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("PMAK-",), 0),
    ("doppler-token", r"(?<![A-Za-z0-9_])dp\.(?:pt|st|sa|ct|scim)\.[A-Za-z0-9]{30,}", ("dp.",), 0),
    ("grafana-token", r"(?<![A-Za-z0-9_])(?:glsa|glc)_[A-Za-z0-9_=+/-]{30,}", ("glsa_", "glc_"), 0),
    ("newrelic-key", r"(?<![A-Za-z0-9_])NRAK-[A-Z0-9]{27}", ("NRAK-",), 0),
    ("sentry-token", r"(?<![A-Za-z0-9_])sntry[su]_[A-Za-z0-9_=+/-]{30,}", ("sntry",), 0),
    ("linear-api-key", r"(?<![A-Za-z0-9_])lin_api_[A-Za-z0-9]{40}", ("lin_api_",), 0),
    ("pulumi-token", r"(?<![A-Za-z0-9_])pul-[a-f0-9]{40}", ("pul-",), 0),
    (
        "terraform-cloud-token",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        (".atlasv1.",),
        0,
    ),
    ("supabase-token", r"(?<![A-Za-z0-9_])sbp_[a-f0-9]{40}", ("sbp_",), 0),
    (
        "kubeconfig-client-key",
        r"client-key-data[\"']?\s*:\s*[\"']?(?P<value>[A-Za-z0-9+/]{16,}={0,2})",
        ("client-key-data",),
        "value",
    ),
)
"""Telic's own rules, for the shapes detect-secrets does not know (``_rules`` compiles them)."""

EXACT_TRIGGERS: Final = tuple(
    sorted(
        {anchor.encode() for _, _, anchors in PLUGINS for anchor in anchors}
        | {
            a.encode()
            for _, p, anchors, _ in OWN_RULES
            if not p.startswith("(?i)")
            for a in anchors
        }
    )
)
"""Every anchor the detector looks for as written."""
FOLDED_ANCHORS: Final = tuple(
    sorted(
        {
            a.lower().encode()
            for _, name, anchors in PLUGINS
            if name in FOLDED_PLUGINS
            for a in anchors
        }
        | {
            a.lower().encode()
            for _, p, anchors, _ in OWN_RULES
            if p.startswith("(?i)")
            for a in anchors
        }
    )
)
"""Every anchor the detector looks for in the lowered text."""
FOLDED_TRIGGERS: Final = (*FOLDED_ANCHORS, *KEYWORD_BYTES)
"""``FOLDED_ANCHORS`` and the assignment keywords."""

MAX_DECODE_DEPTH: Final = 3
"""Layers of base64 decoded while scanning: a secret inside three nested encodings is found."""
MIN_BASE64: Final = 16
"""The shortest run of base64 characters that is decoded and scanned again."""

_WHITESPACE: Final = str.maketrans("", "", "\r\n\t")
_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
_MASK: Final = bytes(ord("a") if byte in _ALPHABET else ord(" ") for byte in range(256))
_PAD: Final = ord("=")


def probe(text: str) -> bytes:
    """Return ``text`` as ASCII bytes, one per character (``?`` for any other character).

    Anchors and keywords are ASCII, so they occur in the probe exactly where they occur in the
    text, and a bytes search is a memchr scan even when the text holds wide characters.
    """
    return text.encode("ascii", "replace")


def decode_text(run: str) -> str | None:
    """Return the text a base64 run decodes to, or None when it is not text."""
    stripped = run.rstrip("=")
    if len(stripped) % 4 == 1:
        return None
    padded = stripped + "=" * (-len(stripped) % 4)
    try:
        if "-" in padded or "_" in padded:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    # Text, not binary: everything printable but for line breaks and tabs.
    return text if text.translate(_WHITESPACE).isprintable() else None


def base64_runs(text: str) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(start, end, run)`` for each maximal base64 run of 16+ characters (UTF-8 offsets).

    One C-level translate marks the alphabet, and ``find`` walks the marks: much cheaper than a
    regular expression over a large text. Up to two ``=`` of padding belong to a run.
    """
    raw = text.encode("utf-8", "surrogatepass")
    mask = raw.translate(_MASK)
    seed = b"a" * MIN_BASE64
    at = mask.find(seed)
    while at >= 0:
        end = mask.find(b" ", at)
        end = len(mask) if end < 0 else end
        stop = end
        while stop < len(raw) and stop - end < 2 and raw[stop] == _PAD:
            stop += 1
        yield at, stop, raw[at:stop]
        at = mask.find(seed, end)


def decoded_runs(text: str, depth: int) -> Iterator[tuple[int, int, bytes, str]]:
    """Yield ``(start, end, run, decoded)`` for each base64 run of ``text`` scanned a layer down.

    The one walk the detector (``_scan._find``) and ``cannot_hold_secret`` share: nothing at
    ``MAX_DECODE_DEPTH`` or in a text shorter than ``MIN_BASE64``, no run of letters only (an
    identifier: the base64 of a secret has digits or symbols), no run that decodes to binary.
    Offsets are UTF-8 byte offsets, as ``base64_runs`` gives them.
    """
    if depth >= MAX_DECODE_DEPTH or len(text) < MIN_BASE64:
        return
    for start, end, run in base64_runs(text):
        if run.isalpha():
            continue
        decoded = decode_text(run.decode("ascii"))
        if decoded is not None:
            yield start, end, run, decoded


def _triggered(text: str) -> bool:
    """Whether any anchor or keyword occurs in ``text`` as the detector looks for it."""
    exact = probe(text)
    if any(key in exact for key in EXACT_TRIGGERS):
        return True
    folded = exact.lower()
    return any(key in folded for key in FOLDED_TRIGGERS)


def cannot_hold_secret(text: str, depth: int = 0) -> bool:
    """Return ``True`` only when the detector would find nothing in ``text``.

    ``False`` means "scan it": an anchor or keyword occurs, or a base64 run decodes to text in
    which one occurs. The walk over the runs is the detector's own (``decoded_runs``), with the
    anchor test standing in for the rules, so whatever it clears the detector clears too.
    """
    if _triggered(text):
        return False
    return all(cannot_hold_secret(decoded, depth + 1) for *_, decoded in decoded_runs(text, depth))
