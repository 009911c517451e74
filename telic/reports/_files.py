"""Reports as files: render a sealed report, write it, and check a stored one against the ledger.

These are what ``telic report RUN [--format md|html|text] [--out PATH]`` and the MCP resource
call.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import Literal, TypeAlias

import anyio

from telic.ledger import Ledger, utc_now
from telic.reports._artifact import describe_report, seal
from telic.reports._html import render_html
from telic.reports._load import load_run_report
from telic.reports._markdown import render_markdown
from telic.reports._model import RunReportData
from telic_packets import ReportArtifact

ReportFormat: TypeAlias = Literal["md", "html"]
"""The two report formats."""


def render(data: RunReportData, fmt: ReportFormat) -> str:
    """Render ``data`` in ``fmt`` and seal it (the form every written report takes)."""
    return seal(render_markdown(data) if fmt == "md" else render_html(data), data)


async def render_report(
    ledger: Ledger, run_id: str, fmt: ReportFormat = "md", *, clock: Callable[[], str] = utc_now
) -> str:
    """Return the sealed report of ``run_id`` in ``fmt``. Raises ``NotFound``."""
    return render(await load_run_report(ledger, run_id, clock=clock), fmt)


async def render_terminal_report(
    ledger: Ledger, run_id: str, *, clock: Callable[[], str] = utc_now
) -> str:
    """Return the report of ``run_id`` written for a terminal (unsealed: it is not a file).

    Raises ``NotFound``.
    """
    return render_markdown(await load_run_report(ledger, run_id, clock=clock), terminal=True)


async def write_report(
    ledger: Ledger,
    run_id: str,
    fmt: ReportFormat,
    out_path: str | PathLike[str],
    *,
    clock: Callable[[], str] = utc_now,
) -> ReportArtifact:
    """Write the sealed report of ``run_id`` to ``out_path`` and return its descriptor.

    The file is written next to its final name and renamed over it, so a reader never sees
    half a report. Raises ``NotFound`` when the ledger has no such run.
    """
    data = await load_run_report(ledger, run_id, clock=clock)
    text = render(data, fmt)
    target = anyio.Path(out_path)
    partial = target.with_name(f".{target.name}.partial")
    await partial.write_text(text, encoding="utf-8", newline="")
    await partial.replace(target)
    return describe_report(data, text, path=target.name)


async def check_report(
    ledger: Ledger,
    run_id: str,
    path: str | PathLike[str],
    *,
    clock: Callable[[], str] = utc_now,
) -> tuple[ReportArtifact, str | None]:
    """Describe the report stored at ``path`` against the ledger now; return it with its text.

    A missing file is ``absent``; an unreadable or undecodable one is ``invalid``.
    """
    data = await load_run_report(ledger, run_id, clock=clock)
    text = await read_stored(path)
    return describe_report(data, text, path=anyio.Path(path).name), text


async def read_stored(path: str | PathLike[str]) -> str | None:
    """Return a stored report's exact text; ``None`` when missing, ``""`` when unreadable."""
    try:
        raw = await anyio.Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # present on disk but unreadable: it cannot verify
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
