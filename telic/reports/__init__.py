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

from telic.reports._app import LedgerProvider as LedgerProvider
from telic.reports._app import mirror_app as mirror_app
from telic.reports._app import reports_app as reports_app
from telic.reports._app import root_redirect as root_redirect
from telic.reports._artifact import REPORT_KIND as REPORT_KIND
from telic.reports._artifact import describe_report as describe_report
from telic.reports._files import ReportFormat as ReportFormat
from telic.reports._files import check_report as check_report
from telic.reports._files import render as render
from telic.reports._files import render_report as render_report
from telic.reports._files import render_terminal_report as render_terminal_report
from telic.reports._files import write_report as write_report
from telic.reports._html import render_html as render_html
from telic.reports._html import render_index as render_index
from telic.reports._html import render_trace as render_trace
from telic.reports._load import generator_version as generator_version
from telic.reports._load import load_index as load_index
from telic.reports._load import load_run_report as load_run_report
from telic.reports._markdown import render_markdown as render_markdown
from telic.reports._mirror import EXPECTED_KINDS as EXPECTED_KINDS
from telic.reports._mirror import MirrorEntry as MirrorEntry
from telic.reports._mirror import read_mirror as read_mirror
from telic.reports._mirror_view import render_mirror_index as render_mirror_index
from telic.reports._mirror_view import render_mirror_report as render_mirror_report
from telic.reports._model import GENERATOR_NAME as GENERATOR_NAME
from telic.reports._model import ArtifactEntry as ArtifactEntry
from telic.reports._model import BudgetRow as BudgetRow
from telic.reports._model import ClaimRow as ClaimRow
from telic.reports._model import CriterionRow as CriterionRow
from telic.reports._model import EvidenceEntry as EvidenceEntry
from telic.reports._model import IndexEntry as IndexEntry
from telic.reports._model import Integrity as Integrity
from telic.reports._model import NextStep as NextStep
from telic.reports._model import PacketRow as PacketRow
from telic.reports._model import PathStep as PathStep
from telic.reports._model import PermissionRow as PermissionRow
from telic.reports._model import Provenance as Provenance
from telic.reports._model import RunReportData as RunReportData
from telic.reports._model import TimelineEntry as TimelineEntry
from telic.reports._model import VerificationRow as VerificationRow
from telic.reports._project import deciding_layer as deciding_layer
from telic.reports._viewer import status_line as status_line
from telic.reports._viewer import view_report as view_report

__all__ = [
    "EXPECTED_KINDS",
    "GENERATOR_NAME",
    "REPORT_KIND",
    "ArtifactEntry",
    "BudgetRow",
    "ClaimRow",
    "CriterionRow",
    "EvidenceEntry",
    "IndexEntry",
    "Integrity",
    "LedgerProvider",
    "MirrorEntry",
    "NextStep",
    "PacketRow",
    "PathStep",
    "PermissionRow",
    "Provenance",
    "ReportFormat",
    "RunReportData",
    "TimelineEntry",
    "VerificationRow",
    "check_report",
    "deciding_layer",
    "describe_report",
    "generator_version",
    "load_index",
    "load_run_report",
    "mirror_app",
    "read_mirror",
    "render",
    "render_html",
    "render_index",
    "render_markdown",
    "render_mirror_index",
    "render_mirror_report",
    "render_report",
    "render_terminal_report",
    "render_trace",
    "reports_app",
    "root_redirect",
    "status_line",
    "view_report",
    "write_report",
]
