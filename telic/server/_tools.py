"""The tools' handlers, and the two MCP requests they answer: ``tools/list`` and ``tools/call``.

Everything about a tool but its handler is a row of the table (``_table.TOOLS``). ``list_tools``
builds the listing from the rows and the committed schemas (``telic.server.inputs``), so listing
needs neither the argument models nor the protocol. ``call_tool`` validates the arguments with
the row's model (unknown arguments are refused by name), makes the handler's one service call,
and wraps the answer in a Telic result envelope. Argument errors, domain errors and crashes all
become error envelopes (``isError``); only cancellation propagates, as it must. An unknown tool
is a JSON-RPC invalid-params error. Each result's NextAction carries the schemas its MCP session
has not had yet in full, and references to the others (``SentSchemas``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, Protocol, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Tool, ToolAnnotations

from telic._errors import NotFound, SchemaViolation, UsageError
from telic.server._elicit import Ask, Elicited, InputRequired, Pending, elicit_answer, resume_answer
from telic.server._envelope import (
    ToolResult,
    error_envelope,
    error_result,
    success,
    with_schema,
)
from telic.server._json import decode_body_json
from telic.server._schemas import SCHEMA_TYPES, WRITTEN_BY_TELIC, SentSchemas
from telic.server._service import ProgressFn, Service
from telic.server._table import TOOLS, ToolSpec, spec_of
from telic.server.inputs import tool_schemas

if TYPE_CHECKING:
    from telic.controller import StepResult
    from telic.grounding import GroundingProgress
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

__all__ = ["TOOL_ARGS", "TOOL_NAMES", "ServiceSource", "call_tool", "list_tools"]

logger = logging.getLogger("telic.server")

Payload = dict[str, object]
"""A tool's answer before wire conversion: envelope key → record, model or plain value."""

A = TypeVar("A", bound="ToolArgs")

ServiceSource = Callable[[], Awaitable[Service]]
"""Returns the service, waiting for it to open if it is still opening."""

TOOL_NAMES: Final = tuple(spec.name for spec in TOOLS)
"""Every tool's name, in listing order."""

TOOL_ARGS: Final = {spec.name: spec.args for spec in TOOLS}
"""Every tool's name → the name of its argument model in ``telic.server._args``."""


def _args_model(name: str) -> type[ToolArgs]:
    """The argument model called ``name`` (the models need the protocol: loaded on first use)."""
    from telic.server import _args

    model: type[ToolArgs] = getattr(_args, name)
    return model


def list_tools() -> list[Tool]:
    """Every tool as ``tools/list`` lists it: title, description, schemas and annotations."""
    schemas = tool_schemas()
    return [
        Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=schemas[spec.name]["input"],
            output_schema=schemas[spec.name]["output"],
            annotations=ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=spec.destructive,
                idempotent_hint=spec.idempotent,
                open_world_hint=False,
            ),
        )
        for spec in TOOLS
    ]


async def call_tool(
    source: ServiceSource,
    sent: SentSchemas,
    name: str,
    arguments: Mapping[str, object] | None,
    progress: ProgressFn,
    session: object | None,
    ask: Ask | None = None,
    resumed: tuple[Pending, Elicited] | None = None,
) -> ToolResult:
    """Run the tool ``name`` once and return its result; an unknown name is invalid params.

    ``progress`` reports to the caller (a no-op unless it asked); ``session`` keys the schemas
    the caller's MCP session has had (``None``: no session, every schema in full); ``ask``
    puts a form to the caller's user (``None``: the client cannot take one; ``_elicit``);
    ``resumed`` is a 2026-07-28 client's repeated call with the user's answer to the form.
    """
    spec = spec_of(name)
    if spec is None:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}; tools/list names the tools")
    if resumed is not None and name != _ASKING:
        raise MCPError(INVALID_PARAMS, f"{name} takes no requestState; only {_ASKING} asks")
    return await _run(spec, source, sent, dict(arguments or {}), progress, session, ask, resumed)


_ASKING: Final = "telic_submit_artifact"
"""The one tool that may put a form to the user (an accepted ClarificationRequest)."""


async def _run(
    spec: ToolSpec,
    source: ServiceSource,
    sent: SentSchemas,
    arguments: dict[str, object],
    progress: ProgressFn,
    session: object | None,
    ask: Ask | None,
    resumed: tuple[Pending, Elicited] | None,
) -> ToolResult:
    try:
        # The service first: until it is open, its modules are loading in another thread.
        service = await source()
        _refuse_system_read(spec.name, arguments)
        if resumed is None:
            payload = await _handlers()[spec.name](service, arguments, progress, ask)
        else:
            payload = await _resume(service, arguments, *resumed)
        action = payload.get("nextAction")
        action_id = getattr(action, "id", "")
        draft = payload.get("draft")
        emitter = sent.emitter(
            session,
            _drafted(draft) or _withheld(action),
            action_id if isinstance(action_id, str) else "",
            kept=_instead(draft),
        )
        result = success(payload, emitter)
        emitter.commit()
        return result
    except InputRequired as asking:  # a 2026-07-28 client asks the user, then calls again
        return asking.result
    except Exception as exc:  # the tool boundary: every failure becomes an envelope
        leaf = _leaf(exc)
        envelope = error_envelope(leaf, spec.name)
        # Only the service raises SchemaViolation, after the arguments were valid as sent.
        refused = arguments.get("artifact_type")
        if isinstance(leaf, SchemaViolation) and isinstance(refused, str):
            envelope = with_schema(envelope, refused)
        # One line, no traceback: a refusal is an answer, not a server fault (those are logged
        # where the envelope is made). Never the message: it may quote what the client sent.
        logger.info("%s refused: %s", spec.name, envelope.get("code"))
        return error_result(envelope)


def _refuse_system_read(tool: str, arguments: Mapping[str, object]) -> None:
    """Say plainly where a role's instructions are when a host asks for them as an artifact.

    ``nextAction.instructionRef`` (``artifact://system/roles/<role>-v1``) is not an artifact of
    the run; it is an MCP resource of exactly that URI. Raises ``NotFound`` naming it.
    """
    ref = arguments.get("artifact_id")
    if tool == "telic_get_artifact" and isinstance(ref, str) and ref.startswith(_SYSTEM):
        raise NotFound(
            f"{ref} is not a run artifact: read it as the MCP resource of that exact URI "
            "(resources/read); role instructions are the template "
            "artifact://system/roles/{role}-v1"
        )


_SYSTEM: Final = "artifact://system/"


def _leaf(exc: Exception) -> Exception:
    """The error inside task-group wrappers, when there is exactly one."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class _Call(Protocol):
    """A tool with its types erased at the table: raw arguments in, payload out."""

    async def __call__(
        self,
        service: Service,
        arguments: Mapping[str, object],
        progress: ProgressFn,
        ask: Ask | None,
    ) -> Payload:
        """Validate ``arguments`` and make the tool's one service call."""
        ...


@dataclass(frozen=True, slots=True)
class _Bound(Generic[A]):
    """A handler bound to its argument model: the checker sees the model's type reach it."""

    model: type[A]
    handler: Callable[[Service, A, ProgressFn], Awaitable[Payload]]

    async def __call__(
        self,
        service: Service,
        arguments: Mapping[str, object],
        progress: ProgressFn,
        ask: Ask | None,
    ) -> Payload:
        """Validate ``arguments`` (unknown ones refused by name) and run the handler."""
        return await self.handler(service, self.model.model_validate(arguments), progress)


@dataclass(frozen=True, slots=True)
class _Asking(Generic[A]):
    """A handler that may put a form to the caller's user (``_elicit``), bound to its model."""

    model: type[A]
    handler: Callable[[Service, A, Ask | None], Awaitable[Payload]]

    async def __call__(
        self,
        service: Service,
        arguments: Mapping[str, object],
        progress: ProgressFn,
        ask: Ask | None,
    ) -> Payload:
        """Validate ``arguments`` (unknown ones refused by name) and run the handler."""
        return await self.handler(service, self.model.model_validate(arguments), ask)


def _step(result: StepResult) -> Payload:
    payload: Payload = {"run": result.run, "nextAction": result.next_action}
    if result.artifact is not None:
        payload["artifact"] = result.artifact
    return _with_draft(payload, result.draft)


def _drafted(draft: object) -> frozenset[str]:
    """The artifact types a result's draft covers (none without a draft)."""
    covered = getattr(draft, "covered", None)
    return covered if isinstance(covered, frozenset) else frozenset()


def _instead(draft: object) -> frozenset[str]:
    """The artifact types a result's draft offers instead of its own (the clarification)."""
    instead = getattr(draft, "instead", ())
    return frozenset(d.type for d in instead) if isinstance(instead, tuple) else frozenset()


def _withheld(action: object) -> frozenset[str]:
    """Every type, when the step is Telic's own (grounding writes the manifest): the host
    writes nothing now, and the next result's draft carries what it will write."""
    return (
        frozenset(SCHEMA_TYPES)
        if getattr(action, "required_output_type", None) in (WRITTEN_BY_TELIC)
        else frozenset()
    )


def _with_draft(payload: Payload, draft: object) -> Payload:
    """Add the draft beside the NextAction when there is one (an addition to Telic 1.0)."""
    if draft is not None:
        payload["draft"] = draft
    return payload


# ------------------------------------------------------------------ the nine Telic 1.0 tools


async def _start_run(service: Service, args: StartRunArgs, _: ProgressFn) -> Payload:
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
        prior_run_id=args.prior_run_id,
        **({} if args.topology_override is None else {"topology_override": args.topology_override}),
    )
    return _step(result)


_GROUNDING_STAGES: Final = {"inventory": 1.0, "selection": 2.0, "done": 3.0}
"""Grounding's progress is its stage, out of three: it only ever increases, as MCP requires."""


async def _ground(service: Service, args: GroundArgs, report: ProgressFn) -> Payload:
    budget = None if args.budget is None else args.budget.model_dump(exclude_none=True)
    # Grounding reports synchronously (from its worker thread too); the client hears about it
    # through a small buffer drained by one task. Progress is best effort: a full buffer drops.
    send, receive = anyio.create_memory_object_stream[tuple[float, str]](16)
    total = max(_GROUNDING_STAGES.values())

    def progress(update: GroundingProgress) -> None:
        step = _GROUNDING_STAGES.get(update.stage, 0.0)
        message = (
            f"{update.stage}: {update.inventoried} inventoried, "
            f"{update.considered} considered, {update.selected} selected"
        )
        with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
            send.send_nowait((step, message))

    async def forward() -> None:
        sent = 0.0
        async with receive:
            async for step, message in receive:
                if step > sent:  # a stage reports once: later reports of it would not increase
                    sent = step
                    await report(step, total, message)

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
    payload: Payload = {
        "run": result.run,
        "nextAction": result.next_action,
        "manifest": result.manifest_wire,
    }
    return _with_draft(payload, result.draft)


async def _next(service: Service, args: RunArgs, _: ProgressFn) -> Payload:
    action, draft = await service.get_next(args.run_id)
    return _with_draft({"nextAction": action}, draft)


async def _submit(service: Service, args: SubmitArgs, ask: Ask | None) -> Payload:
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
    asked = args.artifact_type == "ClarificationRequest"
    if ask is not None and asked and result.next_action.kind == "clarification":
        # An accepted ClarificationRequest, and a client that can put a form to its user.
        return await elicit_answer(service, ask, args.run_id, result, _step(result))
    return _step(result)


async def _resume(
    service: Service, arguments: Mapping[str, object], pending: Pending, answer: Elicited
) -> Payload:
    """The repeated telic_submit_artifact call of a 2026-07-28 client, with the user's answer."""
    from telic.server._args import SubmitArgs

    args = SubmitArgs.model_validate(arguments)
    if args.run_id != pending.run_id or args.artifact_type != "ClarificationRequest":
        raise UsageError(
            "a call with requestState repeats the telic_submit_artifact call that returned it"
        )
    return await resume_answer(service, pending, answer)


def _decode(text: str) -> object:
    return decode_body_json(text)  # refuses duplicate keys too


async def _cancel(service: Service, args: CancelArgs, _: ProgressFn) -> Payload:
    return _step(await service.cancel_run(args.run_id, args.action_id, args.expected_run_version))


async def _list_runs(service: Service, args: ListRunsArgs, _: ProgressFn) -> Payload:
    return {"runs": await service.list_runs(args.limit)}


async def _get_run(service: Service, args: RunArgs, _: ProgressFn) -> Payload:
    details = await service.get_run(args.run_id)
    payload: Payload = {
        "run": details.run,
        "artifacts": details.artifacts,
        "nextAction": details.next_action,
    }
    return _with_draft(payload, details.draft)


async def _get_artifact(service: Service, args: GetArtifactArgs, _: ProgressFn) -> Payload:
    # Telic 1.0 nests the body in the artifact: {artifact: {id, …metadata, body}}.
    return {"artifact": await service.get_artifact(args.run_id, args.artifact_id)}


async def _get_trace(service: Service, args: GetTraceArgs, _: ProgressFn) -> Payload:
    page = await service.get_trace(args.run_id, args.after_sequence, args.limit)
    return {"events": page.events, "hasMore": page.has_more}


# ------------------------------------------------------------------ beyond the original


async def _verify(service: Service, args: RunArgs, _: ProgressFn) -> Payload:
    report = await service.verify_run(args.run_id)
    return {
        "runId": args.run_id,
        "intact": report.ok,
        "recordsChecked": report.records_checked,
        "firstBroken": report.first_broken,
    }


async def _replay(service: Service, args: RunArgs, _: ProgressFn) -> Payload:
    return {"report": await service.replay_run(args.run_id)}


async def _check(service: Service, args: CheckToolActionArgs, _: ProgressFn) -> Payload:
    decision = await service.broker_check(
        args.run_id,
        args.capability,
        args.target,
        action_id=args.action_id,
        expected_run_version=args.expected_run_version,
    )
    return {"decision": decision}


async def _cast(service: Service, args: CastArgs, _: ProgressFn) -> Payload:
    handoff = await service.cast(
        args.run_id,
        cast_type=args.cast_type,
        routing=args.routing,
        budget=args.budget,
        brief=args.brief,
        pointers=tuple(args.pointers),
        packet_refs=tuple(args.packet_refs),
        parent_cast_id=args.parent_cast_id,
    )
    return {"cast": handoff}


async def _cast_progress(service: Service, args: CastProgressArgs, _: ProgressFn) -> Payload:
    state = await service.cast_progress(
        args.run_id,
        args.cast_id,
        turns=args.turns,
        tool_calls=args.tool_calls,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
    )
    return {"castId": args.cast_id} | ({} if state is None else {"cast": state})


async def _return_packet(service: Service, args: ReturnPacketArgs, _: ProgressFn) -> Payload:
    return {"packet": await service.return_packet(args.run_id, args.cast_id, args.packet)}


async def _digest(service: Service, args: RunArgs, _: ProgressFn) -> Payload:
    view = await service.get_digest_view(args.run_id)
    return {
        "runId": args.run_id,
        "digest": view.text,
        "marks": [mark.to_wire() for mark in view.marks],
        "omitted": view.omitted,
    }


@functools.cache
def _handlers() -> dict[str, _Call]:
    """Each tool's handler bound to its argument model (loaded on the first call)."""
    from telic.server import _args

    return {
        "telic_start_run": _Bound(_args.StartRunArgs, _start_run),
        "telic_ground_context": _Bound(_args.GroundArgs, _ground),
        "telic_get_next_action": _Bound(_args.RunArgs, _next),
        "telic_submit_artifact": _Asking(_args.SubmitArgs, _submit),
        "telic_cancel_run": _Bound(_args.CancelArgs, _cancel),
        "telic_list_runs": _Bound(_args.ListRunsArgs, _list_runs),
        "telic_get_run": _Bound(_args.RunArgs, _get_run),
        "telic_get_artifact": _Bound(_args.GetArtifactArgs, _get_artifact),
        "telic_get_trace": _Bound(_args.GetTraceArgs, _get_trace),
        "telic_cast": _Bound(_args.CastArgs, _cast),
        "telic_cast_progress": _Bound(_args.CastProgressArgs, _cast_progress),
        "telic_return_packet": _Bound(_args.ReturnPacketArgs, _return_packet),
        "telic_get_digest": _Bound(_args.RunArgs, _digest),
        "telic_check_tool_action": _Bound(_args.CheckToolActionArgs, _check),
        "telic_replay_run": _Bound(_args.RunArgs, _replay),
        "telic_verify_run": _Bound(_args.RunArgs, _verify),
    }
