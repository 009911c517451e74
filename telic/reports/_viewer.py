"""The viewer: a stored report framed by its ``ReportArtifact`` status, each state explicit.

``present`` shows the report under a green line saying what it covers; ``stale`` shows it under
the reason it is stale; ``invalid`` shows no content (it does not verify) and says so; ``absent``
shows the fixed "not generated yet" frame. The frames are fixed text: nothing is invented.
"""

from __future__ import annotations

from html import escape
from typing import Final, Literal

from telic.controller import human_time
from telic.reports._artifact import unseal
from telic.reports._format import md, md_code
from telic.reports._html import STATUS_MARKER, page
from telic_packets import ReportArtifact

_ABSENT_DETAIL: Final = "No report has been generated for this run."
_INVALID_DETAIL: Final = "Its content is not shown because it cannot be trusted."


def status_line(artifact: ReportArtifact) -> str:
    """Return the one-line, plain-text statement of a report's status."""
    if artifact.status == "present":
        when = human_time(artifact.generated_at) if artifact.generated_at else "an unknown time"
        return f"present: generated at {when}, covers the ledger's latest record"
    return artifact.banner()


def _html(artifact: ReportArtifact, text: str | None) -> str:
    line = escape(status_line(artifact))
    covers = escape(artifact.covers)
    if artifact.status in ("absent", "invalid") or text is None:
        detail = _ABSENT_DETAIL if artifact.status == "absent" else _INVALID_DETAIL
        where = "" if artifact.path is None else f"<p><code>{escape(artifact.path)}</code></p>"
        body = (
            f'<main><div class="frame" id="report-{artifact.status}" '
            f'data-report-status="{artifact.status}">'
            f"<p>Run report <code>{covers}</code></p>"
            f'<p class="state">{line}</p><p>{escape(detail)}</p>{where}</div></main>'
        )
        return page(f"Run report {artifact.covers} ({artifact.status})", body)
    content, _ = unseal(text)
    banner = (
        f'<p class="banner {artifact.status}" id="report-status" '
        f'data-report-status="{artifact.status}">Report {line}</p>'
    )
    if STATUS_MARKER in content:
        return content.replace(STATUS_MARKER, banner, 1)
    return content.replace("<main>", "<main>" + banner, 1)


def _markdown(artifact: ReportArtifact, text: str | None) -> str:
    line = f"> **Report {md(status_line(artifact))}**"
    if artifact.status in ("absent", "invalid") or text is None:
        detail = _ABSENT_DETAIL if artifact.status == "absent" else _INVALID_DETAIL
        where = "" if artifact.path is None else f"\n\n{md_code(artifact.path)}"
        return f"# Run report {md_code(artifact.covers)}\n\n{line}\n\n{detail}{where}\n"
    content, _ = unseal(text)
    return f"{line}\n\n{content}"


def view_report(
    artifact: ReportArtifact, text: str | None, fmt: Literal["html", "md"] = "html"
) -> str:
    """Render the viewer for a stored report ``text`` described by ``artifact``."""
    return _html(artifact, text) if fmt == "html" else _markdown(artifact, text)
