"""The Markdown rendering of a run report: pure, deterministic, every untrusted text escaped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from telic.controller import human_time, phase_label, status_label
from telic.reports._format import (
    Style,
    anchor,
    claim_cells,
    criterion_cells,
    duration,
    md,
    md_code,
    permission_cells,
    terminal_block,
    terminal_text,
    verification_cells,
)
from telic.reports._model import (
    ANSWER_SOURCES,
    CLAIMS,
    CLARIFICATIONS,
    CRITERIA,
    PACKETS,
    PERMISSIONS,
    SHELL_EXECUTE_NOTE,
    TIMELINE,
    VERIFICATIONS,
    EvidenceEntry,
    RunReportData,
    Table,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Style(Style):
    """How untrusted text, ids, links and emphasis are written: Markdown, or a terminal's text."""

    target: Callable[[str], str]
    strong: Callable[[str], str]
    note: Callable[[str], str]
    block: Callable[[str], str]


MARKDOWN: Final = _Style(
    text=md,
    ident=md,
    code=md_code,
    status=lambda word: f"**{md(word)}**",
    link=lambda artifact_id: f"[{md(artifact_id)}](#{anchor(artifact_id)})",
    target=lambda name: f'<a id="{name}"></a>',
    strong=lambda text: f"**{text}**",
    note=lambda text: f"_{text}_",
    block=lambda text: text,
)
"""GitHub-flavoured Markdown: every untrusted text escaped, in-page anchors and links."""
TERMINAL: Final = _Style(
    text=terminal_text,
    ident=terminal_text,
    code=terminal_text,
    status=terminal_text,
    link=terminal_text,
    target=lambda _: "",
    strong=lambda text: text,
    note=lambda text: text,
    block=terminal_block,
)
"""The same report for a terminal: no markup around words, no anchors, no control characters."""


def _table(
    s: _Style, header: Sequence[str], rows: Sequence[Sequence[str]], empty: str
) -> list[str]:
    if not rows:
        return [s.note(empty) if empty else "", ""]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or "—" for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _titled(
    s: _Style, table: Table, rows: Sequence[Sequence[str]], host_word: bool = False
) -> list[str]:
    note = [f"> {s.text(SHELL_EXECUTE_NOTE)}", ""] if host_word else []
    return [f"## {table.title}", "", *_table(s, table.columns, rows, table.empty), *note]


def _fence(text: str) -> str:
    longest = max((len(line) - len(line.lstrip("`")) for line in text.splitlines()), default=0)
    return "`" * max(3, longest + 1)


def _evidence(s: _Style, run_id: str, entry: EvidenceEntry) -> list[str]:
    out = [
        f"### {s.target(anchor(entry.artifact_id))}{s.code(entry.artifact_id)} "
        f"({s.text(entry.kind)}): {s.text(entry.summary)}",
        "",
    ]
    if entry.binary:
        return [*out, s.note(f"Binary content ({entry.total_chars} base64 characters)."), ""]
    if not entry.total_chars:
        return [*out, s.note("No content."), ""]
    fence = _fence(entry.excerpt)
    lang = "diff" if entry.kind == "diff" else "text"
    out += [f"{fence}{lang}", s.block(entry.excerpt), fence, ""]
    if entry.truncated:
        command = s.code(f"telic artifact {run_id} {entry.artifact_id}")
        out += [s.note(f"First lines of {entry.total_lines}; the whole text: {command}"), ""]
    return out


def render_markdown(data: RunReportData, *, terminal: bool = False) -> str:
    """Render ``data`` as a Markdown report (GitHub-flavoured tables, in-page anchors).

    ``terminal``: the same report written for a terminal, where Markdown is read as it is: no
    anchors, links or emphasis marks, no backslash escapes, and every control character of an
    untrusted text replaced (so no text can move the cursor or recolour the screen).
    """
    s = TERMINAL if terminal else MARKDOWN
    out = [f"# Run report {s.code(data.run_id)}", ""]
    request = (
        s.note("(the request message is missing)") if data.request is None else s.text(data.request)
    )
    out += [f"> {s.strong('Request:')} {request}", ""]
    if data.prior_run_id is not None:
        out += [f"Follows run {s.code(data.prior_run_id)}, whose Evidence it may cite.", ""]
    if data.followed_by:
        runs = ", ".join(s.code(r) for r in data.followed_by)
        out += [f"Followed by run {runs}.", ""]
    status = data.terminal_status or data.run_status
    out += _table(
        s,
        ["Mode", "Status", "Phase", "Version", "Started", "Updated"],
        [
            [
                s.text(data.mode),
                s.strong(s.text(status_label(status))),
                s.text(phase_label(data.phase)),
                str(data.version),
                human_time(data.created_at),
                human_time(data.updated_at),
            ]
        ],
        "",
    )
    integrity = data.integrity
    if integrity.ok:
        out += [f"Ledger integrity: verified ({integrity.records_checked} records).", ""]
    else:
        out += [
            f"{s.strong('Ledger integrity: FAILED')} — {s.text(integrity.problem or 'unknown')}",
            "",
        ]
    if data.summary:
        out += ["## Summary", "", s.text(data.summary), ""]

    out += _titled(
        s,
        TIMELINE,
        [
            [
                str(e.sequence),
                human_time(e.timestamp),
                s.text(phase_label(e.phase)),
                s.text(e.actor),
                s.text(e.event),
                "—"
                if e.artifact_id is None
                else f"{s.link(e.artifact_id)} ({s.text(e.artifact_type or '')})",
                s.text(e.outcome or ""),
                duration(e.duration_ms),
            ]
            for e in data.timeline
        ],
    )

    out += ["## Path through the state machine", ""]
    for index, step in enumerate(data.path, 1):
        how = "" if not step.label else f" — {s.text(step.label)}"
        out.append(f"{index}. {s.strong(s.text(phase_label(step.phase)))} ({step.kind}){how}")
    out.append("")

    if data.clarifications:
        out += _titled(
            s,
            CLARIFICATIONS,
            [
                [
                    s.link(c.request_id),
                    s.text(c.question),
                    "; ".join(
                        f"{s.code(cid)} {s.text(label)}: {s.text(consequence)}"
                        for cid, label, consequence in c.choices
                    ),
                    "—"
                    if c.answer_id is None
                    else f"{s.code(c.choice_id or '')} ({s.link(c.answer_id)})",
                    s.text(ANSWER_SOURCES[c.answered_by]),
                ]
                for c in data.clarifications
            ],
        )

    out += _titled(s, CRITERIA, criterion_cells(s, data))
    out += _titled(s, CLAIMS, claim_cells(s, data))

    out += ["## Evidence: the diff, the verification output, what was read", ""]
    for entry in data.evidence:
        out += _evidence(s, data.run_id, entry)
    if not data.evidence:
        out += [s.note("No evidence captured."), ""]

    host_word = any(v.host_attested for v in data.verifications)
    out += _titled(s, VERIFICATIONS, verification_cells(s, data), host_word)
    host_word = any(p.host_attested for p in data.permissions)
    out += _titled(s, PERMISSIONS, permission_cells(s, data), host_word)

    out += ["## Budgets", ""]
    out += _table(
        s,
        ["Budget", "Used", "Limit"],
        [[s.text(b.name), str(b.used), str(b.limit)] for b in data.budgets],
        "",
    )

    out += _titled(
        s,
        PACKETS,
        [
            [
                f"{s.code(p.packet_id)} ({s.link(p.artifact_id)})",
                s.text(p.cast_type),
                s.text(p.need_code),
                s.text(f"{p.outcome} / {p.verdict}"),
                str(p.total_tokens),
                s.text(
                    p.consumption if p.cite_kind in (None, "none") else f"cited ({p.cite_kind})"
                ),
            ]
            for p in data.packets
        ],
    )
    if data.digest:
        fence = _fence(data.digest)
        out += ["Digest:", "", f"{fence}text", s.block(data.digest), fence, ""]

    out += ["## Unresolved risks", ""]
    out += [f"- {s.text(r)}" for r in data.risks] or [s.note("None recorded.")]
    out += ["", "## Next actions", ""]
    out += [
        f"- {s.text(n.id)}: {s.text(n.description)}"
        + (" " + s.note("(needs authorization)") if n.requires_authorization else "")
        for n in data.next_actions
    ] or [s.note("None recorded.")]

    out += ["", "## Artifacts", ""]
    shown = {e.artifact_id for e in data.evidence}
    for a in data.artifacts:
        extra = f" — {s.text(a.summary)}" if a.summary else ""
        name = anchor(a.artifact_id) + ("-record" if a.artifact_id in shown else "")
        out.append(
            f"- {s.target(name)}{s.code(a.artifact_id)} "
            f"{s.text(a.type)} by {s.text(a.producer)} at {human_time(a.created_at)} "
            f"({a.size_bytes} bytes, {s.code(a.sha256)}){extra}"
        )
    if not data.artifacts:
        out.append(s.note("No artifacts."))

    p = data.provenance
    out += [
        "",
        "## Provenance",
        "",
        f"- Run: {s.code(p.run_id)}",
        f"- Ledger chain head: {s.code(p.chain_head or '(empty)')} (record {p.chain_length})",
        f"- Generator: {s.text(p.generator_name)} {s.text(p.generator_version)}",
        f"- Generated at: {human_time(p.generated_at)}",
        "",
    ]
    return "\n".join(out)
