"""The tools: each parses its arguments, makes one service call and wraps the answer.

Every tool is an ``EnvelopeTool``: the SDK's ``Tool`` with our own input schema and a ``run``
that never raises an ordinary exception. Argument errors, domain errors and crashes all become
error envelopes (``isError``); only cancellation propagates, as it must. The tools share one
``SentSchemas``: each result's NextAction carries the schemas its MCP session has not had yet
in full, and references to the others.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import ConfigDict, Field

from telic._errors import SchemaViolation
from telic.server._envelope import error_envelope, error_result, success, to_wire, with_schema
from telic.server._json import decode_body_json
from telic.server._schemas import SentSchemas, session_of
from telic.server._service import Service
from telic.server.inputs import input_schemas

if TYPE_CHECKING:
    from telic.server._args import (
        CancelArgs,
        CastArgs,
        CastProgressArgs,
        CheckToolActionArgs,
        GetArtifactArgs,
        GetTraceArgs,
        GroundArgs,
        ListRunsArgs,
        ReturnPacketArgs,
        RunArgs,
        StartRunArgs,
        SubmitArgs,
        ToolArgs,
    )

__all__ = ["TOOL_ARGS", "TOOL_NAMES", "EnvelopeTool", "ServiceSource", "build_tools"]

Handler = Callable[[Service, Any, "Context[Any, Any]"], Awaitable[Mapping[str, Any]]]
ServiceSource = Callable[[], Awaitable[Service]]
"""Returns the service, waiting for it to open if it is still opening."""


def _args_model(name: str) -> type[ToolArgs]:
    """The argument model called ``name`` (the models need the protocol: loaded on first use)."""
    from telic.server import _args

    model: type[ToolArgs] = getattr(_args, name)
    return model


class EnvelopeTool(Tool):
    """An SDK tool whose every outcome is a Telic result envelope."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    args_name: str = Field(exclude=True)
    handler: Handler = Field(exclude=True)
    source: ServiceSource = Field(exclude=True)
    schemas: SentSchemas = Field(exclude=True)

    async def run(
        self,
        arguments: dict[str, Any],
        context: Context[Any, Any],
        convert_result: bool = False,
    ) -> CallToolResult:
        """Validate ``arguments``, call the service once, and return the envelope."""
        args: ToolArgs | None = None
        try:
            # The service first: until it is open, its modules are loading in another thread.
            service = await self.source()
            args = _args_model(self.args_name).model_validate(arguments)
            payload = await self.handler(service, args, context)
            emitter = self.schemas.emitter(session_of(context))
            result = success(payload, emitter)
            emitter.commit()
            return result
        except Exception as exc:  # the tool boundary: every failure becomes an envelope
            leaf = _leaf(exc)
            envelope = error_envelope(leaf, self.name)
            refused = getattr(args, "artifact_type", None)
            if isinstance(leaf, SchemaViolation) and isinstance(refused, str):
                envelope = with_schema(envelope, refused)
            return error_result(envelope)


def _leaf(exc: Exception) -> Exception:
    """The error inside task-group wrappers, when there is exactly one."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _action(result: Any) -> Any:
    action = getattr(result, "action", None)
    return action if action is not None else result.next_action


def _step(result: Any) -> dict[str, Any]:
    payload = {"run": result.run, "nextAction": _action(result)}
    artifact = getattr(result, "artifact", None)
    if artifact is not None:
        payload["artifact"] = artifact
    return payload


# ------------------------------------------------------------------ the nine Telic 1.0 tools


async def _start_run(service: Service, args: StartRunArgs, _: Context[Any, Any]) -> dict[str, Any]:
    result = await service.start_run(
        args.original_request,
        args.mode,
        host_name=args.host_name,
        native_subagents=args.native_subagents,
        host_capabilities=tuple(args.host_capabilities),
        authorization_granted=(
            None if args.authorization_granted is None else tuple(args.authorization_granted)
        ),
        authorization_denied=tuple(args.authorization_denied),
        shell_execute_allowlist=tuple(args.shell_execute_allowlist),
        network_read_domains=tuple(args.network_read_domains),
        cast_types=(
            None
            if args.cast_types is None
            else tuple(entry.model_dump() for entry in args.cast_types)
        ),
        protected_paths_granted=tuple(args.protected_paths_granted),
    )
    return _step(result)


async def _ground(service: Service, args: GroundArgs, ctx: Context[Any, Any]) -> dict[str, Any]:
    budget = None if args.budget is None else args.budget.model_dump(exclude_none=True)
    # Grounding reports synchronously (from its worker thread too); the client hears about it
    # through a small buffer drained by one task. Progress is best effort: a full buffer drops.
    send, receive = anyio.create_memory_object_stream[tuple[float, str]](16)

    def progress(report: Any) -> None:
        done = getattr(report, "considered", 0) or getattr(report, "inventoried", 0)
        message = (
            f"{getattr(report, 'stage', 'grounding')}: "
            f"{getattr(report, 'inventoried', 0)} inventoried, "
            f"{getattr(report, 'considered', 0)} considered, "
            f"{getattr(report, 'selected', 0)} selected"
        )
        with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
            send.send_nowait((float(done), message))

    async def forward() -> None:
        async with receive:
            async for done, message in receive:
                await ctx.report_progress(done, None, message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward)
        async with send:
            result = await service.ground(
                args.run_id,
                args.action_id,
                args.expected_run_version,
                active_paths=tuple(args.active_paths),
                budget=budget,
                progress=progress,
            )
    return _step(result) | {"manifest": result.manifest_wire}


async def _next(service: Service, args: RunArgs, _: Context[Any, Any]) -> dict[str, Any]:
    return {"nextAction": await service.get_next_action(args.run_id)}


async def _submit(service: Service, args: SubmitArgs, _: Context[Any, Any]) -> dict[str, Any]:
    if args.clarification_response is not None:
        result = await service.answer_clarification(
            args.run_id, args.action_id, args.expected_run_version, args.clarification_response
        )
        return _step(result)
    assert args.artifact_type is not None  # the argument model guarantees it
    body: object = args.body if args.body is not None else _decode(args.body_json or "")
    result = await service.submit_artifact(
        args.run_id,
        args.action_id,
        args.expected_run_version,
        args.artifact_type,
        body,
        tuple(args.source_refs),
    )
    return _step(result)


def _decode(text: str) -> object:
    return decode_body_json(text)  # refuses duplicate keys too


async def _cancel(service: Service, args: CancelArgs, _: Context[Any, Any]) -> dict[str, Any]:
    return _step(await service.cancel_run(args.run_id, args.action_id, args.expected_run_version))


async def _list_runs(service: Service, args: ListRunsArgs, _: Context[Any, Any]) -> dict[str, Any]:
    return {"runs": await service.list_runs(args.limit)}


async def _get_run(service: Service, args: RunArgs, _: Context[Any, Any]) -> dict[str, Any]:
    details = await service.get_run(args.run_id)
    return {
        "run": details.run,
        "artifacts": details.artifacts,
        "nextAction": _action(details),
    }


async def _get_artifact(
    service: Service, args: GetArtifactArgs, _: Context[Any, Any]
) -> dict[str, Any]:
    stored = await service.get_artifact(args.run_id, args.artifact_id)
    return {"artifact": stored.record, "body": stored.body}


async def _get_trace(service: Service, args: GetTraceArgs, _: Context[Any, Any]) -> dict[str, Any]:
    page = await service.get_trace(args.run_id, args.after_sequence, args.limit)
    return {"events": page.events, "hasMore": page.has_more}


# ------------------------------------------------------------------ beyond the original


async def _verify(service: Service, args: RunArgs, _: Context[Any, Any]) -> dict[str, Any]:
    report = to_wire(await service.verify_run(args.run_id))
    return {
        "runId": args.run_id,
        "intact": report.get("ok"),
        "recordsChecked": report.get("recordsChecked"),
        "firstBroken": report.get("firstBroken"),
    }


async def _check(
    service: Service, args: CheckToolActionArgs, _: Context[Any, Any]
) -> dict[str, Any]:
    decision = await service.check_tool_action(args.run_id, args.capability, args.target)
    return {"decision": decision}


async def _cast(service: Service, args: CastArgs, _: Context[Any, Any]) -> dict[str, Any]:
    handoff = await service.cast(
        args.run_id,
        cast_type=args.cast_type,
        routing=args.routing.model_dump(exclude_none=True),
        budget=args.budget.model_dump(exclude_none=True),
        brief=args.brief,
        pointers=tuple(args.pointers),
        packet_refs=tuple(args.packet_refs),
    )
    return {"cast": handoff}


async def _cast_progress(
    service: Service, args: CastProgressArgs, _: Context[Any, Any]
) -> dict[str, Any]:
    state = await service.cast_progress(
        args.run_id,
        args.cast_id,
        turns=args.turns,
        tool_calls=args.tool_calls,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
    )
    return {"castId": args.cast_id} | ({} if state is None else {"cast": state})


async def _return_packet(
    service: Service, args: ReturnPacketArgs, _: Context[Any, Any]
) -> dict[str, Any]:
    return {"packet": await service.return_packet(args.run_id, args.cast_id, args.packet)}


async def _digest(service: Service, args: RunArgs, _: Context[Any, Any]) -> dict[str, Any]:
    return {"runId": args.run_id, "digest": await service.get_digest(args.run_id)}


# ------------------------------------------------------------------ the table


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    args: str
    handler: Handler
    read_only: bool
    idempotent: bool
    destructive: bool
    description: str


_SPECS: Final = (
    _Spec(
        "telic_start_run",
        "StartRunArgs",
        _start_run,
        False,
        False,
        False,
        "Start a run; returns its first nextAction.",
    ),
    _Spec(
        "telic_ground_context",
        "GroundArgs",
        _ground,
        False,
        False,
        False,
        "Ground repository context; returns the manifest.",
    ),
    _Spec(
        "telic_get_next_action",
        "RunArgs",
        _next,
        True,
        True,
        False,
        "The run's one legal next step and its output schema.",
    ),
    _Spec(
        "telic_submit_artifact",
        "SubmitArgs",
        _submit,
        False,
        False,
        False,
        "Submit the phase's artifact or a clarification answer.",
    ),
    _Spec(
        "telic_cancel_run",
        "CancelArgs",
        _cancel,
        False,
        False,
        True,
        "Cancel a run.",
    ),
    _Spec(
        "telic_list_runs",
        "ListRunsArgs",
        _list_runs,
        True,
        True,
        False,
        "List runs, newest first.",
    ),
    _Spec(
        "telic_get_run",
        "RunArgs",
        _get_run,
        True,
        True,
        False,
        "A run, its artifacts' metadata and nextAction.",
    ),
    _Spec(
        "telic_get_artifact",
        "GetArtifactArgs",
        _get_artifact,
        True,
        True,
        False,
        "One artifact with its body, re-verified.",
    ),
    _Spec(
        "telic_get_trace",
        "GetTraceArgs",
        _get_trace,
        True,
        True,
        False,
        "A page of a run's trace.",
    ),
    _Spec(
        "telic_cast",
        "CastArgs",
        _cast,
        False,
        False,
        False,
        "Cast a native subagent; returns its handoff.",
    ),
    _Spec(
        "telic_cast_progress",
        "CastProgressArgs",
        _cast_progress,
        False,
        False,
        False,
        "Report a child's spend against its budget.",
    ),
    _Spec(
        "telic_return_packet",
        "ReturnPacketArgs",
        _return_packet,
        False,
        False,
        False,
        "Return a child's evidence packet to verify and seal.",
    ),
    _Spec(
        "telic_get_digest",
        "RunArgs",
        _digest,
        True,
        True,
        False,
        "The run's packet digest.",
    ),
    _Spec(
        "telic_check_tool_action",
        "CheckToolActionArgs",
        _check,
        False,  # appends one trace record per distinct decision: not read-only, but idempotent
        True,
        False,
        "May a native tool use this capability on this target?",
    ),
    _Spec(
        "telic_verify_run",
        "RunArgs",
        _verify,
        True,
        True,
        False,
        "Verify a run's hash chain and artifacts.",
    ),
)

TOOL_NAMES: Final = tuple(spec.name for spec in _SPECS)
"""Every tool's name, in listing order."""

TOOL_ARGS: Final = {spec.name: spec.args for spec in _SPECS}
"""Every tool's name → the name of its argument model in ``telic.server._args``."""


async def _placeholder() -> None:
    """Never called: EnvelopeTool.run replaces the SDK's function call."""


def build_tools(source: ServiceSource, schemas: SentSchemas | None = None) -> list[Tool]:
    """Return every tool, each calling the service ``source`` returns.

    The input schemas come from the committed ``telic.server.inputs`` file, so listing the
    tools needs neither the argument models nor the protocol. ``schemas`` (default: a fresh
    one in ``once`` mode) decides which NextAction schemas each result carries in full.
    """
    sent = SentSchemas() if schemas is None else schemas
    base = Tool.from_function(_placeholder, name="telic_placeholder", structured_output=False)
    inputs = input_schemas()
    tools: list[Tool] = []
    for spec in _SPECS:
        annotations = ToolAnnotations(
            read_only_hint=spec.read_only,
            idempotent_hint=spec.idempotent,
            destructive_hint=spec.destructive,
            open_world_hint=False,
        )
        tools.append(
            EnvelopeTool(
                fn=_placeholder,
                name=spec.name,
                description=spec.description,
                parameters=inputs[spec.name],
                fn_metadata=base.fn_metadata,
                is_async=True,
                context_kwarg=None,
                annotations=annotations,
                args_name=spec.args,
                handler=spec.handler,
                source=source,
                schemas=sent,
            )
        )
    return tools
