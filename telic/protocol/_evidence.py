"""Evidence: captured output that backs a claim (docs/protocol.md §3.1 "Evidence").

An executor submits Evidence beside its WorkResults; every direct-evidence field of a later
artifact points at one. This module holds the schema only. The service rules (accepted only while
executing, secret scan, artifact refs in the same run, 128 per plan) belong to the controller;
``decode_evidence_content`` is the pure piece of them that needs no run state.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final, Literal

from telic.protocol._base import ArtifactBody
from telic.protocol._types import (
    BoundedText,
    Identifier,
    Items,
    Label,
    ReferenceUri,
    Summary,
    Timestamp,
)

MAX_EVIDENCE_CONTENT_BYTES: Final = 2_097_152
"""Maximum size of evidence content, as UTF-8 text and once decoded."""

EvidenceKind = Literal[
    "repository", "runtime", "browser", "test", "diff", "tool_output", "log", "user_confirmation"
]
"""What kind of capture a piece of evidence is; consuming fields accept only some kinds."""

Encoding = Literal["utf8", "base64"]
"""How ``content`` is written: plain text, or canonical base64 of raw bytes."""


class Evidence(ArtifactBody):
    """One captured observation: a diff, test output, log, browser or runtime capture."""

    id: Identifier
    run_id: Identifier
    kind: EvidenceKind
    captured_at: Timestamp
    summary: Summary
    content_type: Label
    """e.g. ``text/plain``."""
    encoding: Encoding
    content: BoundedText
    """Redacted before submission."""
    source_refs: Items[ReferenceUri]
    redactions: Items[BoundedText]
    rationale_summary: Summary

    # The reference also caps content at 2 MiB of UTF-8; BoundedText's 32,768-byte cap is
    # stricter, so the schema needs no second check (decode_evidence_content repeats it).


def decode_evidence_content(evidence: Evidence) -> bytes:
    """Return the raw bytes of ``evidence.content``.

    UTF-8 content is encoded; base64 content must be canonical, so that re-encoding the decoded
    bytes gives back exactly the submitted text (no missing padding, stray bits or white space).

    Raises:
        ValueError: when the content is not canonical base64, is not encodable text, or its
            bytes exceed ``MAX_EVIDENCE_CONTENT_BYTES``.
    """
    if evidence.encoding == "base64":
        try:
            raw = base64.b64decode(evidence.content.encode("ascii"), validate=True)
        except (UnicodeEncodeError, binascii.Error):
            raise ValueError("Evidence content is not valid base64") from None
        if base64.b64encode(raw).decode("ascii") != evidence.content:
            raise ValueError("Evidence content is not canonical base64 (re-encoding differs)")
    else:
        try:
            raw = evidence.content.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                "Evidence content holds a lone surrogate, which is not UTF-8"
            ) from None
    if len(raw) > MAX_EVIDENCE_CONTENT_BYTES:
        raise ValueError(
            f"Evidence content is {len(raw)} bytes; the limit is {MAX_EVIDENCE_CONTENT_BYTES}"
        )
    return raw
