"""Small formatting helpers shared by the Markdown and HTML renderers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from telic.reports._model import RunReportData

_MD_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")
_GOOD: Final = frozenset(
    {"pass", "supported", "completed", "ALLOW", "verified", "release", "cited", "ok"}
)
_BAD: Final = frozenset(
    {
        "fail",
        "failed",
        "mismatch",
        "missing",
        "unsupported",
        "contradicted",
        "DENY",
        "blocked",
        "block",
        "failed_verification",
        "rejected",
        "cancelled",
        "not cited",
    }
)
_WARN: Final = frozenset(
    {
        "partial",
        "unverified",
        "pending",
        "remediate",
        "revise",
        "proceed_to_fix",
        "partially_verified",
        "unavailable",
        "not observed",
        "awaiting_clarification",
    }
)


def md(text: str) -> str:
    """Escape untrusted text for one Markdown line or table cell (no HTML, no markup)."""
    flat = " ".join(text.split())
    return _MD_SPECIAL.sub(r"\\\1", flat.replace("&", "&amp;"))


_CONTROL: Final = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# C0 and C1 controls (ESC starts every terminal control sequence) and the bidirectional
# overrides that reorder what a reader sees; tab and newline are kept where lines are.


def terminal_text(text: str) -> str:
    """Untrusted text for one line of a terminal: whitespace collapsed, controls replaced.

    Nothing is escaped (a terminal shows Markdown as it is); a ``|`` becomes ``¦`` so that a
    cell cannot split a table's columns.
    """
    return _CONTROL.sub("\ufffd", " ".join(text.split())).replace("|", "\u00a6")


def terminal_block(text: str) -> str:
    """Untrusted lines for a terminal (an excerpt, a digest): newlines and tabs kept."""
    return _CONTROL.sub("\ufffd", text.replace("\r\n", "\n"))


def md_code(text: str) -> str:
    """Return ``text`` as an inline code span that its own backticks cannot end."""
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def anchor(artifact_id: str) -> str:
    """Return the in-page anchor name of an artifact."""
    return "artifact-" + re.sub(r"[^A-Za-z0-9._-]", "-", artifact_id)


def duration(ms: int | None) -> str:
    """Format a duration in milliseconds for people (``—`` when unknown)."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def tone(value: str) -> str:
    """Classify a status word as ``good``, ``bad``, ``warn`` or ``neutral``."""
    if value in _GOOD:
        return "good"
    if value in _BAD:
        return "bad"
    if value in _WARN:
        return "warn"
    return "neutral"


@dataclass(frozen=True, slots=True)
class Style:
    """How a renderer writes the parts of a table cell: untrusted text, an id, a code span, a
    status word and a link to an artifact of the report."""

    text: Callable[[str], str]
    ident: Callable[[str], str]
    code: Callable[[str], str]
    status: Callable[[str], str]
    link: Callable[[str], str]

    def links(self, ids: Sequence[str]) -> str:
        """Links to ``ids``, comma-separated; ``—`` for none."""
        return ", ".join(self.link(i) for i in ids) if ids else "—"


def criterion_cells(s: Style, data: RunReportData) -> list[list[str]]:
    """The rows of the acceptance-criteria table."""
    return [
        [
            s.ident(c.id),
            s.text(c.stage),
            s.text(c.requirement),
            s.status(c.status),
            s.links(c.evidence),
        ]
        for c in data.criteria
    ]


def claim_cells(s: Style, data: RunReportData) -> list[list[str]]:
    """The rows of the claim → evidence table."""
    return [
        [
            s.ident(c.claim_id),
            s.text(c.claim),
            s.status(c.status),
            s.text(c.basis),
            s.text(", ".join(c.criteria)) or "—",
            s.links(c.evidence),
            s.link(c.source),
        ]
        for c in data.claims
    ]


def verification_cells(s: Style, data: RunReportData) -> list[list[str]]:
    """The rows of the verification table."""
    return [
        [
            s.ident(v.requirement_id),
            s.ident(v.capability),
            "yes" if v.required else "no",
            s.status(v.status),
            s.links(v.evidence),
            s.text(v.description),
        ]
        for v in data.verifications
    ]


def permission_cells(s: Style, data: RunReportData) -> list[list[str]]:
    """The rows of the permission-decisions table."""
    return [
        [
            str(p.sequence),
            s.status(p.decision),
            s.ident(p.capability),
            s.code(p.scope) if p.scope else "—",
            s.text(p.deciding_layer),
            s.text(p.reason),
            "—" if p.artifact_id is None else s.link(p.artifact_id),
        ]
        for p in data.permissions
    ]
