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
them one by one with their paths only after a hit.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_DECODE_DEPTH",
    "SecretFinding",
    "contains_secret",
    "find_secrets",
    "first_secret",
    "is_secret_like_path",
    "iter_strings",
    "marker",
    "redact",
    "rule_sources",
]

MAX_DECODE_DEPTH: Final = 3
"""Layers of base64 decoded while scanning: a secret inside three nested encodings is found."""

_MIN_BASE64: Final = 16
_WHITESPACE: Final = str.maketrans("", "", "\r\n\t")
_TOKEN_END: Final = re.compile(r"[\s'\"`<>]")
_BASE64_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")

# The detect-secrets plugins whose regex rule sets Telic runs: (module, class, anchors). A rule
# runs on a text only when one of its anchors occurs in it (a plain substring test), so the
# happy path costs a few substring searches. The anchors are literals that every match of the
# plugin's patterns contains; ``tests/telic/test_secrets.py`` pins the patterns they were read
# from, so an upgrade that changes them fails until the anchors are checked again.
# Left out on purpose: IPPublicDetector (a public address is no secret), the keyword and entropy
# plugins (they judge whole source lines by file type; Telic's credential-assignment rule stands
# in), Cloudant, IBM Cloud IAM, IBM COS HMAC and SoftLayer (keyword-assignment patterns that the
# credential-assignment and basic-auth rules cover, at a tenth of their cost), and Discord and
# Telegram bot tokens (no literal to anchor on: scanning for them would cost every submission
# more than all other rules together).
_PLUGINS: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
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

_KEYWORDS: Final = ("pass", "pwd", "secret", "token", "key", "auth", "credential")
"""Where a credential assignment may start (lowercased; a word or camelCase boundary first)."""
_ASSIGNED: Final = re.compile(
    r"[A-Za-z0-9_.-]*[\"']?\s*(?:=|:=|=>|:(?!:))\s*(?P<quote>[\"']?)(?P<value>[^\s\"'`,;(){}\[\]<>\\]{8,})"
)
_PLACEHOLDERS: Final = (
    "${",
    "$(",
    "{{",
    "%(",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "your",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "....",
)
_SYMBOLS: Final = frozenset("!@#$%^&*+=~")
_SNAKE: Final = re.compile(r"[a-z]+[0-9]*(?:_[a-z]+[0-9]*){2,}")
_DOTTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _value_looks_secret(value: str) -> bool:
    """A credential-shaped value: not a placeholder, a code expression, a path or a word.

    Values of letters only are let through: in code they are type names and identifiers.
    """
    lowered = value.lower()
    if lowered.startswith(_PLACEHOLDERS) or "://" in value or _DOTTED.fullmatch(value):
        return False
    if _SNAKE.fullmatch(value):
        return False  # an identifier such as a test name
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 12 and bool(_SYMBOLS.intersection(value))


def _boundary(text: str, start: int) -> bool:
    """Whether a keyword at ``start`` begins a word or a camelCase part of an identifier."""
    if start == 0:
        return True
    before = text[start - 1]
    if not before.isalpha():
        return True
    return text[start].isupper() and before.islower()


def _assignments(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """Yield the value spans of ``<credential name> = <credential-shaped value>``."""
    seen: set[int] = set()
    for keyword in _KEYWORDS:
        at = lowered.find(keyword)
        while at >= 0:
            author = lowered.startswith("author", at) and not lowered.startswith("authoriz", at)
            if _boundary(text, at) and not author:
                match = _ASSIGNED.match(text, at + len(keyword))
                if match is not None and match.start("value") not in seen:
                    end = match.end("value")
                    call = text[end : end + 1] == "("
                    if not call and _value_looks_secret(match.group("value")):
                        seen.add(match.start("value"))
                        yield match.start("value"), end
            at = lowered.find(keyword, at + 1)


def _docker_auth(match: re.Match[str]) -> bool:
    decoded = _decode(match.group("value"))
    return decoded is not None and ":" in decoded


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    """Literals of which every match holds one (case-sensitive)."""
    group: int | str | None = 0
    """The group whose span is the secret; None: the first group when it is 8+ characters
    (detect-secrets' patterns capture the secret there), else the whole match."""
    accept: Callable[[re.Match[str]], bool] | None = None
    source: str = "telic"
    folded: bool = False
    """Whether the pattern ignores case, so its anchors are looked for in the lowered text."""
    clip: bool = False
    """Whether a match ends at its first space or quote (for upstream patterns)."""

    def __post_init__(self) -> None:
        if self.pattern.flags & re.IGNORECASE:
            object.__setattr__(self, "folded", True)
            object.__setattr__(self, "anchors", tuple(a.lower() for a in self.anchors))


_OWN: Final = (
    _Rule(
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[A-Za-z0-9+/=\s:,.-]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|[A-Za-z0-9+/=\s:,.-]*)"
        ),
        ("PRIVATE KEY",),
    ),
    _Rule(
        "aws-access-key",
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
        ("AKIA", "ASIA"),
    ),
    _Rule(
        "aws-secret-access-key",
        re.compile(
            r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        ("aws",),
        "value",
    ),
    _Rule(
        "github-token",
        re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _Rule(
        "github-token",
        re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}"),
        ("github_pat_",),
    ),
    _Rule("google-api-key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}"), ("AIza",)),
    _Rule(
        "openai-token",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
        ("sk-",),
    ),
    _Rule("npm-tokens", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}"), ("npm_",)),
    _Rule(
        "json-web-token",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"),
        ("eyJ",),
    ),
    _Rule(
        "authorization-header",
        re.compile(
            r"(?i)(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic|digest)|bearer)"
            r"\s+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)"
        ),
        ("bearer", "authorization"),
        "value",
    ),
    _Rule(
        "url-query-secret",
        re.compile(
            r"(?i)[?&#;](?:access_token|token|api[_-]?key|apikey|key|secret|password|passwd|sig"
            r"|signature|auth|code|client_secret)=(?P<value>[^&#\s\"'<>\[\]]{8,})"
        ),
        ("=",),
        "value",
    ),
    _Rule(
        "docker-registry-auth",
        re.compile(r"\"auth\"\s*:\s*\"(?P<value>[A-Za-z0-9+/]{8,}={0,2})\""),
        ('"auth"',),
        "value",
        _docker_auth,
    ),
    _Rule(
        "kubeconfig-client-key",
        re.compile(r"client-key-data[\"']?\s*:\s*[\"']?(?P<value>[A-Za-z0-9+/]{16,}={0,2})"),
        ("client-key-data",),
        "value",
    ),
)
_ASSIGNMENT_KIND: Final = "credential-assignment"


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


@dataclass(frozen=True, slots=True)
class _Table:
    rules: tuple[_Rule, ...]
    exact: tuple[str, ...]
    """Every case-sensitive anchor, once."""
    folded: tuple[str, ...]
    """Every anchor of a case-insensitive rule, lowered, once."""


@functools.cache
def _table() -> _Table:
    """Every regex rule (detect-secrets' first, then Telic's own) and all their anchors."""
    import importlib

    rules: list[_Rule] = []
    for module_name, class_name, anchors in _PLUGINS:
        module = importlib.import_module(f"detect_secrets.plugins.{module_name}")
        plugin = getattr(module, class_name)
        kind = _slug(plugin.secret_type)
        for pattern in plugin.denylist:
            source = f"detect-secrets {class_name}"
            rules.append(_Rule(kind, pattern, anchors, None, source=source, clip=True))
    rules.extend(_OWN)
    exact = {a for rule in rules if not rule.folded for a in rule.anchors}
    folded = {a for rule in rules if rule.folded for a in rule.anchors}
    return _Table(tuple(rules), tuple(sorted(exact)), tuple(sorted(folded)))


def _rules() -> tuple[_Rule, ...]:
    return _table().rules


def rule_sources() -> tuple[tuple[str, str], ...]:
    """Return ``(kind, source)`` for every rule, in the order they run (for the docs)."""
    pairs = [(rule.kind, rule.source) for rule in _rules()]
    pairs.append((_ASSIGNMENT_KIND, "telic"))
    return tuple(dict.fromkeys(pairs))


def warm() -> None:
    """Import detect-secrets and compile its rules now rather than on the first scan."""
    _rules()


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where a likely secret was found: its kind and character span, never its text.

    ``depth`` is 0 for a match in the text itself and ``n`` for one found after decoding ``n``
    layers of base64; then the span covers the whole encoded run.
    """

    kind: str
    start: int
    end: int
    depth: int = 0


def _order(finding: SecretFinding) -> tuple[int, int, bool, str]:
    # Among findings that cover the same span, a specific kind names it before the generic one.
    generic = finding.kind == _ASSIGNMENT_KIND
    return finding.start, -finding.end, generic, finding.kind


def _decode(run: str) -> str | None:
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


def _matches(text: str, lowered: str) -> Iterator[SecretFinding]:
    table = _table()
    exact = {anchor for anchor in table.exact if anchor in text}
    folded = {anchor for anchor in table.folded if anchor in lowered}
    for rule in table.rules if exact or folded else ():
        if (folded if rule.folded else exact).isdisjoint(rule.anchors):
            continue
        for match in rule.pattern.finditer(text):
            if rule.accept is not None and not rule.accept(match):
                continue
            group = rule.group
            if group is None:
                group = 1 if rule.pattern.groups and len(match.group(1) or "") >= 8 else 0
            start, end = match.span(group)
            if rule.clip:
                # Some upstream patterns run to the end of the line (npm's ``npm_.+``): a token
                # ends at the first space or quote, and the rest of the text is kept.
                stop = _TOKEN_END.search(text, start, end)
                end = end if stop is None or stop.start() == start else stop.start()
            if start < end:
                yield SecretFinding(rule.kind, start, end)
    for start, end in _assignments(text, lowered):
        yield SecretFinding(_ASSIGNMENT_KIND, start, end)


def _find(text: str, depth: int) -> list[SecretFinding]:
    findings = list(_matches(text, text.lower()))
    if depth < MAX_DECODE_DEPTH and len(text) >= _MIN_BASE64:
        for run in _BASE64_RUN.finditer(text):
            if run.group().isalpha():
                continue  # an identifier: the base64 of a secret has digits or symbols
            decoded = _decode(run.group())
            if decoded is None:
                continue
            inner = _find(decoded, depth + 1)
            if inner:
                first = min(inner, key=_order)
                findings.append(SecretFinding(first.kind, run.start(), run.end(), first.depth + 1))
    return findings


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Return every likely secret in ``text``, in order of position."""
    return tuple(sorted(set(_find(text, 0)), key=_order))


def contains_secret(text: str) -> bool:
    """Return whether ``text`` holds at least one likely secret."""
    return bool(_find(text, 0))


def marker(kind: str) -> str:
    """Return the typed marker that stands in for a redacted secret of ``kind``."""
    return f"[redacted:{kind}]"


def redact(text: str) -> str:
    """Return ``text`` with every likely secret replaced by its typed marker.

    Overlapping findings are merged and named by the first of them; everything outside a
    finding is kept, so a redacted target still says what was attempted.
    """
    findings = find_secrets(text)
    if not findings:
        return text
    pieces: list[str] = []
    position = 0
    for finding in findings:
        if finding.end <= position:
            continue
        start = max(finding.start, position)
        if start == position and pieces and pieces[-1].startswith("[redacted:"):
            position = finding.end  # extends the marker just written
            continue
        pieces.append(text[position:start])
        pieces.append(marker(finding.kind))
        position = finding.end
    pieces.append(text[position:])
    return "".join(pieces)


_UNSHOWN: Final = "(key)"


def _walk(value: object, path: str, shown: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """Yield ``(path, string)`` for every string of a JSON value, object keys included.

    A key becomes a path segment only when ``shown`` accepts it and it holds no secret; any
    other key is ``(key)`` in the paths, its own included.
    """
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            text = key if isinstance(key, str) else str(key)
            segment = text if shown(text) and not contains_secret(text) else _UNSHOWN
            yield (f"{path}.{_UNSHOWN}" if path else _UNSHOWN), text
            yield from _walk(item, f"{path}.{segment}" if path else segment, shown)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}.{index}" if path else str(index), shown)


def _every_key(key: str) -> bool:
    return True


def first_secret(
    value: object, path: str = "", *, shown: Callable[[str], bool] = _every_key
) -> tuple[str, SecretFinding] | None:
    """Return ``(path, finding)`` of the first likely secret in a JSON value, or None.

    ``path`` is dot-joined below ``path``: array indexes as numbers, object keys as themselves
    when ``shown`` accepts them, and ``(key)`` for any other key and for a key that itself
    holds the secret, so the path can be shown to the caller. All the strings are scanned as
    one text first; the walk with paths runs only after a hit.
    """
    if not _find("\n".join(iter_strings(value)), 0):
        return None
    for where, text in _walk(value, path, shown):
        findings = find_secrets(text)
        if findings:
            return (where or "(body)"), findings[0]
    return None  # a match that only spans two strings is no finding


_SECRET_BASENAMES: Final = frozenset({".git-credentials", ".netrc", ".npmrc", ".pypirc"})
_SECRET_SEGMENTS: Final = frozenset({"credential", "credentials", "secret", "secrets"})
_SECRET_BASENAME_PREFIX: Final = re.compile(
    r"^(?:credentials?\.|secrets?\.|service-account[._-]|id_(?:dsa|ecdsa|ed25519|rsa))",
    re.IGNORECASE,
)
_SECRET_EXTENSIONS: Final = (".key", ".p12", ".pfx", ".pem")


def is_secret_like_path(path: str) -> bool:
    """Return whether a repository-relative path names a file that likely holds secrets."""
    segments = [segment for segment in path.replace("\\", "/").split("/") if segment]
    if not segments:
        return False
    if any(segment.lower() in _SECRET_SEGMENTS for segment in segments):
        return True
    basename = segments[-1]
    lowered = basename.lower()
    return (
        lowered.startswith(".env")
        or lowered in _SECRET_BASENAMES
        or _SECRET_BASENAME_PREFIX.match(basename) is not None
        or lowered.endswith(_SECRET_EXTENSIONS)
    )


def iter_strings(value: object) -> Iterator[str]:
    """Yield every string in a decoded JSON value: object keys, values and array items."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, list | tuple):
            stack.extend(item)
        # dict before the Mapping ABC, whose check costs several times as much
        elif isinstance(item, dict) or isinstance(item, Mapping):  # noqa: SIM101
            for key, child in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(child)
