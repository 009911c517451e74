"""The self-contained HTML rendering of a run report, and of the index of runs.

One page, inline CSS, an inline SVG, no scripts and no external assets; a Content-Security-Policy
meta tag forbids both, so a hostile string that slipped past escaping still could not run. Every
text that came from the ledger goes through ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Final, get_args
from urllib.parse import quote

from telic.controller import event_summary, human_time, phase_label, status_label
from telic.ledger import TraceRecord
from telic.protocol import MODES, InternalRunStatus
from telic.reports._format import (
    Style,
    anchor,
    claim_cells,
    criterion_cells,
    duration,
    permission_cells,
    tone,
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
    IndexEntry,
    RunReportData,
    Table,
)
from telic.reports._svg import path_svg

STATUS_FILTERS: Final[tuple[str, ...]] = get_args(InternalRunStatus)
"""The run statuses the index can filter by (as the ledger stores them)."""

STATUS_MARKER: Final = "<!-- telic-report-status -->"
"""Where a viewer inserts the report's status banner."""

_BUDGETS: Final = Table("budgets", "Budgets", ("Budget", "Used", "Limit", ""), "No budgets.")
_STEPS: Final = Table(
    "steps",
    "Steps (replay)",
    ("Seq", "Phase", "Artifact", "Type", "Digest", "Escalation"),
    "No stored artifacts.",
)

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS: Final = """
:root{color-scheme:light;--ink:#0f172a;--muted:#475569;--line:#cbd5e1;--bg:#f8fafc}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);
background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:24px 28px 48px}
header.top{background:#fff;border:1px solid var(--line);border-radius:10px;padding:16px 20px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid var(--line);padding-bottom:4px}
blockquote.request{margin:8px 0 12px;padding:8px 12px;border-left:4px solid #64748b;
background:#f1f5f9;white-space:pre-wrap;overflow-wrap:anywhere}
dl.facts{display:flex;flex-wrap:wrap;gap:8px 28px;margin:0}
dl.facts div{min-width:110px}dt{font-size:12px;color:var(--muted)}dd{margin:0;font-weight:600}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top;
overflow-wrap:break-word}
td.num,td.when,th{white-space:nowrap}
th{background:#f1f5f9;font-weight:600}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.pill{display:inline-block;padding:0 8px;border-radius:999px;font-weight:600;font-size:12px;
border:1px solid transparent}
.good{background:#dcfce7;color:#166534;border-color:#86efac}
.bad{background:#fee2e2;color:#991b1b;border-color:#fca5a5}
.warn{background:#fef3c7;color:#92400e;border-color:#fcd34d}
.neutral{background:#e2e8f0;color:#334155;border-color:#cbd5e1}
.empty{color:var(--muted);font-style:italic}
.banner{margin:12px 0;padding:10px 14px;border-radius:8px;border:1px solid;font-weight:600}
.banner.present{background:#f0fdf4;border-color:#86efac;color:#166534}
.banner.stale{background:#fffbeb;border-color:#fcd34d;color:#92400e}
.banner.invalid,.banner.integrity{background:#fef2f2;border-color:#fca5a5;color:#991b1b}
.frame{margin:48px auto;max-width:560px;background:#fff;border:2px dashed #94a3b8;
border-radius:12px;padding:32px;text-align:center}
.frame .state{font-size:20px;font-weight:700}
.svgwrap{background:#fff;border:1px solid var(--line);border-radius:10px;padding:8px;
overflow-x:auto}
pre.digest{background:#0f172a;color:#e2e8f0;padding:12px;border-radius:8px;white-space:pre-wrap;
overflow-wrap:anywhere}
ul.artifacts{list-style:none;padding:0}ul.artifacts li{background:#fff;border:1px solid var(--line);
border-radius:6px;padding:6px 10px;margin:4px 0}
ul.artifacts li:target{outline:3px solid #f59e0b}
footer{margin-top:32px;color:var(--muted);font-size:12px}
.evidence{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 12px;
margin:10px 0}
.evidence:target{outline:3px solid #f59e0b}
.evidence h3{font-size:14px;margin:0 0 6px}
pre.content{background:#0f172a;color:#e2e8f0;padding:10px 12px;border-radius:6px;margin:6px 0;
overflow-x:auto;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.content .add{color:#86efac}pre.content .del{color:#fca5a5}pre.content .hunk{color:#93c5fd}
details summary{cursor:pointer;color:#1d4ed8}
.nowrap{white-space:nowrap}
.muted{color:var(--muted)}
form.filters{display:flex;gap:8px;margin:8px 0 0;align-items:center}
form.filters select,form.filters button{font:inherit;padding:2px 6px}
"""


def page(title: str, body: str) -> str:
    """Wrap ``body`` in a complete, self-contained HTML document titled ``title``."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="telic-reports">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def _pill(value: str) -> str:
    return f'<span class="pill {tone(value)}">{escape(value)}</span>'


def _link(artifact_id: str) -> str:
    return f'<a href="#{anchor(artifact_id)}"><code>{escape(artifact_id)}</code></a>'


def _code(text: str) -> str:
    return f"<code>{escape(text)}</code>"


_CELLS: Final = Style(escape, _code, _code, _pill, _link)
"""Table cells as HTML: every text escaped, ids and scopes as code, statuses as pills."""


def _table(section: str, header: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> str:
    if not rows:
        return f'<p class="empty" id="{section}-empty">{escape(empty)}</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<table id="{section}-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _section(section: str, title: str, content: str) -> str:
    return f'<section id="{section}"><h2>{escape(title)}</h2>\n{content}\n</section>\n'


def _list_section(
    section: str, title: str, items: str, empty: str = "None recorded.", ul: str = "<ul>"
) -> str:
    """A section holding one list of ``items`` (``<li>`` elements), or ``empty`` without any."""
    return _section(
        section, title, f"{ul}{items}</ul>" if items else f'<p class="empty">{empty}</p>'
    )


def _table_section(
    table: Table, rows: Sequence[Sequence[str]], after: str = "", *, host_word: bool = False
) -> str:
    """A section holding one table (ids after its section), then ``after``; with ``host_word``,
    the note that a ``shell.execute`` result rests on the host's word."""
    content = _table(table.section, table.columns, rows, table.empty) + after
    if host_word:
        note = escape(SHELL_EXECUTE_NOTE)
        content += f'\n<p class="note" id="{table.section}-host-word">{note}</p>'
    return _section(table.section, table.title, content)


def _named(name: str, label: str, pill: bool = False) -> str:
    """A label for people, with the protocol name on hover."""
    if pill:
        return f'<span class="pill {tone(name)}" title="{escape(name)}">{escape(label)}</span>'
    return f'<span title="{escape(name)}">{escape(label)}</span>'


def _when(timestamp: str) -> str:
    shown = escape(human_time(timestamp))
    return f'<time class="nowrap" datetime="{escape(timestamp)}">{shown}</time>'


def _diff_lines(text: str) -> str:
    out = []
    for line in text.split("\n"):
        shown = escape(line)
        if line.startswith(("+++", "---")):
            out.append(f"<b>{shown}</b>")
        elif line.startswith("+"):
            out.append(f'<span class="add">{shown}</span>')
        elif line.startswith("-"):
            out.append(f'<span class="del">{shown}</span>')
        elif line.startswith("@@"):
            out.append(f'<span class="hunk">{shown}</span>')
        else:
            out.append(shown)
    return "\n".join(out)


def _content(entry: EvidenceEntry, text: str) -> str:
    inner = _diff_lines(text) if entry.kind == "diff" else escape(text)
    return f'<pre class="content">{inner}</pre>'


def _evidence_block(run_id: str, entry: EvidenceEntry) -> str:
    head = (
        f"<h3><code>{escape(entry.artifact_id)}</code> {_pill(entry.kind)} "
        f"{escape(entry.summary)}</h3>"
    )
    if entry.binary:
        body = f'<p class="empty">Binary content ({entry.total_chars} base64 characters).</p>'
    elif not entry.total_chars:
        body = '<p class="empty">No content.</p>'
    else:
        body = _content(entry, entry.excerpt)
        if entry.truncated and entry.full is not None:
            body += (
                f"<details><summary>Show all {entry.total_lines} lines "
                f"({entry.total_chars} characters)</summary>{_content(entry, entry.full)}"
                "</details>"
            )
        elif entry.truncated:
            body += (
                f'<p class="empty">First lines of {entry.total_lines}; the whole text: '
                f"<code>telic artifact {escape(run_id)} {escape(entry.artifact_id)}</code></p>"
            )
    return f'<div class="evidence" id="{anchor(entry.artifact_id)}">{head}{body}</div>'


def _run_link(run_id: str, rel: str) -> str:
    """A link to another run's report, beside this one (``/runs/<id>`` when served)."""
    href = escape(quote(run_id, safe=""))
    return f'<a class="{rel}" href="{href}"><code>{escape(run_id)}</code></a>'


def _header(data: RunReportData) -> str:
    status = data.terminal_status or data.run_status
    request = (
        '<p class="empty">The request message is missing.</p>'
        if data.request is None
        else f'<blockquote class="request" id="request">{escape(data.request)}</blockquote>'
    )
    facts = [
        ("Mode", f"<code>{escape(data.mode)}</code>"),
        (
            "Status",
            f'<span id="terminal-status">{_named(status, status_label(status), True)}</span>',
        ),
        ("Phase", _named(data.phase, phase_label(data.phase))),
        ("Version", str(data.version)),
        ("Started", _when(data.created_at)),
        ("Updated", _when(data.updated_at)),
    ]
    if data.prior_run_id is not None:
        facts.append(("Follows", _run_link(data.prior_run_id, "prior-run")))
    if data.followed_by:
        links = ", ".join(_run_link(r, "followed-by") for r in data.followed_by)
        facts.append(("Followed by", links))
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
    integrity = data.integrity
    check = (
        f'<p id="integrity">Ledger integrity: {_pill("verified")} '
        f"({integrity.records_checked} records).</p>"
        if integrity.ok
        else f'<p class="banner integrity" id="integrity">Ledger integrity FAILED: '
        f"{escape(integrity.problem or 'unknown')}</p>"
    )
    summary = "" if not data.summary else f'<p id="summary">{escape(data.summary)}</p>'
    return (
        f'<header class="top"><h1>Run report <code>{escape(data.run_id)}</code></h1>\n'
        f'{request}\n<dl class="facts">{dl}</dl>\n{check}\n{summary}</header>\n{STATUS_MARKER}\n'
    )


def render_html(data: RunReportData) -> str:
    """Render ``data`` as one self-contained HTML page (no scripts, no external assets)."""
    parts = [_header(data)]
    timeline = [
        [
            str(e.sequence),
            _when(e.timestamp),
            _named(e.phase, phase_label(e.phase)),
            escape(e.actor),
            escape(e.event),
            "—"
            if e.artifact_id is None
            else f"{_link(e.artifact_id)} {escape(e.artifact_type or '')}",
            "" if e.outcome is None else _pill(e.outcome),
            f'<span class="nowrap">{duration(e.duration_ms)}</span>',
        ]
        for e in data.timeline
    ]
    parts.append(_table_section(TIMELINE, timeline))
    parts.append(
        _section(
            "path",
            "Path through the state machine",
            f'<div class="svgwrap">{path_svg(data.path)}</div>',
        )
    )
    if data.clarifications:
        asked = [
            [
                _link(c.request_id),
                escape(c.question),
                "<br>".join(
                    f"<code>{escape(cid)}</code> {escape(label)}: {escape(consequence)}"
                    for cid, label, consequence in c.choices
                ),
                "—"
                if c.answer_id is None
                else f"<code>{escape(c.choice_id or '')}</code> ({_link(c.answer_id)})",
                f'<span class="answered-{c.answered_by}">'
                f"{escape(ANSWER_SOURCES[c.answered_by])}</span>",
            ]
            for c in data.clarifications
        ]
        parts.append(_table_section(CLARIFICATIONS, asked))
    parts.append(_table_section(CRITERIA, criterion_cells(_CELLS, data)))
    parts.append(_table_section(CLAIMS, claim_cells(_CELLS, data)))
    evidence = "".join(_evidence_block(data.run_id, e) for e in data.evidence)
    parts.append(
        _section(
            "evidence",
            "Evidence: the diff, the verification output, what was read",
            evidence or '<p class="empty" id="evidence-empty">No evidence captured.</p>',
        )
    )
    host_word = any(v.host_attested for v in data.verifications)
    parts.append(
        _table_section(VERIFICATIONS, verification_cells(_CELLS, data), host_word=host_word)
    )
    host_word = any(p.host_attested for p in data.permissions)
    parts.append(_table_section(PERMISSIONS, permission_cells(_CELLS, data), host_word=host_word))
    budgets = [
        [
            escape(b.name),
            str(b.used),
            str(b.limit),
            f'<meter min="0" max="{max(b.limit, 1)}" value="{min(b.used, max(b.limit, 1))}">'
            f"{b.used}/{b.limit}</meter>",
        ]
        for b in data.budgets
    ]
    parts.append(_table_section(_BUDGETS, budgets))
    packets = [
        [
            f"<code>{escape(p.packet_id)}</code> ({_link(p.artifact_id)})",
            escape(p.cast_type),
            escape(p.need_code),
            f"{escape(p.outcome)} / {_pill(p.verdict) if p.verdict else '—'}",
            str(p.total_tokens),
            _pill(p.consumption)
            + ("" if p.cite_kind in (None, "none") else f" by {escape(p.cite_kind or '')}"),
        ]
        for p in data.packets
    ]
    digest = (
        ""
        if not data.digest
        else f'<h3>Digest</h3><pre class="digest" id="digest">{escape(data.digest)}</pre>'
    )
    parts.append(_table_section(PACKETS, packets, digest))
    risks = "".join(f"<li>{escape(r)}</li>" for r in data.risks)
    parts.append(_list_section("risks", "Unresolved risks", risks))
    steps = "".join(
        f"<li><code>{escape(n.id)}</code> {escape(n.description)}"
        + (" " + _pill("needs authorization") if n.requires_authorization else "")
        + "</li>"
        for n in data.next_actions
    )
    parts.append(_list_section("next-actions", "Next actions", steps))
    parts.append(_steps_section(data))
    shown = {e.artifact_id for e in data.evidence}
    items = "".join(
        f'<li id="{anchor(a.artifact_id)}{"-record" if a.artifact_id in shown else ""}">'
        f"<code>{escape(a.artifact_id)}</code> "
        f"<strong>{escape(a.type)}</strong> by {escape(a.producer)} at "
        f"{_when(a.created_at)} · {a.size_bytes} bytes · "
        f"<code>{escape(a.sha256)}</code>"
        + (f"<br>{escape(a.summary)}" if a.summary else "")
        + "</li>"
        for a in data.artifacts
    )
    parts.append(_list_section("artifacts", "Artifacts", items, "None.", '<ul class="artifacts">'))
    p = data.provenance
    facts = [
        ("Run", f"<code>{escape(p.run_id)}</code>"),
        ("Ledger chain head", f'<code id="chain-head">{escape(p.chain_head or "(empty)")}</code>'),
        ("Records covered", str(p.chain_length)),
        ("Generator", f"{escape(p.generator_name)} {escape(p.generator_version)}"),
        ("Generated at", _when(p.generated_at)),
    ]
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    parts.append(_section("provenance", "Provenance", f"<table>{rows}</table>"))
    body = "<main>\n" + "".join(parts) + "</main>"
    return page(f"Run report {data.run_id}", body)


def _steps_section(data: RunReportData) -> str:
    """The run replayed: each stored artifact where it entered the trace, and its digest."""
    rows = [
        [
            str(step.sequence),
            f"<code>{escape(step.phase)}</code>",
            _link(step.artifact_ref.rsplit("/", 1)[-1]),
            escape(step.artifact_type),
            _pill(step.digest_status),
            escape(step.escalation_reason or ""),
        ]
        for step in data.steps
    ]
    notes = "".join(f"<li>{escape(h)}</li>" for h in data.highlights)
    return _table_section(_STEPS, rows, f'<ul id="steps-highlights">{notes}</ul>' if notes else "")


def _options(
    name: str, values: Sequence[str], chosen: str | None, labels: Callable[[str], str]
) -> str:
    options = [f'<option value=""{"" if chosen else " selected"}>any {name}</option>']
    options += [
        f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>'
        f"{escape(labels(v))}</option>"
        for v in values
    ]
    return f'<select name="{name}" id="filter-{name}">{"".join(options)}</select>'


def render_index(
    runs: Sequence[IndexEntry],
    *,
    base: str = "/runs",
    status: str | None = None,
    mode: str | None = None,
    total: int | None = None,
) -> str:
    """Render the read-only index of ``runs``, each linking to ``<base>/<run id>``.

    ``status`` and ``mode`` are the filters already applied (shown selected in the form);
    ``total`` is how many runs were looked at before filtering.
    """
    rows = [
        [
            f'<a href="{escape(base.rstrip("/") + "/" + quote(r.run_id, safe=""))}">'
            + (escape(r.request) if r.request else '<span class="empty">(no request)</span>')
            + "</a>"
            + f'<br><code class="muted">{escape(r.run_id)}</code>'
            + (
                ""
                if r.prior_run_id is None
                else f' <span class="muted">follows <code>{escape(r.prior_run_id)}</code></span>'
            ),
            f'<code class="nowrap">{escape(r.mode)}</code>',
            _named(r.status, status_label(r.status), True),
            _named(r.phase, phase_label(r.phase)),
            _when(r.updated_at),
            f"<code>{escape(r.repository)}</code>",
        ]
        for r in runs
    ]
    empty = "No runs match these filters." if (status or mode) else "No runs yet."
    table = _table(
        "runs", ["Request", "Mode", "Status", "Phase", "Updated", "Repository"], rows, empty
    )
    form = (
        f'<form method="get" action="{escape(base.rstrip("/") or "/")}" class="filters">'
        + _options("status", STATUS_FILTERS, status, status_label)
        + _options("mode", MODES, mode, lambda m: m)
        + '<button type="submit">Filter</button></form>'
    )
    seen = "" if total is None else f'<p class="muted">{len(runs)} shown of the newest {total}.</p>'
    body = f'<main>\n<header class="top"><h1>Runs</h1>{form}{seen}</header>\n{table}\n</main>'
    return page("Telic runs", body)


def render_trace(events: Sequence[TraceRecord]) -> str:
    """The run's whole trace as a section, for the web page of a run (outside the report)."""
    rows = [
        [
            str(e.sequence),
            _when(e.timestamp),
            escape(e.actor),
            _named(e.phase, phase_label(e.phase)),
            f"<code>{escape(e.event_type)}</code>",
            escape(event_summary(e.event_type, e.decision_summary, e.output_refs)),
        ]
        for e in events
    ]
    table = _table(
        "trace", ["#", "Time", "Actor", "Phase", "Event", "What happened"], rows, "No events."
    )
    return f'<main class="trace">{_section("trace", "Trace", table)}</main>'
