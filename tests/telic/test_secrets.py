"""The secret heuristics: a catalogue of true secrets and look-alike placeholders.

Secret-shaped test strings are assembled at run time so that this repository never holds a
string that a secret scanner would flag.
"""

from __future__ import annotations

import pytest

from telic._secrets import contains_secret, find_secrets, is_secret_like_path, iter_strings

PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----"
AWS = "AKIA" + "Q3EXAMPLEKEY7XYZ"
GITHUB = "gh" + "p_" + "Zx9" * 12
JWT = "ey" + "JhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXZhbHVl"

CATALOGUE: list[tuple[str, str, str | None]] = [
    # (case id, text, expected kind or None for "no secret")
    ("pem-rsa-private-key", PEM, "private_key"),
    ("pem-openssh-private-key", "-----BEGIN " + "OPENSSH PRIVATE KEY-----", "private_key"),
    ("pem-encrypted-private-key", "-----BEGIN " + "ENCRYPTED PRIVATE KEY-----", "private_key"),
    ("aws-access-key-in-text", f"key id {AWS} in config", "aws_access_key"),
    ("github-personal-token", f"export GH={GITHUB}", "github_token"),
    ("github-oauth-token", "gh" + "o_" + "a1B2" * 6, "github_token"),
    ("jwt-bearer", f"Authorization: Bearer {JWT}", "jwt"),
    ("password-assignment", "password=hunter2hunter2", "assignment"),
    ("password-yaml", "password: s3cr3t-value", "assignment"),
    ("api-key-json", '{"api_key": "sk_live_0123456789"}', "assignment"),
    ("apikey-env", "APIKEY=0123456789abcdef", "assignment"),
    ("client-secret", "client_secret = 'abcd1234efgh'", "assignment"),
    ("token-colon", "token: 9f8e7d6c5b4a", "assignment"),
    ("uppercase-password", "DB_PASSWORD=CorrectHorseBattery", "assignment"),
    # placeholders and look-alikes that must pass
    ("public-key-header", "-----BEGIN PUBLIC KEY-----", None),
    ("certificate-header", "-----BEGIN CERTIFICATE-----", None),
    ("short-password", "password=short", None),
    ("env-placeholder", "password=${DB_PASSWORD}", None),
    ("angle-placeholder", "api_key: <your-api-key-here>", None),
    ("example-placeholder", "token=example-token-value", None),
    ("placeholder-word", "secret=placeholder_value", None),
    ("redacted-value", "password=REDACTED_BY_HOST", None),
    ("changeme-value", "password: changeme123", None),
    ("akia-too-short", "AKIA" + "SHORT", None),
    ("github-prefix-too-short", "gh" + "p_" + "abc", None),
    ("prose-about-passwords", "Rotate the password monthly and never share tokens.", None),
    ("passwordless-identifier", "passwordless_login = true", None),
]


@pytest.mark.parametrize(("case", "text", "kind"), CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_secret_catalogue_verdicts(case: str, text: str, kind: str | None) -> None:
    findings = find_secrets(text)
    assert contains_secret(text) is (kind is not None), case
    if kind is None:
        assert findings == ()
    else:
        assert kind in {finding.kind for finding in findings}


def test_the_catalogue_holds_at_least_twenty_cases_of_both_verdicts() -> None:
    assert len(CATALOGUE) >= 20
    assert sum(kind is None for _, _, kind in CATALOGUE) >= 8
    assert sum(kind is not None for _, _, kind in CATALOGUE) >= 8


def test_a_finding_records_the_span_but_never_the_text() -> None:
    text = f"prefix {AWS} suffix"
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == AWS
    assert AWS not in repr(finding)


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.production",
        "config/.env.local",
        ".git-credentials",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "deploy/credentials/prod.json",
        "app/secrets/db.yaml",
        "credentials.json",
        "secret.txt",
        "service-account.json",
        "keys/service-account_prod.json",
        "home/.ssh/id_ed25519",
        "id_rsa.pub",
        "tls/server.key",
        "certs/client.p12",
        "certs/bundle.pfx",
        "certs/ca.pem",
        "Secrets/Thing.txt",
    ],
)
def test_secret_like_paths_are_recognised(path: str) -> None:
    assert is_secret_like_path(path)


@pytest.mark.parametrize(
    "path",
    ["src/app.py", "docs/environment.md", "src/secretary.py", "keys.md", "src/token_parser.py"],
)
def test_ordinary_paths_are_not_secret_like(path: str) -> None:
    assert not is_secret_like_path(path)


def test_iter_strings_visits_keys_values_and_nested_items() -> None:
    value = {"a": ["x", {"password": 3}], "b": None}
    assert sorted(iter_strings(value)) == ["a", "b", "password", "x"]
