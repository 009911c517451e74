"""Sealing a rendered report, and describing a stored one as a ``ReportArtifact``.

A written report ends with one seal line, an HTML comment both Markdown and HTML ignore::

    <!-- telic-report {"chainHead": …, "chainLength": …, "covers": …, "sha256": …} -->

``sha256`` is the digest of every byte before the seal line, so a viewer can tell a report that
was edited or truncated (``invalid``) from one the ledger has simply moved past (``stale``).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import ValidationError

from telic.protocol import sha256_hex_digest
from telic.reports._model import RunReportData
from telic_packets import Harness, ReportArtifact

REPORT_KIND: Final = "run_report"
"""The ``kind`` of every run report descriptor."""

_SEAL_OPEN: Final = "<!-- telic-report "
_SEAL_CLOSE: Final = " -->"
_SOURCE_TYPES: Final = (
    "UserMessage",
    "TaskContract",
    "WorkPlan",
    "QualityReview",
    "ReleaseAudit",
    "UserReport",
)


def seal(content: str, data: RunReportData) -> str:
    """Return ``content`` followed by its seal line (content ends with a newline first)."""
    if not content.endswith("\n"):
        content += "\n"
    facts = {
        "chainHead": data.provenance.chain_head,
        "chainLength": data.provenance.chain_length,
        "covers": data.run_id,
        "generatedAt": data.provenance.generated_at,
        "sha256": sha256_hex_digest(content.encode("utf-8")),
    }
    return content + _SEAL_OPEN + json.dumps(facts, sort_keys=True) + _SEAL_CLOSE + "\n"


def unseal(text: str) -> tuple[str, dict[str, Any] | None]:
    """Split a stored report into its content and its seal facts (``None`` when unsealed)."""
    body = text[:-1] if text.endswith("\n") else text
    cut = body.rfind("\n") + 1
    line = body[cut:]
    if not (line.startswith(_SEAL_OPEN) and line.endswith(_SEAL_CLOSE)):
        return text, None
    try:
        facts = json.loads(line[len(_SEAL_OPEN) : -len(_SEAL_CLOSE)])
    except ValueError:
        return text, None
    return body[:cut], facts if isinstance(facts, dict) else None


def report_source_refs(data: RunReportData) -> list[str]:
    """Return the artifact refs a report of ``data`` is generated from (the latest of each type)."""
    latest: dict[str, str] = {}
    for entry in data.artifacts:
        if entry.type in _SOURCE_TYPES:
            latest[entry.type] = entry.artifact_id
    return [f"artifact://{data.run_id}/{latest[t]}" for t in _SOURCE_TYPES if t in latest]


def describe_report(data: RunReportData, text: str | None, *, path: str) -> ReportArtifact:
    """Describe the stored report ``text`` (``None``: no file) against the ledger now (``data``).

    ``present``: the seal verifies and covers the ledger's current chain head. ``stale``: it
    verifies but the ledger has moved on (the reason says by how much). ``invalid``: no seal,
    a digest that does not match, or a report of another run. ``absent``: nothing stored.
    """
    generator = Harness(
        name=data.provenance.generator_name, version=data.provenance.generator_version
    )
    common: dict[str, Any] = {
        "kind": REPORT_KIND,
        "generator": generator,
        "covers": data.run_id,
        "source_refs": report_source_refs(data),
    }
    if text is None:
        return ReportArtifact(status="absent", **common)
    content, facts = unseal(text)
    status: Literal["present", "stale", "invalid"] = "invalid"
    reason = None
    generated_at = None
    if facts is not None and facts.get("sha256") == sha256_hex_digest(content.encode("utf-8")):
        generated_at = facts.get("generatedAt")
        length, head = facts.get("chainLength"), facts.get("chainHead")
        current = data.provenance
        if facts.get("covers") != data.run_id or not isinstance(length, int):
            status = "invalid"
        elif length == current.chain_length and head == current.chain_head:
            status = "present"
        elif length < current.chain_length:
            status = "stale"
            newer = current.chain_length - length
            reason = (
                f"the ledger has {newer} newer record{'s' if newer != 1 else ''} than the report "
                f"covers ({length} of {current.chain_length})"
            )
        else:
            status = "stale"
            reason = "the ledger's chain head differs from the one the report covers"
    fields: dict[str, Any] = {"path": path}
    if status != "invalid":
        fields |= {
            "sha256": sha256_hex_digest(text.encode("utf-8")),
            "generated_at": generated_at,
            "stale_reason": reason,
        }
    try:
        return ReportArtifact(status=status, **common, **fields)
    except ValidationError:  # a seal with an unusable generatedAt: the file does not verify
        return ReportArtifact(status="invalid", path=path, **common)
