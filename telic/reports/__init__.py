"""Run reports people want to read: Markdown and a self-contained HTML page, served read-only.

``load_run_report`` is the only function that reads the ledger: it gathers one run's records into
a frozen ``RunReportData``. The renderers are pure functions of that data: ``render_markdown``,
``render_html`` (one page, inline CSS and SVG, no scripts, every untrusted text escaped) and
``render_index`` for the list of runs. A written report ends with a seal line; ``describe_report``
turns a stored report into a ``telic_packets.ReportArtifact`` (``present``, ``absent``, ``stale``
with its reason, ``invalid``) and ``view_report`` frames it so that each state is explicit.

For callers: ``write_report`` / ``render_report`` back ``telic report`` and the MCP resource;
``reports_app`` is the Starlette application for ``telic serve --http`` (``/runs``,
``/runs/<id>``, ``?format=md``, bearer token). Errors: ``NotFound`` for an unknown run.
"""

from __future__ import annotations

from telic.reports._app import (
    LedgerProvider as LedgerProvider,
    mirror_app as mirror_app,
    reports_app as reports_app,
    root_redirect as root_redirect,
)
from telic.reports._artifact import (
    REPORT_KIND as REPORT_KIND,
    describe_report as describe_report,
)
from telic.reports._files import (
    ReportFormat as ReportFormat,
    check_report as check_report,
    render as render,
    render_report as render_report,
    render_terminal_report as render_terminal_report,
    write_report as write_report,
)
from telic.reports._html import (
    render_html as render_html,
    render_index as render_index,
    render_trace as render_trace,
)
from telic.reports._load import (
    generator_version as generator_version,
    load_index as load_index,
    load_run_report as load_run_report,
)
from telic.reports._markdown import render_markdown as render_markdown
from telic.reports._mirror import (
    EXPECTED_KINDS as EXPECTED_KINDS,
    MirrorEntry as MirrorEntry,
    read_mirror as read_mirror,
)
from telic.reports._mirror_view import (
    render_mirror_index as render_mirror_index,
    render_mirror_report as render_mirror_report,
)
from telic.reports._model import (
    ANSWER_SOURCES as ANSWER_SOURCES,
    GENERATOR_NAME as GENERATOR_NAME,
    ArtifactEntry as ArtifactEntry,
    BudgetRow as BudgetRow,
    ClaimRow as ClaimRow,
    ClarificationRow as ClarificationRow,
    CriterionRow as CriterionRow,
    EvidenceEntry as EvidenceEntry,
    IndexEntry as IndexEntry,
    Integrity as Integrity,
    NextStep as NextStep,
    PacketRow as PacketRow,
    PathStep as PathStep,
    PermissionRow as PermissionRow,
    Provenance as Provenance,
    RunReportData as RunReportData,
    TimelineEntry as TimelineEntry,
    VerificationRow as VerificationRow,
)
from telic.reports._project import deciding_layer as deciding_layer
from telic.reports._viewer import status_line as status_line, view_report as view_report

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
