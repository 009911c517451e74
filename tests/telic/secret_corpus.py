"""A corpus of 33 kinds of fabricated secrets, built from parts at test time.

Every value is obviously fake (seeded pseudo-random characters, ``EXAMPLE`` where a format allows
it) yet valid for the detector. Nothing secret-shaped is written in this file: each value is
assembled when the tests run, so this repository never holds a string that a secret scanner, a
forge's push protection or Telic itself would flag.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from typing import Final

HEX: Final = "0123456789abcdef"
ALNUM: Final = string.ascii_letters + string.digits
UPPER_ALNUM: Final = string.ascii_uppercase + string.digits
LOWER_ALNUM: Final = string.ascii_lowercase + string.digits
B64: Final = ALNUM + "+/"


def fake(alphabet: str, length: int, seed: int) -> str:
    """Return ``length`` deterministic pseudo-random characters of ``alphabet``."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(length))


def b64(text: str) -> str:
    """Return the standard base64 of ``text`` (UTF-8)."""
    return base64.b64encode(text.encode()).decode("ascii")


def _pem(label: str, seed: int) -> str:
    dashes = "-" * 5
    body = "\n".join(fake(B64, 64, seed + i) for i in range(3))
    return f"{dashes}BEGIN {label}{dashes}\n{body}\n{dashes}END {label}{dashes}"


def _jwt(seed: int) -> str:
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256"}).encode()).decode()
    claims = base64.urlsafe_b64encode(json.dumps({"sub": fake(HEX, 8, seed)}).encode()).decode()
    return ".".join((header.rstrip("="), claims.rstrip("="), fake(ALNUM + "_-", 43, seed)))


@dataclass(frozen=True, slots=True)
class Planted:
    """One fabricated secret: its corpus id, the text that carries it and the kind reported."""

    name: str
    text: str
    kind: str
    secret: str
    """The part of ``text`` that must never reach the ledger or an error."""


def _planted(name: str, kind: str, secret: str, template: str = "{}") -> Planted:
    return Planted(name, template.format(secret), kind, secret)


def corpus() -> tuple[Planted, ...]:
    """Return the 33 kinds, each in the context it usually appears in."""
    pem_rsa = _pem("RSA " + "PRIVATE KEY", 1)
    slack = "xox"
    github = "gh"
    return (
        _planted("pem-rsa", "private-key", pem_rsa),
        _planted("pem-openssh", "private-key", _pem("OPENSSH " + "PRIVATE KEY", 2)),
        _planted("pem-ec", "private-key", _pem("EC " + "PRIVATE KEY", 3)),
        _planted("pem-pkcs8", "private-key", _pem("PRIVATE" + " KEY", 4)),
        _planted("pem-encrypted", "private-key", _pem("ENCRYPTED " + "PRIVATE KEY", 5)),
        _planted("pgp-private-block", "private-key", _pem("PGP PRIVATE " + "KEY BLOCK", 6)),
        _planted(
            "aws-access-key-id",
            "aws-access-key",
            "AK" + "IA" + fake(UPPER_ALNUM, 16, 7),
            "aws_access_key_id = {}",
        ),
        _planted("aws-session-key-id", "aws-access-key", "AS" + "IA" + fake(UPPER_ALNUM, 16, 8)),
        _planted(
            "aws-secret-access-key",
            "aws-secret-access-key",
            fake(ALNUM + "/+", 40, 9),
            "[default]\naws_secret_access_key = {}\n",
        ),
        _planted("github-classic-pat", "github-token", github + "p_" + fake(ALNUM, 36, 10)),
        _planted("github-oauth", "github-token", github + "o_" + fake(ALNUM, 36, 11)),
        _planted("github-server", "github-token", github + "s_" + fake(ALNUM, 36, 12)),
        _planted(
            "github-fine-grained-pat",
            "github-token",
            "github" + "_pat_" + fake(UPPER_ALNUM, 22, 13) + "_" + fake(ALNUM, 59, 14),
        ),
        _planted("gitlab-pat", "gitlab-token", "gl" + "pat-" + fake(ALNUM, 20, 15), "token: {}"),
        _planted("jwt", "json-web-token", _jwt(16), "session={}"),
        _planted(
            "password-assignment",
            "credential-assignment",
            "Hunter" + fake(LOWER_ALNUM, 10, 17) + "7",
            "DB_PASSWORD={}",
        ),
        _planted(
            "npm-auth-token",
            "npm-tokens",
            "npm" + "_" + fake(ALNUM, 36, 18),
            "//registry.npmjs.org/:_authToken={}",
        ),
        _planted(
            "slack-bot-token",
            "slack-token",
            f"{slack}b-{fake(string.digits, 11, 19)}-{fake(string.digits, 12, 20)}-"
            + fake(ALNUM, 24, 21),
        ),
        _planted(
            "slack-user-token",
            "slack-token",
            f"{slack}p-{fake(string.digits, 11, 22)}-{fake(string.digits, 12, 23)}-"
            + fake(LOWER_ALNUM, 32, 24),
        ),
        _planted(
            "slack-webhook",
            "slack-token",
            "https://hooks.slack.com/services/T"
            + fake(UPPER_ALNUM, 8, 25)
            + "/B"
            + fake(UPPER_ALNUM, 8, 26)
            + "/"
            + fake(ALNUM, 24, 27),
        ),
        _planted("stripe-live-secret", "stripe-access-key", "sk_" + "live_" + fake(ALNUM, 24, 28)),
        _planted(
            "openai-project-key",
            "openai-token",
            "sk-" + "proj-" + fake(ALNUM + "_-", 48, 29),
            "OPENAI_API_KEY={}",
        ),
        _planted("google-api-key", "google-api-key", "AI" + "za" + fake(ALNUM + "_-", 35, 30)),
        _planted(
            "azure-storage-key",
            "azure-storage-account-access-key",
            "Account" + "Key=" + fake(B64, 86, 31) + "==",
            "DefaultEndpointsProtocol=https;AccountName=example;{};EndpointSuffix=core",
        ),
        _planted(
            "sendgrid-key",
            "sendgrid-api-key",
            "SG" + "." + fake(ALNUM + "_-", 22, 32) + "." + fake(ALNUM + "_-", 43, 33),
        ),
        _planted(
            "authorization-bearer",
            "authorization-header",
            fake(ALNUM, 40, 34),
            'curl -H "Authorization: Bearer {}" https://api.example.com/v1/items',
        ),
        _planted(
            "url-credentials",
            "basic-auth-credentials",
            "Pg" + fake(ALNUM, 14, 35),
            "postgres://app:" + "{}" + "@db.example.com:5432/app",
        ),
        _planted("base64-wrapped-pem", "private-key", b64(pem_rsa)),
        _planted(
            "docker-config-auths",
            "docker-registry-auth",
            b64("robot:" + fake(ALNUM, 20, 36)),
            '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}',
        ),
        _planted(
            "kubeconfig-client-key",
            "kubeconfig-client-key",
            b64(_pem("RSA " + "PRIVATE KEY", 37)),
            "users:\n- name: admin\n  user:\n    client-key-data: {}\n",
        ),
        _planted(
            "long-hex-secret",
            "credential-assignment",
            fake(HEX, 64, 38),
            "SESSION_SECRET_KEY={}",
        ),
        _planted(
            "url-query-token",
            "url-query-secret",
            fake(ALNUM, 32, 39),
            "https://api.example.com/v1/export?format=csv&access_token={}",
        ),
        _planted(
            "pypi-token",
            "pypi-token",
            "pypi-" + "AgEIcHlwaS5vcmc" + fake(ALNUM + "_-", 80, 40),
        ),
    )


def npmrc() -> Planted:
    """The contents of a typical ``.npmrc`` with a registry token."""
    token = "npm" + "_" + fake(ALNUM, 36, 41)
    text = f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={token}\n"
    return Planted("npmrc", text, "npm-tokens", token)


def git_credentials() -> Planted:
    """The contents of a typical ``.git-credentials`` with a personal access token."""
    token = "gh" + "p_" + fake(ALNUM, 36, 42)
    text = "https://octocat:" + token + "@github.com\n"
    return Planted("git-credentials", text, "basic-auth-credentials", token)


AT_ENTRY_POINTS: Final = ("pem-rsa", "url-credentials")
"""The kinds an entry point other than the detector is tried with: a multi-line private key and
a password inside a URL. ``tests/telic/test_secrets.py`` proves the detector finds and redacts
every kind; an entry point only has to show that what it stores passes through the detector."""


def at_entry_points() -> tuple[Planted, ...]:
    """The planted secrets of ``AT_ENTRY_POINTS``, in that order."""
    planted = {p.name: p for p in corpus()}
    return tuple(planted[name] for name in AT_ENTRY_POINTS)
