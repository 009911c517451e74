"""Pages of the report mirror: its index, and one report framed by its state and provenance.

Pure renderers over ``MirrorEntry``. A report's text is the harness's (untrusted): HTML shows it
escaped, as preformatted text; Markdown passes it through under a provenance header. Every
state has its own explicit frame; nothing is invented for an absent or invalid report.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final, Literal
from urllib.parse import quote

from telic.controller import human_time
from telic.reports._format import md, md_code, tone
from telic.reports._html import page
from telic.reports._mirror import MirrorEntry

_TONE: Final = {"present": "good", "stale": "warn", "invalid": "bad", "absent": "neutral"}


def _state(entry: MirrorEntry) -> str:
    artifact = entry.artifact
    if artifact.status == "present":
        return "present: the file matches its digest"
    if artifact.status == "stale":
        return artifact.banner()
    if artifact.status == "absent":
        return f"{artifact.banner()}: {entry.problem}" if entry.problem else artifact.banner()
    return f"invalid: {entry.problem}" if entry.problem else artifact.banner()


def _facts(entry: MirrorEntry) -> list[tuple[str, str]]:
    a = entry.artifact
    return [
        ("Kind", a.kind),
        ("Campaign", entry.campaign or "(unknown)"),
        ("Spine prefix", entry.spine_prefix or "(unknown)"),
        ("Covers", a.covers),
        ("Generator", f"{a.generator.name} {a.generator.version}"),
        ("Generated at", human_time(a.generated_at) if a.generated_at else "—"),
        ("File", a.path or "—"),
        ("sha256", a.sha256 or "—"),
        ("Sources", ", ".join(a.source_refs) or "—"),
    ]


def _pill(status: str) -> str:
    return f'<span class="pill {_TONE.get(status, tone(status))}">{escape(status)}</span>'


def _when(entry: MirrorEntry) -> str:
    generated = entry.artifact.generated_at
    return escape(human_time(generated)) if generated else "—"


def render_mirror_index(entries: Sequence[MirrorEntry], *, base: str = "/reports") -> str:
    """The mirror's reports, each linking to ``<base>/<name>``."""
    rows = "".join(
        "<tr>"
        f'<td><a href="{escape(base.rstrip("/") + "/" + quote(e.name, safe=""))}">'
        f"<code>{escape(e.name)}</code></a></td>"
        f"<td><code>{escape(e.artifact.kind)}</code></td>"
        f"<td>{_pill(e.artifact.status)}</td>"
        f"<td>{escape(e.campaign or '—')}</td><td><code>{escape(e.spine_prefix or '—')}</code></td>"
        f"<td>{_when(e)}</td>"
        "</tr>"
        for e in entries
    )
    table = (
        '<table id="mirror-table"><thead><tr><th>Report</th><th>Kind</th><th>State</th>'
        "<th>Campaign</th><th>Spine prefix</th><th>Generated</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
    body = (
        '<main>\n<header class="top"><h1>Campaign reports</h1>'
        '<p class="muted">Read-only, from the report mirror. Telic never writes it.</p>'
        f"</header>\n{table}\n</main>"
    )
    return page("Telic campaign reports", body)


def _html(entry: MirrorEntry) -> str:
    status = entry.artifact.status
    facts = "".join(
        f"<div><dt>{escape(k)}</dt><dd><code>{escape(v)}</code></dd></div>"
        for k, v in _facts(entry)
    )
    banner = (
        f'<p class="banner {status if status != "absent" else "stale"}" id="report-status" '
        f'data-report-status="{status}">{escape(_state(entry))}</p>'
    )
    if entry.text is not None and status in ("present", "stale"):
        content = f'<pre class="content" id="report-text">{escape(entry.text)}</pre>'
    else:
        state = "Not generated yet" if status == "absent" else "Not shown: it does not verify"
        content = (
            f'<div class="frame" id="report-{status}"><p class="state">{escape(state)}</p>'
            f"<p>{escape(entry.problem or '')}</p></div>"
        )
    body = (
        f'<main>\n<header class="top"><h1>{escape(entry.artifact.kind)} '
        f"<code>{escape(entry.name)}</code> {_pill(status)}</h1>"
        f'<dl class="facts" id="provenance">{facts}</dl></header>\n{banner}\n{content}\n</main>'
    )
    return page(f"{entry.artifact.kind} {entry.name} ({status})", body)


def _markdown(entry: MirrorEntry) -> str:
    out = [f"# {md(entry.artifact.kind)} {md_code(entry.name)}", ""]
    out += [f"> **{md(_state(entry))}**", ""]
    out += [f"- {k}: {md_code(v)}" for k, v in _facts(entry)]
    out.append("")
    if entry.text is not None and entry.artifact.status in ("present", "stale"):
        out += ["---", "", entry.text.rstrip("\n"), ""]
    else:
        out += [
            "_Not generated yet._"
            if entry.artifact.status == "absent"
            else "_Not shown: it does not verify._",
            "",
        ]
    return "\n".join(out)


def render_mirror_report(entry: MirrorEntry, fmt: Literal["html", "md"] = "html") -> str:
    """One mirrored report, framed by its state, with its provenance on the page."""
    return _html(entry) if fmt == "html" else _markdown(entry)
