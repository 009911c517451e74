"""Assemble the MCP server: the tools, the ``telic_workflow`` prompt and the per-run reports."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Annotated, Any, Final

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from telic.ledger import Ledger
from telic.protocol._types import Mode
from telic.server._prompt import workflow_message
from telic.server._service import Service
from telic.server._tools import build_tools

__all__ = ["SERVER_NAME", "build_server", "has_reports", "reports_module"]

SERVER_NAME: Final = "telic"
_INSTRUCTIONS: Final = (
    "Telic is a model-free workflow controller: start a run, ground context, then submit one "
    "typed artifact per phase exactly as telic_get_next_action says. Use the telic_workflow "
    "prompt for the full procedure."
)


def reports_module() -> Any | None:
    """Return ``telic.reports`` when that package is installed, else ``None``."""
    try:
        return importlib.import_module("telic.reports")
    except ImportError:
        return None


def has_reports() -> bool:
    """Whether ``telic.reports`` is installed, without importing it (it is slow to import)."""
    return importlib.util.find_spec("telic.reports") is not None


def build_server(
    service: Service, *, version: str = "", ledger: Ledger | None = None
) -> MCPServer[Any]:
    """Return an MCP server whose tools, prompt and resources call ``service``.

    With ``ledger`` (and ``telic.reports`` installed) every run also has a Markdown report
    resource, ``telic://runs/{run_id}/report.md``.
    """
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        version=version,
        instructions=_INSTRUCTIONS,
        tools=build_tools(service),
        log_level="WARNING",
    )

    @server.prompt(
        name="telic_workflow",
        description="How to drive a request through Telic, one typed artifact per phase.",
    )
    def telic_workflow(
        original_request: Annotated[
            str, Field(min_length=1, max_length=32_768, description="The user's request.")
        ],
        mode: Annotated[Mode, Field(description="The intent mode.")],
    ) -> str:
        return workflow_message(original_request, mode)

    if ledger is not None and has_reports():

        @server.resource(
            "telic://runs/{run_id}/report.md",
            name="run_report",
            description="The Markdown report of one run.",
            mime_type="text/markdown",
        )
        async def run_report(run_id: str) -> str:
            reports = reports_module()  # imported on the first read, not at server start
            assert reports is not None
            return str(await reports.render_report(ledger, run_id, "md"))

    return server
