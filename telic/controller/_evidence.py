"""The Evidence service rules (docs/protocol.md §3.1 Evidence, §3.3, §4 item 10.8).

Evidence is accepted only while the run executes (the phase table admits it only in
agent_4_execute: gate ``EV-EXECUTION-ONLY``). Its content must be canonical base64 or UTF-8 text
within 2 MiB once decoded; at most 128 may follow the current WorkPlan; and nothing in it may
look like a secret: ``telic.controller._scan`` scans every string of the body (keys included),
the decoded content and the caller's sourceRefs, and a hit is refused with ``SecretDetected``
(``EV-NO-SECRETS``), naming where, never what. Artifact sourceRefs must exist in the run
(``REF-EXISTS``), and an identical replay is idempotent (the machine returns the stored record).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._check import Check, Rules, Violation
from telic.protocol import Evidence, decode_evidence_content

rule = Rules(("Evidence",), "§3.1 Evidence (service rules)")

MAX_EVIDENCE_PER_PLAN: Final = 128


@rule("EV-CONTENT-CANONICAL")
def ev_content_canonical(c: Check[Evidence]) -> Iterator[Violation]:
    """Non-canonical base64 content, or content above 2 MiB once decoded.

    Content may instead be UTF-8 text.
    """
    try:
        decode_evidence_content(c.body)
    except ValueError as error:
        yield Violation("content", str(error))


@rule("EV-QUOTA", section="§3.3 Evidence")
def ev_quota(c: Check[Evidence]) -> Iterator[Violation]:
    """A 129th Evidence artifact after the current WorkPlan."""
    since = c.state.all_after(c.state.latest("WorkPlan"), "Evidence")
    if len(since) >= MAX_EVIDENCE_PER_PLAN:
        yield Violation("", "The current plan already has 128 Evidence artifacts")


RULES: Final = rule.registered
