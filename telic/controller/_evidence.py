"""The Evidence service rules (reference §3.1 Evidence, §3.3, §4 item 10.8).

Evidence is accepted only while the run executes (the phase table admits it only in
agent_4_execute: gate ``EV-EXECUTION-ONLY``). Its content must be canonical base64 or UTF-8 text
within 2 MiB once decoded; at most 128 may follow the current WorkPlan; and nothing in it may
look like a secret: every string of the body (keys included), the decoded content and the
caller's sourceRefs are scanned, and a hit is refused with ``SecretDetected`` — "redact before
submission" — naming where, never what. Artifact sourceRefs must exist in the run
(``REF-EXISTS``), and an identical replay is idempotent (the machine returns the stored record).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from telic._errors import Issue, SecretDetected
from telic._secrets import contains_secret
from telic.controller._check import Check, Rule, Violation
from telic.protocol._evidence import Evidence, decode_evidence_content

__all__ = ["MAX_EVIDENCE_PER_PLAN", "RULES", "scan_content", "scan_submission"]

MAX_EVIDENCE_PER_PLAN: Final = 128
_REDACT: Final = "Evidence holds likely secret material; redact before submission"


def _paths(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(path, string)`` for every string of a JSON value, object keys included."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                yield where, key
            yield from _paths(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, f"{path}.{index}" if path else str(index))


def _refuse(path: str) -> SecretDetected:
    return SecretDetected(
        _REDACT, issues=(Issue(path, "secret_detected", _REDACT, "EV-NO-SECRETS"),)
    )


def scan_submission(body: object, source_refs: Sequence[str]) -> None:
    """Refuse a raw Evidence body or caller sourceRefs holding a likely secret.

    Runs before the schema, so that no later message can echo a secret back.

    Raises:
        SecretDetected: naming the path of the first hit, never its text.
    """
    for path, text in _paths(body):
        if contains_secret(text):
            raise _refuse(path or "(body)")
    for index, uri in enumerate(source_refs):
        if contains_secret(uri):
            raise _refuse(f"source_refs.{index}")


def scan_content(evidence: Evidence) -> None:
    """Refuse Evidence whose *decoded* content holds a likely secret (base64 hides nothing).

    Raises:
        SecretDetected: when the decoded bytes, read as text, hold a likely secret.
    """
    if evidence.encoding != "base64":
        return
    try:
        raw = decode_evidence_content(evidence)
    except ValueError:
        return  # EV-CONTENT-CANONICAL reports it
    # latin-1 maps every byte to one character, so ASCII secret shapes survive binary content.
    if contains_secret(raw.decode("latin-1")):
        raise _refuse("content")


def ev_content_canonical(c: Check[Evidence]) -> Iterator[Violation]:
    """Content is canonical base64 (or UTF-8 text) and at most 2 MiB once decoded."""
    try:
        decode_evidence_content(c.body)
    except ValueError as error:
        yield Violation("content", str(error))


def ev_quota(c: Check[Evidence]) -> Iterator[Violation]:
    """At most 128 Evidence artifacts per current WorkPlan."""
    since = c.state.all_after(c.state.latest("WorkPlan"), "Evidence")
    if len(since) >= MAX_EVIDENCE_PER_PLAN:
        yield Violation("", "The current plan already has 128 Evidence artifacts")


_EV = ("Evidence",)

RULES: Final = (
    Rule(
        "EV-CONTENT-CANONICAL",
        _EV,
        ev_content_canonical,
        "§3.1 Evidence (service rules)",
        "Non-canonical base64 content, or content above 2 MiB once decoded.",
    ),
    Rule(
        "EV-QUOTA",
        _EV,
        ev_quota,
        "§3.3 Evidence",
        "A 129th Evidence artifact after the current WorkPlan.",
    ),
)
