"""The actors of a run and the typed messages they take: the run actor (the single writer of one
run), the five role actors that check a phase's submissions, and the launcher that starts runs.

Replies are ``Outcome`` values: a refusal is a reply, not an actor failure, so a refused
submission never restarts anything. The ``Controller``'s ledger commit is fenced by the run
version, so writers in other processes are kept out too; a run actor's open casts are a copy of
what the ledger holds (``_sync_casts``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, Literal, TypeVar, cast, get_args

import anyio

from telic._errors import InvalidTransition, Issue, TelicError
from telic._secrets import redact
from telic.casting import (
    CHILD_EVENTS,
    DECISION_TYPES,
    EXHAUSTED_EVENT,
    PROGRESS_EVENT,
    SEALED_EVENT,
    STARTED_EVENT,
    WALL_GRACE_MS,
    Admission,
    Bell,
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
    executing_node,
    exhausted_summary,
    next_deadline,
    observe,
    packet_artifact,
    packet_uri,
    parse_time,
    progress_summary,
    read_trace,
    record_progress,
    reopen_casts,
    run_verifier,
    seal_return,
    seal_unreturned,
    seconds,
    unobserved_packets,
)
from telic.controller import (
    PHASES,
    Accepted,
    Controller,
    Rejection,
    RunState,
    StartRequest,
    StepResult,
    SubmitArtifact,
    Token,
    check_broker_token,
    envelope_ref,
    refuse_secrets,
    step,
    tool_layers,
)
from telic.ledger import Ledger, NewArtifact
from telic.permissions import (
    BrokerDecision,
    Layer,
    broker_decision,
    permission_record,
    policy_names,
    reopens_read,
)
from telic.protocol import parse_artifact
from telic.roles._checks import CHECK_ACTOR, CheckRecord, check_event_id, record_plan
from telic_actors import Actor, ActorRef, Ask
from telic_packets import (
    CastType,
    ConsumptionRecord,
    Packet,
    PacketRefusal,
)

T = TypeVar("T")


# ---------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """A reply: the value, or the error the run refused the call with."""

    value: T | None = None
    error: Exception | None = None

    def unwrap(self) -> T:
        """Return the value or raise the error (the one place a refusal is raised)."""
        if self.error is not None:
            raise self.error
        return cast(T, self.value)


@dataclass(frozen=True, slots=True)
class StartRun(Ask[Outcome[StepResult]]):
    """Start a run: what it asks for, the repository it works in and the enabled cast types."""

    request: StartRequest
    repository_root: str
    cast_types: tuple[CastType, ...]
    """The cast-type entries the user enabled."""


@dataclass(frozen=True, slots=True)
class _Step(Ask[Outcome[StepResult]]):
    """A step of the run, fenced by the token of its next action."""

    action_id: str
    expected_run_version: int


@dataclass(frozen=True, slots=True)
class GroundRun(_Step):
    """Accept a grounding: the manifest and its documents in wire form."""

    manifest: Mapping[str, object]
    documents: tuple[Mapping[str, object], ...]


@dataclass(frozen=True, slots=True)
class Submit(_Step):
    """Submit an artifact: the decoded body, by reference, and its sourceRefs."""

    artifact_type: str
    body: object
    source_refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Answer(_Step):
    """Answer the pending clarification with one choice id."""

    response: str
    elicited: bool


@dataclass(frozen=True, slots=True)
class CancelRun(_Step):
    """Cancel the run."""


@dataclass(frozen=True, slots=True)
class CastChild(Ask[Outcome[Admission]]):
    """Cast a child: the cast request as the parent sent it."""

    request: CastRequest


@dataclass(frozen=True, slots=True)
class Progress(Ask[Outcome[ProgressStatus]]):
    """A child's cumulative progress report."""

    cast_id: str
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class ReturnPacket(Ask[Outcome[Packet]]):
    """A child's raw return (a mapping, or any other value, which is not a packet)."""

    cast_id: str
    raw: object


@dataclass(frozen=True, slots=True)
class CheckTool(Ask[Outcome[BrokerDecision]]):
    """A host hook's pre-action permission question; ``token`` in the original's dialect."""

    capability: str
    target: str | None
    token: Token | None = None


@dataclass(frozen=True, slots=True)
class Expire(Ask[Outcome[None]]):
    """The deadline keeper's nudge: a cast's wall budget or its grace ran out."""


@dataclass(frozen=True, slots=True)
class Validate(Ask[Accepted | Rejection]):
    """Ask a role actor to check a submission against the run state the run actor loaded."""

    state: RunState
    submission: SubmitArtifact


RunMessage = (
    GroundRun
    | Submit
    | Answer
    | CancelRun
    | CastChild
    | Progress
    | ReturnPacket
    | CheckTool
    | Expire
)
"""What a run actor's mailbox accepts."""


# ---------------------------------------------------------------------- roles

Role = Literal[
    "scenario_author", "task_compiler", "quality_controller", "executor", "release_auditor"
]
"""The five logical roles the host's model plays."""

ROLES: Final[tuple[Role, ...]] = get_args(Role)


class RoleActor(Actor[Validate]):
    """One logical role: checks the submissions of the phases it owns through the pure core.

    A role actor holds no run state and never writes: the run actor sends it only the phases
    ``PHASES`` gives it, and commits exactly the step it accepted.
    """

    def __init__(self, role: Role) -> None:
        self.role = role

    async def on_message(self, message: Validate) -> Accepted | Rejection:
        """Check one submission; a refusal is the reply (``step`` never raises one).

        A submission for a phase this role does not own is refused before ``step``: the run
        actor routes by ``PHASES``, and the role keeps its own boundary all the same.
        """
        phase = message.state.run.phase
        spec = PHASES.get(phase)
        if spec is None or spec.role != self.role:
            text = f"the {self.role} role does not own phase {phase}"
            issue = Issue("", "role", text, "RUN-PHASE-TYPE")
            return Rejection(InvalidTransition(text, issues=(issue,)))
        return step(message.state, message.submission)


# ---------------------------------------------------------------------- the run actor

_CAST_MESSAGES = (CastChild, Progress, ReturnPacket, Expire)
"""The messages that act on open casts: each checks the copy against the ledger first."""
_CAST_ARTIFACTS = frozenset({"CastRecord", "EvidencePacket"})
_CAST_EVENTS = frozenset(
    {STARTED_EVENT, PROGRESS_EVENT, EXHAUSTED_EVENT, SEALED_EVENT, *CHILD_EVENTS}
)
"""A native child's events (written by the host's hook) move a cast's observed spend too."""


@dataclass(frozen=True, slots=True)
class RunDeps:
    """What every run actor shares."""

    ledger: Ledger
    controller: Controller
    roles: Mapping[str, ActorRef[Validate]]
    server_cast_types: tuple[CastType, ...]
    clock: Callable[[], str]
    new_id: Callable[[], str]
    bell: Bell = field(default_factory=Bell)
    """Rung when a run's open casts (and so their wall-clock deadlines) change."""


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
    synced: tuple[int, int] | None = None
    """Artifacts and trace events of the run when ``casts`` was last checked against them."""
    own: set[str] = field(default_factory=set)
    """Ids of the cast records this process wrote since then (not another writer's)."""

    @property
    def idle(self) -> bool:
        """Whether the actor may be stopped: nothing in hand, queued or in flight."""
        if self.ref is None:
            return True
        return self.busy == 0 and not self.casts and self.ref.statistics().current_buffer_used == 0


class RunActor(Actor[RunMessage]):
    """The single writer of one run. Stopping it seals nothing: an open cast's state is in the
    ledger and outlives the actor."""

    def __init__(self, slot: RunSlot, deps: RunDeps) -> None:
        self._slot = slot
        self._deps = deps
        self._run_id = slot.run_id

    # ------------------------------------------------------------------ lifecycle

    async def on_start(self) -> None:
        """Reopen the casts the ledger holds without a packet: their children may still return."""
        if self._slot.recovered:
            return
        try:
            await self._sync_casts()
            self._slot.recovered = True
        except TelicError:
            return  # retried by the next incarnation

    async def on_message(self, message: RunMessage) -> object:
        """Handle one state change; a refusal is the reply, never a failure."""
        self._slot.busy += 1
        self._slot.last_active = anyio.current_time()
        before = next_deadline(self._slot.casts.values())
        try:
            if isinstance(message, _CAST_MESSAGES):
                await self._sync_casts()
            await self._expire()
            value = await self._handle(message)
        except (TelicError, PacketRefusal) as error:
            return Outcome(error=error)
        finally:
            self._slot.busy -= 1
            self._slot.last_active = anyio.current_time()
            if next_deadline(self._slot.casts.values()) != before:
                self._deps.bell.ring()
        return Outcome(value=value)

    async def _handle(self, message: RunMessage) -> object:
        match message:
            case Submit():
                return await self._submit(message)
            case GroundRun():
                return await self._ground(message)
            case Answer():
                result = await self._deps.controller.answer_clarification(
                    self._run_id,
                    message.action_id,
                    message.expected_run_version,
                    message.response,
                    elicited=message.elicited,
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
            case Expire():
                return None  # ``_expire`` has run

    # ------------------------------------------------------------------ controller steps

    async def _submit(self, message: Submit) -> StepResult:
        """One path for every submission: load once, ``step`` in the phase's role actor, settle.

        A phase no role owns (grounding, or a run that has ended) is stepped here, by the same
        function, and refused by it. A rejection is settled (its DENY records stored), then
        raised.
        """
        deps = self._deps
        loaded = await deps.controller.load(self._run_id)
        # A linked run's submission is judged with the prior-run artifacts it cites, read (and
        # re-verified) now; the state the controller commits against stays the loaded one.
        state = await deps.controller.linked(loaded, message.body, message.source_refs)
        token = Token(message.action_id, message.expected_run_version)
        now = deps.clock()
        submission = SubmitArtifact(
            token, message.artifact_type, message.body, message.source_refs, now
        )
        spec = PHASES.get(state.run.phase)
        role = deps.roles.get(spec.role) if spec is not None else None
        if role is not None and state.run.status == "running":
            outcome = await role.ask(Validate(state, submission))
        else:
            outcome = step(state, submission)
        result = await deps.controller.settle(self._run_id, loaded, outcome, now)
        if isinstance(result, TelicError):
            raise result
        decision = None
        if message.artifact_type in DECISION_TYPES and isinstance(message.body, Mapping):
            decision = str(message.body.get("id", ""))
        return await self._after(result, decision)

    async def _ground(self, message: GroundRun) -> StepResult:
        manifest = parse_artifact("ContextManifest", message.manifest)
        documents = [parse_artifact("ContextDocument", d) for d in message.documents]
        result = await self._deps.controller.ground(
            self._run_id, message.action_id, message.expected_run_version, manifest, documents
        )
        return await self._after(result)

    async def _after(self, result: StepResult, decision_id: str | None = None) -> StepResult:
        """Record consumption against an accepted decision; seal casts whose node moved on.

        Returns ``result`` without its state: an idle actor's last reply stays referenced, and a
        run's whole state is too much to keep per idle run.
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
        await self._seal_stale(state)
        return reply

    # ------------------------------------------------------------------ casting

    async def _sync_casts(self) -> None:
        """Check the open casts against the ledger; rebuild them if another writer moved them.

        Only the records appended since the last check are looked at. A cast record this
        process did not write means another server did: the copy is rebuilt from the whole
        trace, as after a restart, and the casts whose node no longer executes are sealed. A
        rebuild rings the keeper's bell itself: a start rebuilds before any message.
        """
        slot = self._slot
        state = await self._deps.controller.load(self._run_id)
        now = (len(state.artifacts), len(state.trace))
        if slot.synced == now:
            return
        moved = slot.synced is None or slot.synced[0] > now[0] or slot.synced[1] > now[1]
        if not moved and slot.synced is not None:
            artifacts, events = slot.synced
            moved = any(
                state.artifacts[i].type in _CAST_ARTIFACTS and state.artifacts[i].id not in slot.own
                for i in range(artifacts, now[0])
            ) or any(
                state.trace[i].event_type in _CAST_EVENTS and state.trace[i].id not in slot.own
                for i in range(events, now[1])
            )
        rebuild = moved and bool(state.all("CastRecord") or slot.casts)
        before = next_deadline(slot.casts.values())
        if rebuild:
            trace = await read_trace(self._deps.ledger, self._run_id)
            slot.casts = reopen_casts(
                state, trace, registry=effective_registry(self._deps.server_cast_types, state)
            )
        slot.synced = now
        slot.own.clear()
        try:
            if rebuild:
                await self._seal_stale(state)  # as at a start: another server moved the node on
        finally:
            if next_deadline(slot.casts.values()) != before:
                self._deps.bell.ring()

    def _wrote(self, *ids: str) -> None:
        """Note cast records this process wrote, so that ``_sync_casts`` does not rebuild."""
        if self._slot.synced is not None:
            self._slot.own.update(ids)

    def _stamp(self) -> tuple[str, float]:
        """One reading of the run clock: its timestamp and the same instant in seconds."""
        stamp = self._deps.clock()
        return stamp, seconds(stamp)

    async def _seal_stale(self, state: RunState) -> None:
        """Seal the open casts whose work node no longer executes."""
        executing = executing_node(state)
        current = None if executing is None else (executing[0].uri, executing[1].id)
        for open_cast in list(self._slot.casts.values()):
            if current != (open_cast.plan_uri, open_cast.cast.work_node_id):
                await self._seal_unreturned(open_cast, "its work node stopped executing")

    async def _cast(self, message: CastChild) -> Admission:
        deps = self._deps
        request = message.request
        wire = request.to_wire()
        refuse_secrets("The cast request", wire, tuple(wire))  # brief, pointers are stored
        state = await deps.controller.load(self._run_id)
        now, at = self._stamp()
        admission = admit_cast(
            state,
            request,
            registry=effective_registry(self._deps.server_cast_types, state),
            open_casts=self._slot.casts,
            cast_id="cast-" + deps.new_id(),
            now=at,
        )
        open_cast = OpenCast(
            cast=admission.cast,
            permissions=admission.permissions,
            depth=admission.depth,
            plan_uri=admission.plan_uri,
            started_at=at,
            parent_cast_id=request.parent_cast_id,
            pointers=tuple(admission.handoff.pointers),
        )
        uri = cast_uri(self._run_id, admission.cast_id)
        started = event(
            state.run,
            STARTED_EVENT,
            actor="executor",
            event_id=deps.new_id(),
            timestamp=now,
            input_refs=(admission.plan_uri, *admission.handoff.pointers),
            output_refs=(uri,),
            summary=(
                f"Cast {admission.cast_id} ({admission.cast.cast_type}, "
                f"{admission.cast.routing.need_code}) for node {admission.cast.work_node_id} "
                f"at depth {admission.depth}"
            ),
        )
        await deps.ledger.store_supporting(self._run_id, cast_artifact(open_cast, now), [started])
        self._wrote(admission.cast_id, started.event_id or "")
        self._slot.casts[admission.cast_id] = open_cast
        parent = self._slot.casts.get(request.parent_cast_id or "")
        if parent is not None:
            parent.children += 1
        # A brief is a decision about a packet only where it cites it: uncited packets wait for
        # the parent's next phase artifact (or, for a nested caster, its own return).
        packets = [f"artifact://{self._run_id}/{ref}" for ref in request.packet_refs]
        text = " ".join([request.brief, *request.packet_refs])
        await self._observe(
            state,
            uri,
            text,
            (*request.pointers, *packets),
            parent=request.parent_cast_id,
            only_cited=True,
        )
        return admission

    def _open(self, cast_id: str) -> OpenCast:
        open_cast = self._slot.casts.get(cast_id)
        if open_cast is None:
            raise PacketRefusal("cast_not_open", "the cast is not open: it returned or was sealed")
        return open_cast

    async def _progress(self, message: Progress) -> ProgressStatus:
        # Counted on a copy, put in place once recorded: a failed write leaves the cast as it was.
        open_cast = replace(self._open(message.cast_id))
        now, at = self._stamp()
        status = record_progress(
            open_cast,
            turns=message.turns,
            tool_calls=message.tool_calls,
            input_tokens=message.input_tokens,
            output_tokens=message.output_tokens,
            now=at,
        )
        run = await self._deps.ledger.get_run(self._run_id)
        events = [
            event(
                run,
                PROGRESS_EVENT,
                actor="executor",
                event_id=self._deps.new_id(),
                timestamp=now,
                output_refs=(cast_uri(self._run_id, open_cast.cast_id),),
                summary=progress_summary(open_cast),
            )
        ]
        if status.exhausted:
            events.append(self._exhausted_event(run, open_cast, now))
        await self._record(open_cast, events)
        return status

    def _exhausted_event(self, run: Any, open_cast: OpenCast, now: str) -> Any:
        return event(
            run,
            EXHAUSTED_EVENT,
            actor="controller",
            event_id=self._deps.new_id(),
            timestamp=now,
            output_refs=(cast_uri(self._run_id, open_cast.cast_id),),
            summary=exhausted_summary(open_cast),
        )

    async def _record(self, open_cast: OpenCast, events: list[Any]) -> None:
        """Write a cast's events, then put the cast (counted on a copy) in place."""
        await self._deps.ledger.record_events(self._run_id, events)
        self._wrote(*(e.event_id or "" for e in events))
        self._slot.casts[open_cast.cast_id] = open_cast

    async def _return(self, message: ReturnPacket) -> Packet:
        open_cast = self._open(message.cast_id)
        refuse_secrets("The child's return", message.raw)  # the cast stays open
        state = await self._deps.controller.load(self._run_id)
        now, at = self._stamp()
        packet = seal_return(
            open_cast,
            message.raw,
            verifier=run_verifier(state),
            now=parse_time(now),
            clock=lambda: at,
        )
        await self._store_sealed(open_cast, packet, "returned", now)
        return packet

    async def _seal_unreturned(self, open_cast: OpenCast, why: str) -> None:
        now, at = self._stamp()
        packet = seal_unreturned(open_cast, now=parse_time(now), clock=lambda: at)
        await self._store_sealed(open_cast, packet, why, now)

    async def _store_sealed(self, open_cast: OpenCast, packet: Packet, why: str, now: str) -> None:
        deps = self._deps
        run = await deps.ledger.get_run(self._run_id)
        sealed = event(
            run,
            SEALED_EVENT,
            actor="controller",
            event_id=deps.new_id(),
            timestamp=now,
            input_refs=(cast_uri(self._run_id, open_cast.cast_id),),
            output_refs=(packet_uri(packet),),
            summary=f"Packet {packet.packet_id} {packet.outcome}/{packet.verdict}: {why}",
        )
        await deps.ledger.store_supporting(self._run_id, packet_artifact(packet, now), [sealed])
        self._wrote(packet.packet_id, sealed.event_id or "")
        self._slot.casts.pop(open_cast.cast_id, None)
        if open_cast.children == 0:
            return
        # The packet is this cast's decision about its own children's packets.
        state = await deps.controller.load(self._run_id)
        stored = state.by_id(packet.packet_id)
        if stored is not None:
            await self._observe(
                state,
                stored.uri,
                decision_text(dict(stored.wire)),
                tuple(line.source for line in packet.evidence),
                parent=open_cast.cast_id,
            )

    async def _expire(self) -> None:
        """Mark casts past their wall-clock cap exhausted; seal them once ``WALL_GRACE_MS`` more
        ran out (a capped child may still return its typed partial meanwhile)."""
        if not any(c.cast.budget.max_wall_ms is not None for c in self._slot.casts.values()):
            return
        now, at = self._stamp()
        for open_cast in list(self._slot.casts.values()):
            limit = open_cast.cast.budget.max_wall_ms
            if limit is None:
                continue
            wall = open_cast.wall_ms(at)
            if wall > limit + WALL_GRACE_MS:
                await self._seal_unreturned(open_cast, "wall-clock budget and its grace ran out")
            elif wall > limit and not open_cast.exhausted:
                capped = replace(open_cast, stop_reason="wall_capped")
                run = await self._deps.ledger.get_run(self._run_id)
                await self._record(capped, [self._exhausted_event(run, capped, now)])

    async def _observe(
        self,
        state: RunState,
        consumer_ref: str,
        text: str,
        refs: tuple[str, ...],
        *,
        parent: str | None = None,
        only_cited: bool = False,
    ) -> None:
        """Record consumption of ``parent``'s pending packets against one of its decisions.

        ``only_cited``: record only the packets the decision cites (a cast's brief), leaving
        the others pending for the parent's next decision.
        """
        if not state.all("EvidencePacket"):
            return
        deps = self._deps
        slot = self._slot
        # Only the trace events after the last one read: the cost does not grow with the run.
        slot.consumed_through = await consumption_since(
            deps.ledger, self._run_id, slot.consumed_through, slot.consumed
        )
        pending = unobserved_packets(state, slot.consumed, parent)
        if not pending:
            return
        found = observe(
            pending,
            consumer_ref=consumer_ref,
            text=text,
            refs=refs,
            at=parse_time(deps.clock()),
        )
        pairs = [(r, p) for r, p in zip(found, pending, strict=True) if r.cited or not only_cited]
        if not pairs:
            return
        events = [
            consumed_event(
                state.run, record, packet, event_id=deps.new_id(), timestamp=deps.clock()
            )
            for record, packet in pairs
        ]
        await deps.ledger.record_events(self._run_id, events)

    # ------------------------------------------------------------------ permissions

    async def _check_tool(self, message: CheckTool) -> BrokerDecision:
        """Decide a host's pre-action question and trace it (``Service.broker_check``)."""
        deps = self._deps
        capability, target, token = message.capability, message.target, message.token
        state = await deps.controller.load(self._run_id)
        if token is not None:
            check_broker_token(state, token)
        layers = tool_layers(state)

        def decide(asked: Sequence[Layer]) -> BrokerDecision:
            return broker_decision(
                cast(Any, capability),
                target,
                asked,
                names=policy_names(state.run.requested_mode),
                policy_ref=envelope_ref(state),
                repository_root=state.run.repository_root,
                protected_granted=state.envelope.authorization.protected_paths_granted,
            )

        answer = decide(layers)
        # The original's dialect is what a host's own hook asks before a native action: it gets
        # the hook's decision, whose one widening lets the user's grant decide a read before the
        # audit (docs/hosts.md); our dialect keeps the three layers of a 1.0 tool.
        if token is not None and reopens_read(state.run.phase, answer.decision):
            answer = decide(layers[:2])
        decision = answer.decision
        known = decision.code != "unknown_capability"
        # The target is the host's text: trace (and answer) it with every likely secret replaced
        # by a typed marker, cut to the trace's bound only afterwards so no secret is cut in half.
        if decision.scope is not None:
            decision = replace(decision, scope=redact(decision.scope))
            answer = replace(answer, decision=decision)
        if token is not None:
            verb = "allowed" if decision.allowed else "denied"
            tail = "" if decision.allowed else f": {answer.reason_code}"
            wanted = CheckRecord("broker_decision", answer.permission_decision())
            summary = f"Broker {verb} {capability}{tail}."
            inputs: tuple[str, ...] = (answer.policy_ref,)
        else:
            wanted = CheckRecord(
                "permission_checked" if known else "tool_action_refused",
                permission_record(decision.verdict, capability, decision.scope, decision.reason)
                if known
                else None,
            )
            summary = decision.reason
            inputs = ()
        if not record_plan(state, wanted):  # the same decision is already in the trace
            return answer
        checked = event(
            state.run,
            wanted.event_type,
            actor=CHECK_ACTOR,
            event_id=check_event_id(self._run_id, wanted),
            timestamp=deps.clock(),
            input_refs=inputs,
            permission_decision=wanted.permission_decision,
            summary=summary,
        )
        # once: another server on this store may have recorded the same decision meanwhile
        await deps.ledger.record_events(self._run_id, [checked], once=True)
        return answer


class Launcher(Actor[StartRun]):
    """Starts runs: the run does not exist yet, so no run actor can."""

    def __init__(self, deps: RunDeps) -> None:
        self._deps = deps

    async def on_message(self, message: StartRun) -> Outcome[StepResult]:
        """Start one run and store the cast types its user enabled."""
        deps = self._deps
        try:
            result = await deps.controller.start_run(
                message.request, repository_root=message.repository_root
            )
            cast_types = message.cast_types
            if cast_types:
                now = deps.clock()
                policy = NewArtifact(
                    artifact_id="cast-policy",
                    type="CastPolicy",
                    schema_version="1.0",
                    producer="user",
                    body={"castTypes": [entry.to_wire() for entry in cast_types]},
                    created_at=now,
                )
                enabled = sorted(e.cast_type for e in cast_types if e.enabled)
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
