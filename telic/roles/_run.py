"""The run actor: the single writer of one run, and the launcher that starts runs.

Every state change of a run — ground, submit, answer, cancel, cast, progress, packet return, and
the permission checks host hooks record — is a message in its run actor's mailbox, handled one at
a time. A submission is first checked by the role actor that owns the run's phase, then committed
through the ``Controller`` (whose ledger commit is fenced by the run version, so writers in other
processes are kept out too). After each accepted decision the actor records packet consumption
and seals casts whose node is no longer executing: no cast disappears.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

import anyio

from telic._errors import TelicError
from telic.casting import (
    DECISION_TYPES,
    Admission,
    CastRequest,
    OpenCast,
    ProgressStatus,
    admit_cast,
    cast_artifact,
    cast_uri,
    consumed_event,
    consumption_since,
    decision_text,
    effective_registry,
    event,
    observe,
    packet_artifact,
    packet_uri,
    record_progress,
    run_verifier,
    seal_return,
    seal_unreturned,
    unobserved_packets,
)
from telic.controller import PHASES, Controller, RunState, StepResult, next_action, pending_node
from telic.ledger import Ledger, NewArtifact
from telic.permissions import Decision, Layer, authorize_action, effective_authorization
from telic.protocol import parse_artifact
from telic.protocol._types import PermissionSet
from telic.roles._blobs import BlobStage
from telic.roles._checks import CHECK_ACTOR, CheckRecord, record_plan
from telic.roles._messages import (
    Answer,
    CancelRun,
    CastChild,
    CheckTool,
    GroundRun,
    Outcome,
    Progress,
    ReturnPacket,
    RunMessage,
    StartRun,
    Submit,
    Validate,
)
from telic_actors import Actor, ActorRef
from telic_packets import CastType, ConsumptionRecord, Packet, PacketRefusal

__all__ = ["Launcher", "RunActor", "RunDeps", "RunSlot", "parse_time"]


def parse_time(timestamp: str) -> datetime:
    """Return the aware datetime of a ledger timestamp (``…Z``)."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class RunDeps:
    """What every run actor shares."""

    ledger: Ledger
    controller: Controller
    stage: BlobStage
    roles: Mapping[str, ActorRef[Validate]]
    server_cast_types: tuple[CastType, ...]
    clock: Callable[[], str]
    new_id: Callable[[], str]


@dataclass(slots=True)
class RunSlot:
    """A run's place in the service: its actor and the casts in flight, which outlive restarts."""

    run_id: str
    ref: ActorRef[RunMessage] | None = None
    casts: dict[str, OpenCast] = field(default_factory=dict)
    last_active: float = 0.0
    busy: int = 0
    recovered: bool = False
    consumed: dict[str, ConsumptionRecord] = field(default_factory=dict)
    """Packet id → consumption record, from the trace up to ``consumed_through``."""
    consumed_through: int = 0

    @property
    def idle(self) -> bool:
        """Whether the actor may be stopped: nothing in hand, queued or in flight."""
        if self.ref is None:
            return True
        return self.busy == 0 and not self.casts and self.ref.statistics().current_buffer_used == 0


def _projection_key(state: RunState) -> str:
    # The ledger only appends, so a run's id, version and record counts name one state of it.
    run = state.run
    return f"projection:{run.run_id}:{run.version}:{len(state.artifacts)}:{len(state.trace)}"


class RunActor(Actor[RunMessage]):
    """The single writer of one run."""

    def __init__(self, slot: RunSlot, deps: RunDeps) -> None:
        self._slot = slot
        self._deps = deps
        self._run_id = slot.run_id

    # ------------------------------------------------------------------ lifecycle

    async def on_start(self) -> None:
        """Seal casts a previous session left open (their children cannot return any more)."""
        if self._slot.recovered:
            return
        try:
            state = await self._deps.controller.load(self._run_id)
            sealed = {a.body.cast_id for a in state.all("EvidencePacket")}
            for record in state.all("CastRecord"):
                if record.id in sealed or record.id in self._slot.casts:
                    continue
                orphan = OpenCast(
                    cast=record.body,
                    permissions=PermissionSet.empty(),
                    depth=1,
                    plan_uri=record.source_refs[0],
                    started_at=anyio.current_time(),
                )
                await self._store_sealed(orphan, self._unreturned(orphan), "session ended")
            self._slot.recovered = True
        except TelicError:
            return  # retried by the next incarnation

    async def on_stop(self) -> None:
        """The session ends: casts still in flight are sealed as cancelled."""
        for open_cast in list(self._slot.casts.values()):
            try:
                await self._store_sealed(open_cast, self._unreturned(open_cast), "session ended")
            except TelicError:
                continue

    async def on_message(self, message: RunMessage) -> object:
        """Handle one state change; a refusal is the reply, never a failure."""
        self._slot.busy += 1
        self._slot.last_active = anyio.current_time()
        try:
            await self._expire()
            return Outcome(value=await self._handle(message))
        except (TelicError, PacketRefusal) as error:
            return Outcome(error=error)
        finally:
            self._slot.busy -= 1
            self._slot.last_active = anyio.current_time()

    async def _handle(self, message: RunMessage) -> object:
        match message:
            case Submit():
                return await self._submit(message)
            case GroundRun():
                return await self._ground(message)
            case Answer():
                payload = self._payload(message.payload)
                result = await self._deps.controller.answer_clarification(
                    self._run_id,
                    message.action_id,
                    message.expected_run_version,
                    str(payload.get("response", "")),
                )
                return await self._after(result)
            case CancelRun():
                result = await self._deps.controller.cancel(
                    self._run_id, message.action_id, message.expected_run_version
                )
                return await self._after(result)
            case CastChild():
                return await self._cast(message)
            case Progress():
                return await self._progress(message)
            case ReturnPacket():
                return await self._return(message)
            case CheckTool():
                return await self._check_tool(message)

    # ------------------------------------------------------------------ controller steps

    def _payload(self, key: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._deps.stage.get(key))

    async def _submit(self, message: Submit) -> StepResult:
        deps = self._deps
        payload = self._payload(message.payload)
        state = await deps.controller.load(self._run_id)
        spec = PHASES.get(state.run.phase)
        role = deps.roles.get(spec.role) if spec is not None else None
        if role is not None and state.run.status == "running":
            key = _projection_key(state)
            now = deps.clock()
            with deps.stage.staged(key, state, size=0):
                verdict = await role.ask(
                    Validate(
                        role=spec.role if spec is not None else "",
                        action_id=message.action_id,
                        expected_run_version=message.expected_run_version,
                        artifact_type=message.artifact_type,
                        projection=key,
                        payload=message.payload,
                        now=now,
                    )
                )
            # The role ran the whole step on this state: commit exactly what it accepted, or
            # persist what its rejection must (DENY records) and raise the rejection's error.
            result = await deps.controller.settle(self._run_id, state, verdict.unwrap(), now)
        else:
            result = await deps.controller.submit_artifact(
                self._run_id,
                message.action_id,
                message.expected_run_version,
                message.artifact_type,
                payload.get("body"),
                tuple(payload.get("sourceRefs", ())),
            )
        body = payload.get("body")
        decision = None
        if message.artifact_type in DECISION_TYPES and isinstance(body, Mapping):
            decision = str(body.get("id", ""))
        return await self._after(result, decision)

    async def _ground(self, message: GroundRun) -> StepResult:
        payload = self._payload(message.payload)
        manifest = parse_artifact("ContextManifest", payload.get("manifest"))
        documents = [parse_artifact("ContextDocument", d) for d in payload.get("documents", ())]
        result = await self._deps.controller.ground(
            self._run_id, message.action_id, message.expected_run_version, manifest, documents
        )
        return await self._after(result)

    async def _after(self, result: StepResult, decision_id: str | None = None) -> StepResult:
        """Record consumption against an accepted decision; seal casts whose node moved on.

        Returns the reply: ``result`` without its state, which only this step needed (an idle
        actor's last reply stays referenced until its next message, and a run's whole state is
        too much to keep per idle run).
        """
        reply = result if result.state is None else replace(result, state=None)
        if not self._slot.casts and decision_id is None:
            return reply
        # The step's own state when the controller has it (nothing was written since): no read.
        state = result.state
        if state is None:
            state = await self._deps.controller.load(self._run_id)
        if decision_id:
            stored = state.by_id(decision_id)
            if stored is not None:
                await self._observe(
                    state, stored.uri, decision_text(dict(stored.wire)), stored.source_refs
                )
        node = pending_node(state)
        plan = state.latest("WorkPlan")
        for open_cast in list(self._slot.casts.values()):
            executing = (
                state.run.phase == "agent_4_execute"
                and state.run.status == "running"
                and node is not None
                and plan is not None
                and node.id == open_cast.cast.work_node_id
                and plan.uri == open_cast.plan_uri
            )
            if not executing:
                await self._store_sealed(
                    open_cast, self._unreturned(open_cast), "its work node stopped executing"
                )
        return reply

    # ------------------------------------------------------------------ casting

    async def _cast(self, message: CastChild) -> Admission:
        deps = self._deps
        payload = self._payload(message.payload)
        request = CastRequest(
            cast_type=str(payload.get("castType", "")),
            routing=payload.get("routing"),
            budget=payload.get("budget"),
            brief=str(payload.get("brief", "")),
            pointers=tuple(payload.get("pointers", ())),
            packet_refs=tuple(payload.get("packetRefs", ())),
            parent_cast_id=payload.get("parentCastId"),
        )
        state = await deps.controller.load(self._run_id)
        policy = state.latest("CastPolicy")
        registry = effective_registry(
            deps.server_cast_types, () if policy is None else tuple(policy.body.cast_types)
        )
        admission = admit_cast(
            state,
            request,
            registry=registry,
            open_casts=self._slot.casts,
            cast_id="cast-" + deps.new_id(),
        )
        open_cast = OpenCast(
            cast=admission.cast,
            permissions=admission.permissions,
            depth=admission.depth,
            plan_uri=admission.plan_uri,
            started_at=anyio.current_time(),
            parent_cast_id=request.parent_cast_id,
        )
        uri = cast_uri(self._run_id, admission.cast_id)
        now = deps.clock()
        started = event(
            state.run,
            "cast_started",
            actor="executor",
            event_id=deps.new_id(),
            timestamp=now,
            input_refs=(admission.plan_uri,),
            output_refs=(uri,),
            summary=(
                f"Cast {admission.cast_id} ({admission.cast.cast_type}, "
                f"{admission.cast.routing.need_code}) for node {admission.cast.work_node_id} "
                f"at depth {admission.depth}"
            ),
        )
        await deps.ledger.store_supporting(self._run_id, cast_artifact(open_cast, now), [started])
        self._slot.casts[admission.cast_id] = open_cast
        parent = self._slot.casts.get(request.parent_cast_id or "")
        if parent is not None:
            parent.children += 1
        else:
            packets = [f"artifact://{self._run_id}/{ref}" for ref in request.packet_refs]
            text = " ".join([request.brief, *request.packet_refs])
            await self._observe(state, uri, text, (*request.pointers, *packets))
        return admission

    def _open(self, cast_id: str) -> OpenCast:
        open_cast = self._slot.casts.get(cast_id)
        if open_cast is None:
            raise PacketRefusal("cast_not_open", "the cast is not open: it returned or was sealed")
        return open_cast

    async def _progress(self, message: Progress) -> ProgressStatus:
        open_cast = self._open(message.cast_id)
        status = record_progress(
            open_cast,
            turns=message.turns,
            tool_calls=message.tool_calls,
            input_tokens=message.input_tokens,
            output_tokens=message.output_tokens,
            now=anyio.current_time(),
        )
        if status.newly_exhausted:
            run = await self._deps.ledger.get_run(self._run_id)
            exhausted = event(
                run,
                "cast_exhausted",
                actor="executor",
                event_id=self._deps.new_id(),
                timestamp=self._deps.clock(),
                output_refs=(cast_uri(self._run_id, open_cast.cast_id),),
                summary=f"Cast {open_cast.cast_id} exhausted ({status.stop_reason})",
            )
            await self._deps.ledger.record_events(self._run_id, [exhausted])
        return status

    async def _return(self, message: ReturnPacket) -> Packet:
        open_cast = self._open(message.cast_id)
        payload = self._payload(message.payload)
        state = await self._deps.controller.load(self._run_id)
        packet = seal_return(
            open_cast,
            payload.get("raw"),
            verifier=run_verifier(state),
            now=parse_time(self._deps.clock()),
            clock=anyio.current_time,
        )
        await self._store_sealed(open_cast, packet, "returned")
        return packet

    def _unreturned(self, open_cast: OpenCast) -> Packet:
        return seal_unreturned(
            open_cast, now=parse_time(self._deps.clock()), clock=anyio.current_time
        )

    async def _store_sealed(self, open_cast: OpenCast, packet: Packet, why: str) -> None:
        deps = self._deps
        run = await deps.ledger.get_run(self._run_id)
        now = deps.clock()
        sealed = event(
            run,
            "packet_sealed",
            actor="controller",
            event_id=deps.new_id(),
            timestamp=now,
            input_refs=(cast_uri(self._run_id, open_cast.cast_id),),
            output_refs=(packet_uri(packet),),
            summary=f"Packet {packet.packet_id} {packet.outcome}/{packet.verdict}: {why}",
        )
        await deps.ledger.store_supporting(self._run_id, packet_artifact(packet, now), [sealed])
        self._slot.casts.pop(open_cast.cast_id, None)

    async def _expire(self) -> None:
        """Seal casts that ran past their wall-clock budget without returning."""
        now = anyio.current_time()
        for open_cast in list(self._slot.casts.values()):
            limit = open_cast.cast.budget.max_wall_ms
            if limit is not None and open_cast.wall_ms(now) > limit:
                await self._store_sealed(
                    open_cast, self._unreturned(open_cast), "wall-clock budget ran out"
                )

    async def _observe(
        self, state: RunState, consumer_ref: str, text: str, refs: tuple[str, ...]
    ) -> None:
        if not state.all("EvidencePacket"):
            return
        deps = self._deps
        slot = self._slot
        # Only the trace events after the last one read: the cost does not grow with the run.
        slot.consumed_through = await consumption_since(
            deps.ledger, self._run_id, slot.consumed_through, slot.consumed
        )
        records = slot.consumed
        pending = unobserved_packets(state, records)
        if not pending:
            return
        found = observe(
            pending,
            consumer_ref=consumer_ref,
            text=text,
            refs=refs,
            at=parse_time(deps.clock()),
        )
        events = [
            consumed_event(
                state.run, record, packet, event_id=deps.new_id(), timestamp=deps.clock()
            )
            for record, packet in zip(found, pending, strict=True)
        ]
        await deps.ledger.record_events(self._run_id, events)

    # ------------------------------------------------------------------ permissions

    async def _check_tool(self, message: CheckTool) -> Decision:
        deps = self._deps
        payload = self._payload(message.payload)
        capability = str(payload.get("capability", ""))
        target = payload.get("target")
        state = await deps.controller.load(self._run_id)
        action = next_action(state)
        phase = getattr(action, "effective_permissions", None) or PermissionSet.empty()
        granted = state.envelope.authorization
        layers = (
            Layer.for_mode(state.run.mode),
            Layer.from_permissions(
                "authorization",
                effective_authorization(state.run.mode, granted.granted, granted.denied),
            ),
            Layer.from_permissions("phase", phase),
        )
        decision = authorize_action(
            cast(Any, capability),
            target if isinstance(target, str) else None,
            layers,
            repository_root=state.run.repository_root,
            protected_granted=granted.protected_paths_granted,
        )
        known = decision.code != "unknown_capability"
        wanted = CheckRecord(
            "permission_checked" if known else "tool_action_refused",
            {
                "decision": decision.verdict,
                "capability": capability,
                "scope": (decision.scope or capability)[:2048],
                "policyRefs": [],
                "rationaleSummary": decision.reason[:4096],
            }
            if known
            else None,
        )
        record = record_plan(state, wanted)  # raises for a finished run or past the cap
        if record is None:  # the same decision is already in the trace
            return decision
        checked = event(
            state.run,
            record.event_type,
            actor=CHECK_ACTOR,
            event_id=deps.new_id(),
            timestamp=deps.clock(),
            permission_decision=record.permission_decision,
            summary=decision.reason,
        )
        await deps.ledger.record_events(self._run_id, [checked])
        return decision


class Launcher(Actor[StartRun]):
    """Starts runs: the run does not exist yet, so no run actor can."""

    def __init__(self, deps: RunDeps) -> None:
        self._deps = deps

    async def on_message(self, message: StartRun) -> Outcome[StepResult]:
        """Start one run and store the cast types its user enabled."""
        deps = self._deps
        try:
            payload = cast(dict[str, Any], deps.stage.get(message.payload))
            arguments = dict(payload["arguments"])
            result = await deps.controller.start_run(**arguments)
            cast_types = payload.get("castTypes") or []
            if cast_types:
                now = deps.clock()
                policy = NewArtifact(
                    artifact_id="cast-policy",
                    type="CastPolicy",
                    schema_version="1.0",
                    producer="user",
                    body={"castTypes": cast_types},
                    created_at=now,
                )
                enabled = sorted(e["castType"] for e in cast_types if e.get("enabled"))
                note = event(
                    result.run,
                    "cast_types_enabled",
                    actor="user",
                    event_id=deps.new_id(),
                    timestamp=now,
                    output_refs=(f"artifact://{result.run.run_id}/cast-policy",),
                    summary="Cast types enabled by the user: " + (", ".join(enabled) or "none"),
                )
                await deps.ledger.store_supporting(result.run.run_id, policy, [note])
        except TelicError as error:
            return Outcome(error=error)
        return Outcome(value=replace(result, state=None))  # kept by the idle launcher otherwise
