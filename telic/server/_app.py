"""Assemble the MCP server: the tools, the ``telic_workflow`` prompt, the artifact schemas and
the per-run reports."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from pydantic import Field

from telic.server._config import schema_mode
from telic.server._prompt import workflow_message
from telic.server._schemas import (
    SCHEMA_TYPES,
    SCHEMA_URI_TEMPLATE,
    SchemaMode,
    SentSchemas,
    schema_text,
)
from telic.server._service import Service
from telic.server._tools import ServiceSource, build_tools

if TYPE_CHECKING:
    from telic.ledger import Ledger

__all__ = ["SERVER_NAME", "PromptMode", "assemble", "build_server", "has_reports", "reports_module"]

SERVER_NAME: Final = "telic"
PromptMode = Literal["report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix"]
"""``telic.protocol``'s ``Mode``, spelled out so the server starts without the protocol."""
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
    service: Service,
    *,
    version: str = "",
    ledger: Ledger | None = None,
    schemas: SchemaMode | None = None,
) -> MCPServer[Any]:
    """Return an MCP server whose tools, prompt and resources call ``service``.

    With ``ledger`` (and ``telic.reports`` installed) every run also has a Markdown report
    resource, ``telic://runs/{run_id}/report.md``. ``schemas`` is the schema mode (``once``:
    each MCP session gets each artifact schema in full once, then a reference to the resource
    ``telic://schemas/{artifact_type}``; ``full``: in full every time); ``None`` reads
    ``TELIC_SCHEMAS`` (default ``once``).
    """

    async def given_service() -> Service:
        return service

    async def given_ledger() -> Ledger:
        assert ledger is not None
        return ledger

    return assemble(
        given_service,
        version=version,
        ledger=None if ledger is None else given_ledger,
        schemas=schemas,
    )


def assemble(
    service: ServiceSource,
    *,
    version: str = "",
    ledger: Callable[[], Awaitable[Ledger]] | None = None,
    schemas: SchemaMode | None = None,
) -> MCPServer[Any]:
    """Return the server of ``build_server`` over a service (and ledger) that may still be opening.

    Listing needs neither: each tool awaits ``service()`` on its call.
    """
    mode = schema_mode() if schemas is None else schemas
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        version=version,
        instructions=_INSTRUCTIONS,
        tools=build_tools(service, SentSchemas(mode)),
        log_level="WARNING",
    )

    @server.resource(
        SCHEMA_URI_TEMPLATE,
        name="artifact_schema",
        description="The full JSON Schema of an artifact type a host may be asked to produce.",
        mime_type="application/schema+json",
    )
    async def artifact_schema(artifact_type: str) -> str:
        if artifact_type not in SCHEMA_TYPES:
            known = ", ".join(SCHEMA_TYPES)
            raise ResourceNotFoundError(
                f"no artifact schema for {artifact_type!r}; the known types are {known}"
            )
        await service()  # until the service is open, the protocol is loading in another thread
        return schema_text(artifact_type)

    @server.prompt(
        name="telic_workflow",
        description="How to drive a request through Telic, one typed artifact per phase.",
    )
    def telic_workflow(
        original_request: Annotated[
            str, Field(min_length=1, max_length=32_768, description="The user's request.")
        ],
        mode: Annotated[PromptMode, Field(description="The intent mode.")],
    ) -> str:
        return workflow_message(original_request, mode)

    @server.resource(
        "telic://digest",
        name="packet_digest_all",
        description="Packets across this repository's runs: unconsumed rate per cast type and "
        "need code, spend per verdict.",
        mime_type="text/plain",
    )
    async def packet_digest_all() -> str:
        from telic.casting import render_stats  # loaded with the service, not at start

        return render_stats(await (await service()).get_packet_stats())

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
            return str(await reports.render_report(await ledger(), run_id, "md"))

    return server
