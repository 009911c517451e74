"""The secret detector: the 33-kind corpus, nested base64, redaction, paths and false positives.

Secret-shaped test strings are assembled at run time (``tests/telic/secret_corpus.py``) so that
this repository never holds a string that a secret scanner would flag; the last tests scan the
repository itself to prove it.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from telic._secrets import (
    MAX_DECODE_DEPTH,
    cannot_hold_secret,
    contains_secret,
    find_secrets,
    first_secret,
    is_secret_like_path,
    iter_strings,
    marker,
    redact,
    rule_sources,
)
from telic._secrets._rules import rules as secret_rules
from telic._secrets._triggers import EXACT_TRIGGERS, FOLDED_TRIGGERS, KEYWORD_BYTES
from tests.telic.secret_corpus import Planted, b64, corpus, git_credentials, npmrc

ROOT = Path(__file__).resolve().parents[2]
PLANTED = corpus()
FILES = (npmrc(), git_credentials())


def _ids(items: tuple[Planted, ...]) -> list[str]:
    return [item.name for item in items]


def test_the_corpus_holds_thirty_three_distinct_kinds() -> None:
    assert len(PLANTED) == 33
    assert len({p.name for p in PLANTED}) == 33


@pytest.mark.parametrize("planted", PLANTED + FILES, ids=_ids(PLANTED + FILES))
def test_every_planted_secret_is_found_and_named_by_its_kind(planted: Planted) -> None:
    findings = find_secrets(planted.text)
    assert contains_secret(planted.text)
    assert findings[0].kind == planted.kind


@pytest.mark.parametrize("planted", PLANTED + FILES, ids=_ids(PLANTED + FILES))
def test_redaction_removes_the_secret_and_keeps_the_rest(planted: Planted) -> None:
    redacted = redact(planted.text)
    assert planted.secret not in redacted
    assert marker(planted.kind) in redacted
    assert not contains_secret(redacted), "a redacted text must not be flagged again"
    prefix = planted.text.split(planted.secret)[0]
    assert redacted.startswith(prefix[: max(0, len(prefix) - 8)])


# Two kinds carry a base64 layer of their own, so they take one layer less from the bound.
_OWN_LAYER = {"base64-wrapped-pem", "kubeconfig-client-key"}
WRAPPED = [
    pytest.param(planted, layers, id=f"{planted.name}-{layers}")
    for planted in PLANTED + FILES
    for layers in range(1, MAX_DECODE_DEPTH + 1 - (planted.name in _OWN_LAYER))
]


@pytest.mark.parametrize(("planted", "layers"), WRAPPED)
def test_base64_hides_nothing_up_to_the_decoding_bound(planted: Planted, layers: int) -> None:
    wrapped = planted.text
    for _ in range(layers):
        wrapped = b64(wrapped)
    (finding,) = find_secrets(f"log: {wrapped} end")
    assert finding.depth >= layers
    assert redact(f"log: {wrapped} end") == f"log: {marker(finding.kind)} end"


def test_the_decoding_bound_is_documented_and_a_fourth_layer_is_not_decoded() -> None:
    text = corpus()[9].text  # a classic GitHub token
    wrapped = text
    for _ in range(MAX_DECODE_DEPTH + 1):
        wrapped = b64(wrapped)
    assert MAX_DECODE_DEPTH == 3
    assert not contains_secret(wrapped)
    assert "three layers" in (ROOT / "docs" / "secrets.md").read_text(encoding="utf-8")


def test_a_finding_records_the_span_but_never_the_text() -> None:
    secret = PLANTED[6].secret
    text = f"prefix {secret} suffix"
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == secret
    assert secret not in repr(finding)


def test_overlapping_findings_become_one_marker_named_by_the_specific_kind() -> None:
    token = next(p for p in PLANTED if p.name == "gitlab-pat")
    assert redact(token.text) == "token: " + marker("gitlab-token")


def test_a_secret_as_an_object_key_is_reported_as_key_and_never_named_in_paths_below() -> None:
    secret = PLANTED[10].secret
    value = {"frame": {secret: {"note": PLANTED[6].secret}}}
    hit = first_secret(value)
    assert hit is not None
    assert hit[0] == "frame.(key)"
    assert secret not in hit[0]


def test_keys_the_caller_does_not_show_stand_as_key_in_paths() -> None:
    value = {"knownFacts": [{"unknownField": PLANTED[6].text}]}
    hit = first_secret(value, shown=lambda key: key == "knownFacts")
    assert hit is not None
    assert hit[0] == "knownFacts.0.(key)"


def test_a_body_without_secrets_has_no_first_secret() -> None:
    assert first_secret({"a": ["plain", {"b": "text"}], "c": None, "d": 3}) is None


# ---------------------------------------------------------------- false positives

LOOK_ALIKES = [
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "password=short",
    "password=${DB_PASSWORD}",
    "api_key: <your-api-key-here>",
    "token=example-token-value",
    "secret=placeholder_value",
    "password=REDACTED_BY_HOST",
    "password: changeme123",
    "AKIA" + "SHORT",
    "gh" + "p_" + "abc",
    "Rotate the password monthly and never share tokens.",
    "passwordless_login = true",
    "token = harness.MARKED.set(marked)",
    "authorization = state.envelope.authorization",
    'reason = "secret_like_file"',
    "max_tokens = 4096",
    "quota_key = artifact://run-1/frame-2",
    "contentHash: sha256:" + "ab12" * 16,
    "author = Grace Hopper 1906",
    "see https://example.com/path?page=2&sort=name",
    "password = hunter",
    "authorization: Authorization",
    "test_secrets.py::test_evidence_content_is_refused_even_in_double_base64",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_placeholders_code_and_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == ()


# Fixtures of other tests that are credential-shaped on purpose, each with its reason. Nothing
# else in the repository may be flagged.
JUSTIFIED = {
    # URL userinfo: the permission tests prove Telic strips it from traced targets.
    "tests/telic/controller/rules/test_deny.py": {"basic-auth-credentials"},
    "tests/telic/permissions/escape_catalogue.json": {"basic-auth-credentials"},
    "tests/telic/permissions/test_decision.py": {"basic-auth-credentials"},
    "tests/telic/permissions/test_laws.py": {"basic-auth-credentials"},
    "tests/telic/permissions/test_start.py": {"basic-auth-credentials"},
    "tests/telic/permissions/test_targets.py": {"basic-auth-credentials"},
    # A canary the report tests look for in rendered output: secret-shaped by design.
    "tests/telic/reports/recorded.py": {"credential-assignment"},
}


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    paths = [ROOT / name for name in listed.decode().split("\0") if name]
    return [path for path in paths if path.is_file() and path.suffix not in {".png"}]


def test_the_repository_itself_holds_nothing_the_detector_flags() -> None:
    flagged: dict[str, set[str]] = {}
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        kinds = {finding.kind for finding in find_secrets(text)}
        if kinds:
            flagged[path.relative_to(ROOT).as_posix()] = kinds
    unexpected = {
        name: kinds - JUSTIFIED.get(name, set())
        for name, kinds in flagged.items()
        if kinds - JUSTIFIED.get(name, set())
    }
    assert unexpected == {}
    assert len(_tracked_text_files()) > 300  # the scan saw the whole tree


# ---------------------------------------------------------------- the rule set


def test_every_rule_names_its_source_and_detect_secrets_supplies_most_kinds() -> None:
    sources = rule_sources()
    assert all(kind == kind.lower() and " " not in kind for kind, _ in sources)
    upstream = {kind for kind, source in sources if source.startswith("detect-secrets")}
    assert {"aws-access-key", "private-key", "slack-token", "stripe-access-key"} <= upstream
    assert len(upstream) >= 15


def test_each_rule_that_matches_a_planted_secret_holds_one_of_its_anchors() -> None:
    for planted in PLANTED + FILES:
        for rule in secret_rules():
            for match in rule.pattern.finditer(planted.text):
                found = match.group().lower() if rule.folded else match.group()
                assert any(anchor in found for anchor in rule.anchors), (planted.name, rule)


# The detect-secrets patterns the anchors in ``telic/_secrets/_triggers.py`` were read from. When an
# upgrade changes them, re-check each plugin's anchors, then update this digest.
PATTERNS_SHA256 = "30fb7e5d5252568ab8e1f99bb72271415ed07eb34245df9583a818c14c4152d9"


def _patterns_digest() -> str:
    lines = sorted(
        f"{rule.source}\t{rule.pattern.pattern}\t{rule.pattern.flags}"
        for rule in secret_rules()
        if rule.source.startswith("detect-secrets")
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_the_detect_secrets_patterns_are_the_ones_the_anchors_were_read_from() -> None:
    assert _patterns_digest() == PATTERNS_SHA256


# ---------------------------------------------------------------- the pre-filter


def test_the_pre_filter_looks_for_every_anchor_of_every_rule_as_the_detector_does() -> None:
    for rule in secret_rules():
        triggers = FOLDED_TRIGGERS if rule.folded else EXACT_TRIGGERS
        assert set(rule.keys) <= set(triggers), (rule.kind, rule.source)
    assert set(KEYWORD_BYTES) <= set(FOLDED_TRIGGERS)


@pytest.mark.parametrize("planted", PLANTED + FILES, ids=_ids(PLANTED + FILES))
def test_the_pre_filter_sends_every_planted_secret_to_the_detector(planted: Planted) -> None:
    assert not cannot_hold_secret(planted.text)
    assert not cannot_hold_secret(f"curl -d '{planted.text}' https://example.com")


@pytest.mark.parametrize(("planted", "layers"), WRAPPED)
def test_the_pre_filter_sends_base64_wrapped_secrets_to_the_detector(
    planted: Planted, layers: int
) -> None:
    wrapped = planted.text
    for _ in range(layers):
        wrapped = b64(wrapped)
    assert not cannot_hold_secret(f"echo {wrapped} | base64 -d")


ORDINARY_COMMANDS = [
    "pytest -q tests",
    "python -m pytest tests/telic/hosts -q -x -p no:randomly",
    "git status",
    "git diff HEAD~1 -- src/retry.py",
    "make check",
    "ls -la src",
    "rm -rf build",
    "npm test",
    "cargo build --release",
]


@pytest.mark.parametrize("command", ORDINARY_COMMANDS)
def test_the_pre_filter_clears_ordinary_commands(command: str) -> None:
    assert cannot_hold_secret(command)
    assert find_secrets(command) == ()


def _fragments() -> list[str]:
    """Pieces a text that almost holds a secret is made of: anchors, keywords, slices of the
    planted secrets (whole, cut, in another case) and their base64."""
    pieces = [key.decode() for key in (*EXACT_TRIGGERS, *FOLDED_TRIGGERS)]
    for planted in PLANTED + FILES:
        text = planted.text
        half = len(text) // 2
        pieces += [text, text[:half], text[half:], text[1:], text.swapcase(), b64(text)]
        pieces.append(b64(text[: half + 4]))
    return [*pieces, " ", "=", ":", "\n", '"', "'", "?", "&", "/", "-", "_", "@", "x" * 16]


FRAGMENTS = _fragments()
TEXTS = st.one_of(
    st.text(max_size=80),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=8).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_whatever_the_pre_filter_clears_the_detector_clears_too(text: str) -> None:
    if cannot_hold_secret(text):
        assert find_secrets(text) == ()
        assert redact(text) == text


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PLANTED + FILES), st.text(max_size=20), st.text(max_size=20))
def test_a_planted_secret_anywhere_in_a_text_is_never_cleared(
    planted: Planted, before: str, after: str
) -> None:
    assert not cannot_hold_secret(before + planted.text + after)


# ---------------------------------------------------------------- paths and walking


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


# ---------------------------------------------------------------- long and wide texts


@pytest.mark.parametrize("planted", PLANTED + FILES, ids=_ids(PLANTED + FILES))
def test_a_secret_deep_in_a_long_text_with_wide_characters_is_found_and_redacted_whole(
    planted: Planted,
) -> None:
    filler = "Zeile für Zeile — nichts Geheimes hier → weiter.\n" * 600  # 30k characters
    text = filler + planted.text + "\n" + filler
    assert len(text) > 32_768
    assert find_secrets(text)[0].kind == planted.kind
    redacted = redact(text)
    assert planted.secret not in redacted
    assert redacted.startswith(filler)
    assert redacted.endswith(filler)


def test_a_base64_secret_after_wide_characters_is_redacted_at_the_right_place() -> None:
    planted = PLANTED[9]
    text = "→ ünïcödé ← " + b64(planted.text) + " tail"
    assert redact(text) == "→ ünïcödé ← " + marker(planted.kind) + " tail"
