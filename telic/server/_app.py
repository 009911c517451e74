"""Assemble the MCP server on the SDK's low-level ``Server``: every handler is ours.

The tools (``_tools``), the ``telic_workflow`` prompt, the artifact schema and run
report resources, completions for their arguments, and the ``logging`` capability are the
handlers given to ``mcp.server.lowlevel.Server``, the SDK's documented way to own a server's
requests. A client mistake (an unknown tool, prompt or resource, a bad prompt argument) is a
JSON-RPC invalid-params error (-32602) with a one-line message, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from telic._errors import NotFound
from telic.server._backend import has_reports, reports_module
from telic.server._config import schema_mode
from telic.server._elicit import INPUT_KEY, Ask, Elicited, InputRequired, Pending
from telic.server._logs import ClientLogs
from telic.server._prompt import workflow_message
from telic.server._schemas import (
    SCHEMA_TYPES,
    SCHEMA_URI_TEMPLATE,
    SchemaMode,
    SentSchemas,
    Stream,
    schema_text,
    session_of,
)
from telic.server._tools import ServiceSource, call_tool, list_tools

if TYPE_CHECKING:
    from telic.ledger import Ledger
    from telic.roles import Service


logger = logging.getLogger("telic.server")

SERVER_NAME: Final = "telic"
_INSTRUCTIONS: Final = (
    "Telic is a model-free workflow controller: start a run, ground context, then submit one "
    "typed artifact per phase exactly as telic_get_next_action says. Use the telic_workflow "
    "prompt for the full procedure."
)
_PROMPT: Final = "telic_workflow"
_REPORT_TEMPLATE: Final = "telic://runs/{run_id}/report.md"
_REPORT_PREFIX, _REPORT_SUFFIX = _REPORT_TEMPLATE.split("{run_id}")
_SCHEMA_PREFIX: Final = SCHEMA_URI_TEMPLATE.split("{", 1)[0]
_ROLE_PREFIX: Final = "artifact://system/roles/"
_ROLE_TEMPLATE: Final = _ROLE_PREFIX + "{role}-v1"
_DIGEST_URI: Final = "telic://digest"
_DIGEST_RESOURCE: Final = types.Resource(
    name="packet_digest_all",
    title="Packet digest of every run",
    uri=_DIGEST_URI,
    description=(
        "Packets across this repository's runs: unconsumed rate per cast type and need code, "
        "spend per verdict."
    ),
    mime_type="text/plain",
)
_TEMPLATES: Final = (
    types.ResourceTemplate(
        name="artifact_schema",
        title="Artifact schema",
        uri_template=SCHEMA_URI_TEMPLATE,
        description="The full JSON Schema of an artifact type a host may be asked to produce.",
        mime_type="application/schema+json",
    ),
    types.ResourceTemplate(
        name="role_instructions",
        title="Role instructions",
        uri_template=_ROLE_TEMPLATE,
        description="A nextAction.instructionRef: what the role decides, submits and meets.",
        mime_type="text/markdown",
    ),
    types.ResourceTemplate(
        name="run_report",
        title="Run report",
        uri_template=_REPORT_TEMPLATE,
        description="The Markdown report of one run.",
        mime_type="text/markdown",
    ),
)
"""The resource templates; the last, the run report, only with ``telic.reports``."""
_COMPLETIONS: Final = 100
"""At most this many completion values per answer (the protocol's own cap)."""

Context = ServerRequestContext[Any, Any]


def build_server(
    service: Service,
    *,
    version: str = "",
    ledger: Ledger | None = None,
    schemas: SchemaMode | None = None,
) -> Server[Any]:
    """Return an MCP server whose tools, prompt and resources call ``service``.

    With ``ledger`` (and ``telic.reports`` installed) every run also has a Markdown report
    resource, ``telic://runs/{run_id}/report.md``. ``schemas`` is the schema mode
    (``SchemaMode``); ``None`` reads ``TELIC_SCHEMAS`` (default ``once``). The template
    ``artifact://system/roles/{role}-v1`` serves each role's instructions, so that every
    ``nextAction.instructionRef`` resolves.
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


def _invalid(message: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message)


def _no_resource(uri: str, detail: str = "") -> MCPError:
    """Resource not found: -32602 whose data names the URI (SEP-2164)."""
    return MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}{detail}", {"uri": uri})


def assemble(
    service: ServiceSource,
    *,
    version: str = "",
    ledger: Callable[[], Awaitable[Ledger]] | None = None,
    schemas: SchemaMode | None = None,
) -> Server[Any]:
    """Return the server of ``build_server`` over a service (and ledger) that may still be opening.

    Listing needs neither: each tool awaits ``service()`` on its call.
    """
    sent = SentSchemas(schema_mode() if schemas is None else schemas)
    logs = ClientLogs()
    reports = ledger is not None and has_reports()
    listed = types.ListToolsResult(tools=list_tools())
    # The prompt takes what telic_start_run takes: its modes, and its request's length.
    start = next(t for t in listed.tools if t.name == "telic_start_run").input_schema["properties"]
    modes: tuple[str, ...] = tuple(start["mode"]["enum"])
    longest: int = start["original_request"]["maxLength"]
    prompt = _workflow_prompt(modes)

    async def on_list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(ctx: Context, params: types.CallToolRequestParams) -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        resumed = _resumed(params)
        return await call_tool(
            service,
            sent,
            params.name,
            params.arguments,
            progress,
            session_of(ctx),
            _asker(ctx),
            resumed,
        )

    async def on_list_prompts(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[prompt])

    async def on_get_prompt(
        ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != _PROMPT:
            raise _invalid(f"Unknown prompt: {params.name}; the prompt is {_PROMPT}")
        arguments = dict(params.arguments or {})
        unknown = sorted(set(arguments) - {"original_request", "mode"})
        if unknown:
            raise _invalid(f"Unknown prompt argument(s): {', '.join(unknown)}")
        request = arguments.get("original_request", "")
        mode = arguments.get("mode", "")
        if not request.strip() or len(request) > longest:
            raise _invalid(f"original_request must be 1-{longest:,} characters, not blank")
        if mode not in modes:
            raise _invalid(f"mode must be one of {', '.join(modes)}")
        text = workflow_message(request, mode)
        return types.GetPromptResult(
            description="How to drive this request through Telic, one artifact per phase.",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    async def on_list_resources(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[_DIGEST_RESOURCE])

    async def on_list_resource_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        templates = list(_TEMPLATES if reports else _TEMPLATES[:-1])
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def on_read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == _DIGEST_URI:
            from telic.casting import render_stats  # loaded with the service, not at start

            stats = await (await service()).get_packet_stats()
            return _contents(uri, "text/plain", render_stats(stats))
        if uri.startswith(_SCHEMA_PREFIX):
            kind = uri.removeprefix(_SCHEMA_PREFIX)
            if kind not in SCHEMA_TYPES:
                known = ", ".join(SCHEMA_TYPES)
                raise _no_resource(uri, f"; the artifact types are {known}")
            await service()  # until the service is open, the protocol is loading elsewhere
            return _contents(uri, "application/schema+json", schema_text(kind))
        if uri.startswith(_ROLE_PREFIX):
            await service()  # the controller loads with the service
            from telic.controller import role_instructions, role_of

            role = role_of(uri)
            if role is None:
                raise _no_resource(uri, "; a role's URI is artifact://system/roles/<role>-v1")
            return _contents(uri, "text/markdown", role_instructions(role))
        if reports and uri.startswith(_REPORT_PREFIX) and uri.endswith(_REPORT_SUFFIX):
            assert ledger is not None
            run_id = uri.removeprefix(_REPORT_PREFIX).removesuffix(_REPORT_SUFFIX)
            module = reports_module()  # imported on the first read, not at server start
            assert module is not None
            try:
                text = str(await module.render_report(await ledger(), run_id, "md"))
            except NotFound:
                raise _no_resource(uri, f"; no run {run_id!r}") from None
            return _contents(uri, "text/markdown", text)
        raise _no_resource(uri)

    async def on_completion(
        ctx: Context, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref, argument = params.ref, params.argument
        values: list[str] = []
        if isinstance(ref, types.PromptReference) and ref.name == _PROMPT:
            if argument.name == "mode":
                values = list(modes)
        elif isinstance(ref, types.ResourceTemplateReference):
            if ref.uri == SCHEMA_URI_TEMPLATE and argument.name == "artifact_type":
                values = list(SCHEMA_TYPES)
            elif ref.uri == _ROLE_TEMPLATE and argument.name == "role":
                await service()  # the protocol loads with the service, not at start
                from telic.protocol import ACTION_ROLES

                values = list(ACTION_ROLES)
            elif ref.uri == _REPORT_TEMPLATE and argument.name == "run_id" and reports:
                runs = await (await service()).list_runs(_COMPLETIONS)
                values = [str(getattr(run, "run_id", "")) for run in runs]
        matching = [v for v in values if v.startswith(argument.value)]
        return types.CompleteResult(
            completion=types.Completion(
                values=matching[:_COMPLETIONS],
                total=len(matching),
                has_more=len(matching) > _COMPLETIONS,
            )
        )

    async def on_set_level(ctx: Context, params: types.SetLevelRequestParams) -> types.EmptyResult:
        logs.subscribe(session_of(ctx), ctx.session, params.level)
        return types.EmptyResult()

    @asynccontextmanager
    async def lifespan(_: Server[Stream]) -> AsyncIterator[Stream]:
        async with logs.forwarding():
            yield Stream()  # one per connection Server.run serves: see session_of

    server: Server[Any] = Server(
        SERVER_NAME,
        version=version,
        title="Telic",
        instructions=_INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_completion=on_completion,
    )
    # logging/setLevel is how clients of the handshake-era protocol (2025-06-18, which the
    # Inspector and most hosts speak) ask for server log lines; the 2026-07-28 protocol
    # deprecates it (SEP-2577) and the SDK warns when it is passed to the constructor, so it is
    # registered as a plain request handler. Its presence declares the logging capability.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    # tools/call answers the wire form of a CallToolResult (``_envelope.ToolResult``), which the
    # constructor's ``on_call_tool`` is not typed to take; the SDK validates and dumps the
    # result on the way out either way, so a model would be built and dumped for nothing.
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)
    return server


def _asker(ctx: Context) -> Ask | None:
    """Put a form to the caller's user, when its client declared it can show one; else None.

    An empty ``elicitation`` capability means form, as before modes existed. Up to protocol
    2025-11-25 the server sends ``elicitation/create`` while the call runs (when the transport
    has a back channel); from 2026-07-28 the call answers ``input_required`` with the form, and
    the client asks the user and repeats the call with the answer (``_resumed``).
    """
    session = ctx.session
    declared = session.client_capabilities
    wanted = None if declared is None else declared.elicitation
    if wanted is None or (wanted.form is None and wanted.url is not None):
        return None
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:

        async def later(message: str, schema: dict[str, Any], pending: Pending) -> Elicited:
            form = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            result = types.InputRequiredResult(
                input_requests={INPUT_KEY: form}, request_state=pending.state()
            )
            raise InputRequired(result.model_dump(by_alias=True, mode="json", exclude_none=True))

        return later
    if not session.can_send_request:
        return None

    async def now(message: str, schema: dict[str, Any], pending: Pending) -> Elicited:
        try:
            answer = await session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except (MCPError, ValidationError) as failure:  # the client refused or answered nonsense
            return Elicited("failed", problem=type(failure).__name__)
        return Elicited(answer.action, answer.content)

    return now


def _resumed(params: types.CallToolRequestParams) -> tuple[Pending, Elicited] | None:
    """A 2026-07-28 client's repeated call: the clarification it answers and the user's answer."""
    if params.request_state is None:
        return None
    pending = Pending.from_state(params.request_state)
    if pending is None:
        raise _invalid("requestState is not one Telic returned; repeat the call as it was")
    answer = (params.input_responses or {}).get(INPUT_KEY)
    if not isinstance(answer, types.ElicitResult):
        return pending, Elicited("failed", problem="no answer to the form")
    return pending, Elicited(answer.action, answer.content)


def _workflow_prompt(modes: tuple[str, ...]) -> types.Prompt:
    return types.Prompt(
        name=_PROMPT,
        title="Drive a request through Telic",
        description=(
            "The procedure a host follows for one request: start a run, ground context, then "
            "one typed artifact per phase, exactly as telic_get_next_action says."
        ),
        arguments=[
            types.PromptArgument(
                name="original_request", description="The user's request.", required=True
            ),
            types.PromptArgument(
                name="mode", description=f"The intent mode: {', '.join(modes)}.", required=True
            ),
        ],
    )


def _contents(uri: str, mime: str, text: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
    )
