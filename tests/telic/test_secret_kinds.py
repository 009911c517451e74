"""The kinds issue 28 planted that the detector missed, made fresh on every run.

Each value is drawn from the operating system's random source: a password in a URL with the
characters detect-secrets' rule stops at, an empty user name, JSON-escaped PEM and PuTTY key
bodies, and the providers' token formats. Each must be found with its kind, and redaction must
leave no part of the secret behind, alone and inside a JSON string.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable

import pytest

from telic._secrets import cannot_hold_secret, find_secrets, redact
from tests.telic.fresh_secrets import ALNUM, HEX, draw

UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
SPECIALS = "!#$&*()+=,;?[]'"


def _pem_json() -> tuple[str, str]:
    body = "\\n".join(draw(B64, 64) for _ in range(4))  # JSON-escaped line breaks
    dashes = "-" * 5
    label = "RSA " + "PRIVATE KEY"  # split, so this file holds no key header
    text = f"{dashes}BEGIN {label}{dashes}\\n{body}\\n{dashes}END {label}{dashes}"
    return text, body.split("\\n")[2]


def _putty(escaped: bool) -> tuple[str, str]:
    nl = "\\n" if escaped else "\n"
    private = [draw(B64, 64) for _ in range(3)]
    lines = [
        "PuTTY-User-" + "Key-File-2: ssh-rsa",
        "Encryption: none",
        "Comment: rsa-key-20260101",
        "Public-Lines: 1",
        draw(B64, 64),
        "Private-Lines: 3",
        *private,
        f"Private-MAC: {draw(HEX, 40)}",
    ]
    return nl.join(lines), private[1]


def _url_password() -> tuple[str, str]:
    password = draw(ALNUM, 6) + "".join(secrets.choice(SPECIALS) for _ in range(6)) + draw(ALNUM, 4)
    return "postgres://app:" + password + "@db.internal:5432/app", password


def _redis() -> tuple[str, str]:
    password = draw(ALNUM, 20)
    return "redis://:" + password + "@cache.internal:6379/0", password


def _token(
    prefix: str, alphabet: str, length: int, suffix: str = ""
) -> Callable[[], tuple[str, str]]:
    def make() -> tuple[str, str]:
        value = prefix + draw(alphabet, length) + suffix
        return value, value

    return make


KINDS: dict[str, tuple[str, Callable[[], tuple[str, str]]]] = {
    "url-password-specials": ("basic-auth-credentials", _url_password),
    "redis-empty-user": ("basic-auth-credentials", _redis),
    "pem-json-escaped": ("private-key", _pem_json),
    "putty": ("private-key", lambda: _putty(False)),
    "putty-json-escaped": ("private-key", lambda: _putty(True)),
    "anthropic": ("anthropic-api-key", _token("sk-ant-api03-", ALNUM + "_-", 93, "AA")),
    "huggingface": ("huggingface-token", _token("hf_", ALNUM, 34)),
    "slack-app": (
        "slack-token",
        _token("xapp-1-A" + draw(UPPER, 10) + "-", string.digits + "-abcdef", 40),
    ),
    "google-oauth-secret": ("google-oauth-client-secret", _token("GOCSPX-", ALNUM + "_-", 28)),
    "google-oauth-token": ("google-oauth-token", _token("ya29.", ALNUM + "_-", 60)),
    "vault": ("vault-token", _token("hvs.", ALNUM, 90)),
    "digitalocean": ("digitalocean-token", _token("dop_v1_", HEX, 64)),
    "shopify": ("shopify-token", _token("shpat_", HEX, 32)),
    "age": ("age-secret-key", _token("AGE-SECRET-KEY-1", UPPER, 58)),
    "databricks": ("databricks-token", _token("dapi", HEX, 32)),
    "atlassian": ("atlassian-api-token", _token("ATATT3", ALNUM + "_-", 60)),
    "postman": (
        "postman-api-key",
        lambda: (lambda v: (v, v))(f"PMAK-{draw(HEX, 24)}-{draw(HEX, 34)}"),
    ),
    "doppler": ("doppler-token", _token("dp.pt.", ALNUM, 43)),
    "grafana": ("grafana-token", _token("glsa_", ALNUM, 32, "_" + draw(HEX, 8))),
    "newrelic": ("newrelic-key", _token("NRAK-", UPPER, 27)),
    "sentry": ("sentry-token", _token("sntrys_", ALNUM, 60)),
    "linear": ("linear-api-key", _token("lin_api_", ALNUM, 40)),
    "pulumi": ("pulumi-token", _token("pul-", HEX, 40)),
    "supabase": ("supabase-token", _token("sbp_", HEX, 40)),
}


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_is_found_and_redacted_whole(name: str) -> None:
    kind, make = KINDS[name]
    text, secret = make()
    found = find_secrets(text)
    assert kind in {f.kind for f in found}, (name, [f.kind for f in found])
    assert not cannot_hold_secret(text)
    shown = redact(f"config: {text} (end)")
    assert secret not in shown
    assert f"[redacted:{kind}]" in shown or "[redacted:" in shown
    assert shown.endswith("(end)")
    as_json = json.dumps({"value": text})
    assert secret not in redact(as_json)


@pytest.mark.parametrize(
    "clean",
    [
        "https://registry.npmjs.org:443/@babel/core",
        "git@github.com:org/repo.git",
        "https://example.com/users/@alice",
        "ssh://git@github.com/org/repo.git",
        "http://localhost:8080/api",
        "mailto:someone@example.com",
        "postgres://app:${DB_PASSWORD}@db.internal/app",
        "postgres://app:%(password)s@db.internal/app",
    ],
)
def test_urls_without_a_password_are_left_alone(clean: str) -> None:
    assert redact(clean) == clean
