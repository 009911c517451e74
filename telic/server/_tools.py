"""Every MCP tool, declared once, and the two MCP requests they answer: ``tools/list`` and
``tools/call``.

A tool is its handler with ``@tool(...)`` on it: the decorator carries its name, title,
description (what it does, when to call it, what it returns) and annotations; the handler's
``args`` annotation is its argument model and its return annotation (``Annotated[Payload,
Model]``) its result model, the tool's ``outputSchema``. ``tools/list``, argument validation,
dispatch, the committed schemas (``telic.server.inputs``) and the tool table of
``docs/tools.md`` all read ``TOOLS``; nothing else lists tools.

Listing needs neither the models nor the protocol: the annotations stay text until the first
call (``models``), and the schemas come from the committed ``tools.json``. ``call_tool``
validates the arguments with the handler's model (unknown arguments are refused by name),
makes the handler's one service call, and wraps the answer in a Telic result envelope.
Argument errors, domain errors and crashes all become error envelopes (``isError``); only
cancellation propagates, as it must. An unknown tool is a JSON-RPC invalid-params error. Each
result's NextAction carries the schemas its MCP session has not had yet in full, and
references to the others (``SentSchemas``).

Adding a tool: one decorated handler here calling one service method, its argument and result
models in ``_args.py`` and ``_results.py``, ``python -m telic.server.inputs --write``, and its
tests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Tool, ToolAnnotations

from telic._errors import NotFound, SchemaViolation
from telic.server._elicit import Ask, Elicited, InputRequired, Pending, elicit_answer, resume_answer
from telic.server._envelope import ToolResult, error_envelope, error_result, success, with_schema
from telic.server._json import decode_body_json
from telic.server._schemas import SentSchemas
from telic.server.inputs import tool_schemas

if TYPE_CHECKING:
    from pydantic import BaseModel

    from telic.controller import StepResult
    from telic.grounding import GroundingProgress
    from telic.roles import Service
    from telic.server import _args, _results


logger = logging.getLogger("telic.server")

Payload = dict[str, object]
"""A tool's answer before wire conversion: envelope key → record, model or plain value."""

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""An async progress callback: (done, total or None, message or None)."""

ServiceSource = Callable[[], Awaitable["Service"]]
"""Returns the service, waiting for it to open if it is still opening."""


@dataclass(frozen=True, slots=True)
class Call:
    """What a handler may use of its caller besides the arguments."""

    progress: ProgressFn
    """Reports progress to the caller (a no-op unless it asked)."""
    ask: Ask | None
    """Puts a form to the caller's user (``None``: the client cannot take one; ``_elicit``)."""


Handler = Callable[["Service", Any, Call], Awaitable[Payload]]
"""A handler with its argument type erased; ``models`` reads it back from the annotation."""


@dataclass(frozen=True, slots=True)
class Declared:
    """One MCP tool: what ``tools/list`` says of it, and its handler.

    Called on the handler (``@tool(name, title=…, …)``), it declares it as this tool, appended
    to ``TOOLS``.
    """

    name: str
    _: KW_ONLY
    title: str
    description: str
    summary: str
    """One line for the tool table of ``docs/tools.md`` (``docs/tools_doc.py`` writes it)."""
    read_only: bool = False
    """Never changes any state (no ledger record, no run change); MCP's default is false."""
    idempotent: bool = False
    """Repeating the call with the same arguments has no further effect."""
    destructive: bool = False
    """May end or undo something (a run's cancellation)."""
    handler: Handler | None = None
    """Set by the call that declares it: every tool in ``TOOLS`` has one."""

    def __call__(self, handler: Handler) -> Handler:
        """Declare ``handler`` as this tool's (appended to ``TOOLS``)."""
        TOOLS.append(dataclasses.replace(self, handler=handler))
        return handler


tool: Final = Declared
"""The decorator that declares a handler as a tool: ``@tool(name, title=…, …)``."""

TOOLS: Final[list[Declared]] = []
"""Every tool, in listing order (the order of the handlers below)."""


def declared(name: str) -> Declared | None:
    """The tool called ``name``, or None."""
    return next((spec for spec in TOOLS if spec.name == name), None)


@functools.cache
def models(name: str) -> tuple[type[_args.ToolArgs], type[BaseModel]]:
    """The argument and result models of the tool ``name``, read from its handler's annotations
    (the models need the protocol: resolved on first use)."""
    from telic.roles import Service
    from telic.server import _args, _results

    spec = declared(name)
    assert spec is not None, name
    names = {"_args": _args, "_results": _results, "Service": Service}
    hints = typing.get_type_hints(spec.handler, localns=names, include_extras=True)
    return hints["args"], typing.get_args(hints["return"])[1]


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


_ASKING: Final = "telic_submit_artifact"
"""The one tool that may put a form to the user (an accepted ClarificationRequest)."""


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
    spec = declared(name)
    if spec is None:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}; tools/list names the tools")
    if resumed is not None and name != _ASKING:
        raise MCPError(INVALID_PARAMS, f"{name} takes no requestState; only {_ASKING} asks")
    given = dict(arguments or {})
    try:
        # The service first: until it is open, its modules are loading in another thread.
        service = await source()
        _refuse_system_read(name, given)
        if resumed is None:
            # Unknown arguments are refused by name (the casting tools' refusal names the tool).
            args = models(name)[0].model_validate(given, context={"tool": name})
            assert spec.handler is not None  # set when it was declared
            payload = await spec.handler(service, args, Call(progress, ask))
        else:
            payload = await resume_answer(service, given, *resumed)
        emitter = sent.emitter(session, payload.get("nextAction"), payload.get("draft"))
        result = success(payload, emitter)
        emitter.commit()
        return result
    except InputRequired as asking:  # a 2026-07-28 client asks the user, then calls again
        return asking.result
    except Exception as exc:  # the tool boundary: every failure becomes an envelope
        leaf = _leaf(exc)
        envelope = error_envelope(leaf, name)
        # Only the service raises SchemaViolation, after the arguments were valid as sent.
        refused = given.get("artifact_type")
        if isinstance(leaf, SchemaViolation) and isinstance(refused, str):
            envelope = with_schema(envelope, refused)
        # One line, no traceback: a refusal is an answer, not a server fault (those are logged
        # where the envelope is made). Never the message: it may quote what the client sent.
        logger.info("%s refused: %s", name, envelope.get("code"))
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


def _step(result: StepResult) -> Payload:
    payload: Payload = {"run": result.run, "nextAction": result.next_action}
    if result.artifact is not None:
        payload["artifact"] = result.artifact
    return _with_draft(payload, result.draft)


def _with_draft(payload: Payload, draft: object) -> Payload:
    """Add the draft beside the NextAction when there is one (an addition to Telic 1.0)."""
    if draft is not None:
        payload["draft"] = draft
    return payload


# ------------------------------------------------------------------ the nine Telic 1.0 tools


@tool(
    "telic_start_run",
    title="Start a Telic run",
    description=(
        "Start a run for the user's request. Call once per request, before any other tool: "
        "pass the request verbatim, the intent mode, the capabilities this host really has "
        "and only the authority the user granted (authorization_granted; omitted, the "
        "mode's defaults apply). Returns the run record and its first nextAction "
        "(ground the repository context). report_only reads no repository file; a question "
        "about the code needs analyze_only. Optional topology_override: micro for a short "
        "report_only question that needs no change (frame, spot review, report); forensic "
        "adds an evidence re-verifying review; omitted, the full 1.0 path."
    ),
    summary=(
        "Start a run: request, mode, host capabilities, grants (and enabled cast types, a "
        "topology; `prior_run_id` to follow an ended run)."
    ),
)
async def _start_run(
    service: Service, args: _args.StartRunArgs, _: Call
) -> Annotated[Payload, _results.StepResultOut]:
    from telic.controller import StartRequest

    fields = args.model_dump()  # the argument model's fields are StartRequest's, and cast_types
    cast_types = fields.pop("cast_types")
    result = await service.start_run(StartRequest(**fields), cast_types=cast_types)
    return _step(result)


_GROUNDING_STAGES: Final = {"inventory": 1.0, "selection": 2.0, "done": 3.0}
"""Grounding's progress is its stage, out of three: it only ever increases, as MCP requires."""


@tool(
    "telic_ground_context",
    title="Ground repository context",
    description=(
        "Select and store the repository files this run may rely on (deterministic and "
        "bounded; report_only grounds nothing). Call when nextAction.phase is "
        "context_discovery, with its action_id and expected_run_version; active_paths pins "
        "files the request names. Sends progress notifications. Returns the run, the next "
        "action and the context manifest."
    ),
    summary="Ground repository context with the current tokens (progress notifications).",
)
async def _ground(
    service: Service, args: _args.GroundArgs, call: Call
) -> Annotated[Payload, _results.GroundResultOut]:
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
                    await call.progress(step, total, message)

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


@tool(
    "telic_get_next_action",
    title="Get the next step",
    description=(
        "Return the run's single legal next step: the phase, the artifact type to write "
        "and its JSON Schema, the input artifacts to read, and the permissions and budgets "
        "in force. Read-only: call it whenever you are unsure what to do next."
    ),
    summary="The single legal next step and the schema to produce.",
    read_only=True,
    idempotent=True,
)
async def _next(
    service: Service, args: _args.RunArgs, _: Call
) -> Annotated[Payload, _results.NextActionResultOut]:
    action, draft = await service.get_next(args.run_id)
    return _with_draft({"nextAction": action}, draft)


@tool(
    "telic_submit_artifact",
    title="Submit an artifact",
    description=(
        "Submit the artifact nextAction asks for (artifact_type with body, or body_json if "
        "your client drops empty arrays), or answer a pending clarification "
        "(clarification_response), with the current action_id and expected_run_version. "
        "Evidence and ScenarioSpec may be added during their phase without changing the "
        "version. Returns the run and the next action, plus the stored artifact's metadata "
        "for Evidence and ScenarioSpec; a refusal names the failed rules and changes nothing."
    ),
    summary="Submit one artifact (`body` or `body_json`) or answer the clarification.",
)
async def _submit(
    service: Service, args: _args.SubmitArgs, call: Call
) -> Annotated[Payload, _results.StepResultOut]:
    if args.clarification_response is not None:
        result = await service.answer_clarification(
            args.run_id, args.action_id, args.expected_run_version, args.clarification_response
        )
        return _step(result)
    assert args.artifact_type is not None  # the argument model guarantees it
    body: object = args.body if args.body is not None else decode_body_json(args.body_json or "")
    result = await service.submit_artifact(
        args.run_id,
        args.action_id,
        args.expected_run_version,
        args.artifact_type,
        body,
        tuple(args.source_refs),
    )
    asked = args.artifact_type == "ClarificationRequest"
    if call.ask is not None and asked and result.next_action.kind == "clarification":
        # An accepted ClarificationRequest, and a client that can put a form to its user.
        return await elicit_answer(service, call.ask, args.run_id, result, _step(result))
    return _step(result)


@tool(
    "telic_cancel_run",
    title="Cancel a run",
    description=(
        "Cancel a live run when the user asks to stop; it ends with status cancelled and "
        "no report. A finished run is returned unchanged. Returns the run and its terminal "
        "nextAction."
    ),
    summary="Cancel a run.",
    destructive=True,
)
async def _cancel(
    service: Service, args: _args.CancelArgs, _: Call
) -> Annotated[Payload, _results.StepResultOut]:
    return _step(await service.cancel_run(args.run_id, args.action_id, args.expected_run_version))


@tool(
    "telic_list_runs",
    title="List runs",
    description=(
        "List the runs in this repository's ledger, newest first: metadata only, without "
        "request text or bodies. Use it to find a run to resume when the user asks."
    ),
    summary="Runs, newest first (metadata only).",
    read_only=True,
    idempotent=True,
)
async def _list_runs(
    service: Service, args: _args.ListRunsArgs, _: Call
) -> Annotated[Payload, _results.ListRunsResultOut]:
    return {"runs": [run.summary_wire() for run in await service.list_runs(args.limit)]}


@tool(
    "telic_get_run",
    title="Get a run",
    description=(
        "Return a run's record, every artifact's metadata (id, type, producer, digest, "
        "sources) and its next action. Use it to resume a run or to find an artifact id."
    ),
    summary="Run record, artifact metadata, next action.",
    read_only=True,
    idempotent=True,
)
async def _get_run(
    service: Service, args: _args.RunArgs, _: Call
) -> Annotated[Payload, _results.GetRunResultOut]:
    details = await service.get_run(args.run_id)
    payload: Payload = {
        "run": details.run,
        "artifacts": details.artifacts,
        "nextAction": details.next_action,
    }
    return _with_draft(payload, details.draft)


@tool(
    "telic_get_artifact",
    title="Read an artifact",
    description=(
        "Return one artifact of a run, its metadata with its body, after re-verifying its "
        "digest. Use it to read a nextAction's inputRefs: for artifact://<run>/<id> pass "
        "that run id and artifact id."
    ),
    summary=(
        "One artifact, digest re-verified (a role's `instructionRef` is a resource: the refusal "
        "says so)."
    ),
    read_only=True,
    idempotent=True,
)
async def _get_artifact(
    service: Service, args: _args.GetArtifactArgs, _: Call
) -> Annotated[Payload, _results.GetArtifactResultOut]:
    # Telic 1.0 nests the body in the artifact: {artifact: {id, …metadata, body}}.
    return {"artifact": await service.get_artifact(args.run_id, args.artifact_id)}


@tool(
    "telic_get_trace",
    title="Read a run's trace",
    description=(
        "Return a page of the run's canonical trace in sequence order (artifacts recorded, "
        "permission decisions, phase changes), and whether more follow (page with "
        "after_sequence)."
    ),
    summary="A page of the canonical trace.",
    read_only=True,
    idempotent=True,
)
async def _get_trace(
    service: Service, args: _args.GetTraceArgs, _: Call
) -> Annotated[Payload, _results.GetTraceResultOut]:
    page = await service.get_trace(args.run_id, args.after_sequence, args.limit)
    return {"events": page.events, "hasMore": page.has_more}


# ------------------------------------------------------------------ beyond the original


@tool(
    "telic_cast",
    title="Cast a subagent",
    description=(
        "For hosts that start child agents, while nextAction is an executing work node: "
        "open one cast with a routing reason (a need code and why) and a turn and token "
        "budget. Returns the handoff to give the child (cast id, brief, pointers, "
        "permissions, budget; never your transcript). The child must answer with one "
        "evidence packet through telic_return_packet. Refusals carry the packet "
        "contract's code."
    ),
    summary="Cast a native subagent for the executing node (routing reason + budget).",
)
async def _cast(
    service: Service, args: _args.CastArgs, _: Call
) -> Annotated[Payload, _results.CastResultOut]:
    return {"cast": await service.cast(**args.model_dump())}


@tool(
    "telic_cast_progress",
    title="Report a child's spend",
    description=(
        "Report a cast child's spend so far: turns, tool calls and tokens, as the host "
        "counts them (Telic cannot observe them, so they are recorded as self-reported). "
        "Returns the cast's state; past a cap the child may only return a typed partial."
    ),
    summary="Report a child's spend.",
)
async def _cast_progress(
    service: Service, args: _args.CastProgressArgs, _: Call
) -> Annotated[Payload, _results.CastProgressResultOut]:
    return {"castId": args.cast_id, "cast": await service.cast_progress(**args.model_dump())}


@tool(
    "telic_return_packet",
    title="Return a child's evidence packet",
    description=(
        "Return the evidence packet a cast child produced. Telic checks its bounds, "
        "verifies its quotes against the ledger and seals it. Returns the sealed packet "
        "with its pk_... token: cite that token in your next phase artifact."
    ),
    summary="Return a child's evidence packet; quotes are verified against the ledger.",
)
async def _return_packet(
    service: Service, args: _args.ReturnPacketArgs, _: Call
) -> Annotated[Payload, _results.ReturnPacketResultOut]:
    return {"packet": await service.return_packet(args.run_id, args.cast_id, args.packet)}


@tool(
    "telic_get_digest",
    title="Read the packet digest",
    description=(
        "Return the run's packet-consumption digest: one line per evidence packet with "
        "its verdict and its spend in the packet contract's line format, and beside each "
        "line its marks: whether the parent's next decision cited it, that the tokens are "
        "self-reported, and what Telic observed the child spend."
    ),
    summary=(
        "The run's packet digest in the contract's line format, and beside each line its marks "
        "(consumption, self-reported tokens, observed spend)."
    ),
    read_only=True,
    idempotent=True,
)
async def _digest(
    service: Service, args: _args.RunArgs, _: Call
) -> Annotated[Payload, _results.DigestResultOut]:
    view = await service.get_digest_view(args.run_id)
    return {
        "runId": args.run_id,
        "digest": view.text,
        "marks": [mark.to_wire() for mark in view.marks],
        "omitted": view.omitted,
    }


@tool(
    "telic_check_tool_action",
    title="Check a native tool action",
    description=(
        "Before each native action (a serial host asks itself; a hook asks for it): decide "
        "whether the capability may act on the target under the run's permissions now "
        "(mode, authorization, work node). "
        "Returns the decision (allow or deny, with the deciding reason) and records it in "
        "the run's trace. A host written for the original Telic may also pass action_id "
        "and expected_run_version (then target is optional)."
    ),
    summary=(
        "Pre-action permission decision, asked by a hook or by a serial host before each native "
        "action (traced); also takes the original's `action_id`, `expected_run_version`."
    ),
    idempotent=True,  # an identical decision is recorded once
)
async def _check(
    service: Service, args: _args.CheckToolActionArgs, _: Call
) -> Annotated[Payload, _results.CheckResultOut]:
    from telic.controller import Token

    token = None
    if args.action_id is not None and args.expected_run_version is not None:
        token = Token(args.action_id, args.expected_run_version)
    decision = await service.broker_check(args.run_id, args.capability, args.target, token)
    return {"decision": decision}


@tool(
    "telic_replay_run",
    title="Replay a run",
    description=(
        "Replay a run step by step: one step per stored artifact, in trace order, with the "
        "phase that produced it and whether it still matches its digest (ok, mismatch, "
        "missing); highlights name topology escalations and denied tool-action checks. "
        "Read-only. Returns the report (and the run's hash-chain walk)."
    ),
    summary=(
        "The run step by step: one step per artifact, its phase, its digest status, highlights "
        "(the original's, after 1.0)."
    ),
    read_only=True,
    idempotent=True,
)
async def _replay(
    service: Service, args: _args.RunArgs, _: Call
) -> Annotated[Payload, _results.ReplayResultOut]:
    return {"report": await service.replay_run(args.run_id)}


@tool(
    "telic_verify_run",
    title="Verify a run's hash chain",
    description=(
        "Re-hash every artifact and trace record of a run and walk its hash chain. Returns "
        "whether the run is intact, how many records were checked and the first broken one."
    ),
    summary="Re-hash and walk the run's hash chain.",
    read_only=True,
    idempotent=True,
)
async def _verify(
    service: Service, args: _args.RunArgs, _: Call
) -> Annotated[Payload, _results.VerifyResultOut]:
    report = await service.verify_run(args.run_id)
    return {
        "runId": args.run_id,
        "intact": report.ok,
        "recordsChecked": report.records_checked,
        "firstBroken": report.first_broken,
    }


TOOL_NAMES: Final = tuple(spec.name for spec in TOOLS)
"""Every tool's name, in listing order."""
