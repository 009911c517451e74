"""The service: the actor system behind the MCP server, and the one API it codes against.

Each state-changing method checks the ids it is given, sends one typed message to the run's actor
and raises the refusal its reply carries, if any (the package docstring draws the actors).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

import anyio

from telic._errors import Issue, LimitExceeded, NotFound, TelicError, UsageError
from telic._secrets import warm as warm_secret_rules
from telic.casting import (
    Admission,
    CastRequest,
    PacketStats,
    ProgressStatus,
    Sleeper,
    consumption_records,
    find_config,
    load_cast_types,
    next_deadline,
    observed_spend,
    packet_stats,
    parse_cast_types,
    run_digest,
    run_digest_view,
    seconds,
    sleeper_on,
)
from telic.controller import (
    Action,
    Controller,
    Draft,
    ReplayReport,
    RunDetails,
    StartRequest,
    StepResult,
    Token,
    TraceView,
    read_replay,
)
from telic.grounding import GroundingProgress, ground_repository
from telic.ledger import (
    ArtifactBody,
    Ledger,
    RunRecord,
    VerifyReport,
    default_state_dir,
    open_ledger,
    utc_now,
)
from telic.permissions import BrokerDecision, Decision
from telic.protocol import MAX_IDENTIFIER, ContextDocument, ContextManifest
from telic.roles._run import (
    ROLES,
    Answer,
    CancelRun,
    CastChild,
    CheckTool,
    Expire,
    GroundRun,
    Launcher,
    Outcome,
    Progress,
    ReturnPacket,
    RoleActor,
    RunActor,
    RunDeps,
    RunSlot,
    StartRun,
    Submit,
    Validate,
)
from telic_actors import (
    ActorRef,
    Ask,
    MailboxStatistics,
    MessageRefused,
    RestartPolicy,
    Supervisor,
    open_runtime,
)
from telic_packets import (
    CastType,
    ConsumptionRecord,
    DigestView,
    Packet,
    PacketRefusal,
    canonical_json,
)

R = TypeVar("R")

MAX_RETURN_BYTES: Final = 65_536
"""A child's raw return beyond this many bytes of JSON cannot seal under 8 KiB: refused early."""
DEFAULT_IDLE_SECONDS: Final = 300.0
"""How long a run actor with nothing in flight stays up after its last message."""
RECOVERED_RUNS: Final = 1_000
"""How many of the newest runs a starting service looks through for casts left open."""


def _id(value: str, name: str) -> str:
    """Return ``value`` if it is short enough to be an id; refuse it as a limit otherwise."""
    if len(value) > MAX_IDENTIFIER:
        message = f"{name} is {len(value)} characters; an id is at most {MAX_IDENTIFIER}"
        raise LimitExceeded(message, issues=(Issue(name, "too_long", message),))
    return value


class GroundingOutput(Protocol):
    """What a grounder returns (``telic.grounding.GroundingResult`` has this shape)."""

    @property
    def manifest(self) -> ContextManifest: ...

    @property
    def documents(self) -> Sequence[ContextDocument]: ...


class Grounder(Protocol):
    """``telic.grounding.ground_repository``'s signature: ground a run's repository."""

    async def __call__(
        self,
        *,
        run_id: str,
        original_request: str,
        repository_root: str,
        mode: str,
        active_paths: Sequence[str] = (),
        budget: Any = None,
        excluded_roots: Sequence[str | Path] = (),
        progress: Any = None,
    ) -> GroundingOutput:
        """Ground the repository for one run."""
        ...


@dataclass(frozen=True, slots=True)
class GroundResult:
    """What ``ground`` returns: the run row, the next action and the manifest in wire form."""

    run: RunRecord
    next_action: Action
    manifest_wire: Mapping[str, object]
    draft: Draft | None = None
    """The draft of the artifact the next action requires, or None."""


class Service:
    """Telic's operations over one ledger, with every state change sent through actors.

    Get one from ``open_service``. Errors are the ``telic`` error tree and, for casts and
    packets, ``telic_packets.CastRefusal``/``PacketRefusal`` with their codes.
    """

    def __init__(
        self,
        *,
        runs: Supervisor,
        launcher: ActorRef[StartRun],
        deps: RunDeps,
        repository_root: Path,
        state_dir: Path,
        grounder: Grounder | None,
        idle_seconds: float,
    ) -> None:
        self._repository_root = repository_root
        self._ledger = deps.ledger
        self._controller = deps.controller
        self._runs = runs
        self._launcher = launcher
        self._deps = deps
        self._state_dir = state_dir
        self._grounder = grounder
        self._idle_seconds = idle_seconds
        self._slots: dict[str, RunSlot] = {}
        self._spawned = 0
        self._last_reap = anyio.current_time()
        self._recovering = anyio.Lock()

    @property
    def server_cast_types(self) -> tuple[CastType, ...]:
        """The cast types the server configuration registers."""
        return self._deps.server_cast_types

    @property
    def active_runs(self) -> tuple[str, ...]:
        """Ids of the runs whose actor is up."""
        return tuple(run_id for run_id, slot in self._slots.items() if slot.ref is not None)

    def mailbox_statistics(self, run_id: str) -> MailboxStatistics | None:
        """Return the statistics of the run actor's mailbox, or None when it is not up."""
        slot = self._slots.get(run_id)
        if slot is None or slot.ref is None:
            return None
        return slot.ref.statistics()

    # ------------------------------------------------------------------ plumbing

    async def _ask(self, run_id: str, message: Ask[Outcome[R]]) -> R:
        """Send ``message`` to the run's actor, started if it is not up; raise its refusal."""
        if len(run_id) > MAX_IDENTIFIER:
            raise NotFound("Run not found")
        if run_id not in self._slots:
            await self._ledger.get_run(run_id)  # NotFound before any actor is started
        for _ in range(3):
            slot = self._slots.get(run_id) or self._slots.setdefault(run_id, RunSlot(run_id))
            ref = slot.ref
            if ref is None or not ref.is_alive:
                self._spawned += 1
                ref = slot.ref = self._runs.spawn(
                    functools.partial(RunActor, slot, self._deps),
                    name=f"run:{run_id}:{self._spawned}",
                )
            try:
                outcome = await ref.ask(message)
            except MessageRefused as refused:
                if refused.reason != "closed":
                    raise
                continue  # the actor was reaped between lookup and send: never enqueued
            await self._maybe_reap()
            return outcome.unwrap()
        raise UsageError(f"the actor of run {run_id} kept stopping")

    async def keep_deadlines(self, sleep_until: Sleeper) -> None:
        """Expire wall-capped casts on time, not only when their run's next message arrives.

        Runs for the life of the service: waits until the earliest deadline of any open cast or
        until the casts change, then sends ``Expire`` to each run with a deadline due. A failed
        expiry or recovery (the ledger is away) is tried again a second later: it must not end
        the service.
        """
        bell = self._deps.bell
        while True:
            try:
                await self.recover_casts()
                break
            except TelicError:
                await anyio.sleep(1.0)
        while True:
            bell.rearm()
            due = next_deadline(c for slot in self._slots.values() for c in slot.casts.values())
            async with anyio.create_task_group() as race:

                async def wake(wait: Any, scope: anyio.CancelScope = race.cancel_scope) -> None:
                    await wait()
                    scope.cancel()

                race.start_soon(wake, bell.wait)
                if due is not None:
                    race.start_soon(wake, functools.partial(sleep_until, due))
            now = seconds(self._deps.clock())
            failed = False
            for run_id, slot in list(self._slots.items()):
                deadline = next_deadline(slot.casts.values())
                if deadline is not None and deadline <= now:
                    try:
                        await self._ask(run_id, Expire())
                    except (TelicError, PacketRefusal):
                        failed = True
            if failed:
                await anyio.sleep(1.0)

    async def recover_casts(self) -> int:
        """Bring back the casts a previous server left open, so their deadlines are kept.

        Every executing run of this repository among the newest ``RECOVERED_RUNS`` gets its
        actor, which reopens its casts and expires what is due; an actor left without an open
        cast is stopped again. One pass at a time.

        Returns:
            How many runs came back with at least one open cast.
        """
        root = str(self._repository_root)
        recovered = 0
        async with self._recovering:
            for run in await self._ledger.list_runs(RECOVERED_RUNS):
                if run.status != "running" or run.phase != "agent_4_execute":
                    continue
                if run.repository_root != root:
                    continue
                if run.run_id in self._slots:
                    continue  # a host's message got there first: its actor reopened the casts
                try:
                    await self._ask(run.run_id, Expire())
                except (TelicError, PacketRefusal):
                    continue  # the run's next message tries again, as before the keeper existed
                slot = self._slots.get(run.run_id)
                if slot is None:
                    continue
                if slot.casts:
                    recovered += 1
                elif slot.idle:
                    await self._stop(slot)
        return recovered

    async def _maybe_reap(self) -> None:
        now = anyio.current_time()
        if now - self._last_reap >= self._idle_seconds / 2:
            self._last_reap = now
            await self.reap_idle(self._idle_seconds)

    async def reap_idle(self, idle_for: float = 0.0) -> int:
        """Stop the actors of runs idle for ``idle_for`` seconds with no cast in flight.

        Returns:
            How many run actors were stopped.
        """
        now = anyio.current_time()
        stopped = 0
        for slot in list(self._slots.values()):
            if slot.idle and now - slot.last_active >= idle_for:
                stopped += await self._stop(slot)
        return stopped

    async def _stop(self, slot: RunSlot) -> int:
        """Forget an idle run's slot and stop its actor, if any; return how many stopped."""
        ref, slot.ref = slot.ref, None
        del self._slots[slot.run_id]
        if ref is None:
            return 0
        await ref.stop()
        return 1

    # ------------------------------------------------------------------ state changes

    async def start_run(
        self,
        request: StartRequest,
        *,
        cast_types: Sequence[CastType | Mapping[str, object]] | None = None,
    ) -> StepResult:
        """Start a run (docs/protocol.md §2 tool 1); ``cast_types`` are the user's enabled entries.

        Raises:
            SchemaViolation: a malformed request or cast-type entry.
            RuleViolation: the authority inputs break an ``SR-*`` rule, or the request does not
                fit the topology asked for (``TP-OVERRIDE-*``).
            LineageRefused: ``prior_run_id`` names no run this one may follow.
        """
        entries = parse_cast_types(cast_types or ())
        start = StartRun(request, str(self._repository_root), entries)
        result = (await self._launcher.ask(start)).unwrap()
        # The run exists and no earlier session of it left casts open: its first message needs
        # neither the existence check nor the actor's recovery pass (two reads of the ledger).
        run_id = result.run.run_id
        if run_id not in self._slots:
            self._slots[run_id] = RunSlot(run_id, recovered=True, last_active=anyio.current_time())
        return result

    async def ground(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        *,
        active_paths: Sequence[str] = (),
        budget: Mapping[str, int] | None = None,
        progress: Callable[[GroundingProgress], None] | None = None,
    ) -> GroundResult:
        """Ground the run's repository and accept the manifest (docs/protocol.md §2 tool 2)."""
        state = await self._controller.load(run_id)
        grounder = self._grounder or ground_repository
        grounded = await grounder(
            run_id=run_id,
            original_request=str(state.request.body.content),
            repository_root=state.run.repository_root,
            mode=state.run.requested_mode,
            active_paths=tuple(active_paths),
            budget=budget,
            excluded_roots=(self._state_dir,),
            progress=progress,
        )
        manifest_wire = grounded.manifest.to_wire()
        documents = tuple(document.to_wire() for document in grounded.documents)
        message = GroundRun(
            _id(action_id, "action_id"), expected_run_version, manifest_wire, documents
        )
        result = await self._ask(run_id, message)
        return GroundResult(result.run, result.next_action, manifest_wire, result.draft)

    async def submit_artifact(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        artifact_type: str,
        body: object,
        source_refs: Sequence[str] = (),
    ) -> StepResult:
        """Submit a host artifact; ``StepResult.artifact`` holds a stored Evidence/ScenarioSpec."""
        token = _id(action_id, "action_id"), expected_run_version
        message = Submit(*token, artifact_type[:MAX_IDENTIFIER], body, tuple(source_refs))
        return await self._ask(run_id, message)

    async def answer_clarification(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        response: str,
        *,
        elicited: bool = False,
    ) -> StepResult:
        """Answer the pending clarification with one choice id (``elicited``: the user chose it
        in the client's form, MCP elicitation)."""
        token = _id(action_id, "action_id"), expected_run_version
        return await self._ask(run_id, Answer(*token, response, elicited))

    async def cancel_run(
        self, run_id: str, action_id: str, expected_run_version: int
    ) -> StepResult:
        """Cancel the run; casts in flight are sealed as cancelled packets."""
        token = _id(action_id, "action_id"), expected_run_version
        return await self._ask(run_id, CancelRun(*token))

    async def check_tool_action(self, run_id: str, capability: str, target: str | None) -> Decision:
        """Decide whether the host may act now (pre-action hook); the decision is traced."""
        return (await self.broker_check(run_id, capability, target)).decision

    async def broker_check(
        self,
        run_id: str,
        capability: str,
        target: str | None,
        token: Token | None = None,
    ) -> BrokerDecision:
        """Decide whether the host may act now, answered in both shapes.

        With the original's token the token is checked first and the decision is traced as
        ``broker_decision``; without it, as ``permission_checked``. The decision itself is the
        same either way.

        Raises:
            StaleToken: the token is stale or foreign (nothing is recorded).
        """
        if token is not None:
            _id(token.action_id, "action_id")
        return await self._ask(run_id, CheckTool(capability, target, token))

    # ------------------------------------------------------------------ casting

    async def cast(
        self,
        run_id: str,
        *,
        cast_type: str,
        routing: object,
        budget: object,
        brief: str,
        pointers: Sequence[str] = (),
        packet_refs: Sequence[str] = (),
        parent_cast_id: str | None = None,
    ) -> Admission:
        """Cast a child for the executing work node, or raise the typed refusal.

        ``routing`` and ``budget`` are the decoded JSON the parent sent (``None`` when absent);
        ``parent_cast_id`` is set when a child casts a grandchild. The result's ``handoff`` is
        what the child receives; ``to_wire()`` gives the whole grant.

        Raises:
            CastRefusal: one of the contract's cast refusal codes.
            PacketRefusal: ``unknown_field`` in the handoff.
        """
        request = CastRequest(
            cast_type=cast_type,
            routing=_wire(routing),
            budget=_wire(budget),
            brief=brief,
            pointers=tuple(pointers),
            packet_refs=tuple(packet_refs),
            parent_cast_id=parent_cast_id,
        )
        return await self._ask(run_id, CastChild(request))

    async def cast_progress(
        self,
        run_id: str,
        cast_id: str,
        *,
        turns: int,
        tool_calls: int,
        input_tokens: int,
        output_tokens: int,
    ) -> ProgressStatus:
        """Report a child's cumulative counters; past a cap the cast is exhausted.

        Raises:
            PacketRefusal: ``cast_not_open``, or ``budget_exhausted_requires_partial`` once the
                cast is exhausted.
        """
        message = Progress(cast_id[:MAX_IDENTIFIER], turns, tool_calls, input_tokens, output_tokens)
        return await self._ask(run_id, message)

    async def return_packet(self, run_id: str, cast_id: str, raw: object) -> Packet:
        """Seal a child's return into a verified packet stored with the run.

        Raises:
            PacketRefusal: a repair request (``not_a_packet``, ``packet_too_large``,
                ``budget_exhausted_requires_partial``, ``cast_not_open``, …).
        """
        if isinstance(raw, Mapping):
            try:
                size = len(canonical_json(raw))
            except ValueError:
                raise PacketRefusal("not_a_packet", "the return is not JSON") from None
            if size > MAX_RETURN_BYTES:
                raise PacketRefusal(
                    "packet_too_large", f"the return is {size} bytes; a packet is at most 8192"
                )
        else:
            raw = "prose"  # only its type matters: it is not a packet
        return await self._ask(run_id, ReturnPacket(cast_id[:MAX_IDENTIFIER], raw))

    async def get_digest(self, run_id: str) -> str:
        """Render the run's packet digest (≤ 6000 characters, unconsumed packets first)."""
        state = await self._controller.load(run_id)
        records = await consumption_records(self._ledger, run_id)
        return run_digest(state, records, await observed_spend(self._ledger, run_id))

    async def get_digest_view(self, run_id: str) -> DigestView:
        """Return the run's digest in the contract's line format, each line's marks beside it."""
        state = await self._controller.load(run_id)
        records = await consumption_records(self._ledger, run_id)
        return run_digest_view(state, records, await observed_spend(self._ledger, run_id))

    async def get_packet_stats(self, limit: int = 10_000) -> PacketStats:
        """Aggregate the packets of this repository's runs (the ``limit`` most recent runs).

        The unconsumed rate per cast type and need code, and the spend per verdict; every
        packet body is re-verified as it is read.
        """
        root = str(self._repository_root)
        runs: list[dict[str, tuple[Packet, ConsumptionRecord | None]]] = []
        for run in await self._ledger.list_runs(limit):
            if run.repository_root != root:
                continue
            stored = await self._ledger.list_artifacts(run.run_id)
            packets = [a for a in stored if a.type == "EvidencePacket"]
            records = await consumption_records(self._ledger, run.run_id) if packets else {}
            found: dict[str, tuple[Packet, ConsumptionRecord | None]] = {}
            for artifact in packets:
                body = (await self._ledger.read_artifact(run.run_id, artifact.artifact_id)).body
                packet = Packet.from_wire(dict(body))
                found[packet.packet_id] = (packet, records.get(packet.packet_id))
            runs.append(found)
        return packet_stats(runs)

    # ------------------------------------------------------------------ reads

    async def get_next_action(self, run_id: str) -> Any:
        """Return the run's next action."""
        return await self._controller.get_next_action(run_id)

    async def get_next(self, run_id: str) -> tuple[Action, Draft | None]:
        """Return the run's next action and the draft of the artifact it requires (or None)."""
        return await self._controller.get_next(run_id)

    async def get_run(self, run_id: str) -> RunDetails:
        """Return the run row, its artifact metadata and its next action."""
        return await self._controller.get_run(run_id)

    async def get_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return one artifact of the run with its verified body."""
        return await self._controller.get_artifact(run_id, artifact_id)

    async def list_runs(self, limit: int = 20) -> tuple[RunRecord, ...]:
        """Return the runs' records, newest first (``RunRecord.summary_wire`` lists one)."""
        return await self._controller.list_runs(limit)

    async def get_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TraceView:
        """Return a page of the run's canonical trace."""
        return await self._controller.get_trace(run_id, after_sequence, limit)

    async def verify_run(self, run_id: str) -> VerifyReport:
        """Recompute every digest and chain link of the run."""
        await self._ledger.get_run(run_id)
        return await self._ledger.verify_run(run_id)

    async def replay_run(self, run_id: str) -> ReplayReport:
        """Replay the run step by step from its records (reads only)."""
        return await read_replay(self._ledger, run_id)


def _wire(value: object) -> object:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if callable(to_wire) else value


@asynccontextmanager
async def open_service(
    *,
    ledger: Ledger | None = None,
    database_url: str | None = None,
    repository_root: str | Path,
    state_dir: str | Path | None = None,
    cast_types: Sequence[CastType | Mapping[str, object]] = (),
    clock: Callable[[], str] | None = None,
    new_id: Callable[[], str] | None = None,
    config_path: str | Path | None = None,
    grounder: Grounder | None = None,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
    sleep_until: Sleeper | None = None,
) -> AsyncIterator[Service]:
    """Open the service for one repository for the duration of an ``async with`` block.

    Args:
        ledger: A ledger to use (and leave open); otherwise one is opened from ``database_url``
            (see ``open_ledger``) and closed on exit.
        database_url: The ledger URL when no ``ledger`` is given.
        repository_root: The absolute repository root runs work in.
        state_dir: The server's state directory (default: the repository's default state
            dir); its ``telic.toml`` or ``telic.json`` may register cast types.
        cast_types: Cast types the server enables in code, besides the configuration file.
        clock: The time source of runs (``utc_now`` by default).
        new_id: The id source of runs (UUID4 by default).
        config_path: An explicit configuration file instead of the state directory's.
        grounder: Replaces ``telic.grounding.ground_repository`` (tests, embedding).
        idle_seconds: How long an idle run actor stays up.
        sleep_until: Waits until the run clock reaches an instant (POSIX seconds), for the
            wall-clock deadlines of casts; by default it reads ``clock`` and sleeps.

    Raises:
        ContextSecurityError: the state directory lies inside the repository.
        UsageError, SchemaViolation: an unreadable or malformed configuration.
    """
    root = Path(repository_root)
    if not root.is_absolute():
        raise UsageError("repository_root must be an absolute path")
    state = Path(state_dir) if state_dir is not None else default_state_dir(root)
    configured = config_path if config_path is not None else find_config(state, root)
    server_types = parse_cast_types(
        [*cast_types, *(load_cast_types(configured) if configured is not None else ())]
    )
    run_clock = clock or utc_now
    run_ids = new_id or (lambda: str(uuid.uuid4()))
    # Import the detector now, off the event loop (it overlaps an MCP handshake under serve),
    # rather than during the first submission.
    await anyio.to_thread.run_sync(warm_secret_rules)
    async with AsyncExitStack() as stack:
        if ledger is None:
            ledger = await stack.enter_async_context(
                open_ledger(database_url, repository_root=root)
            )
        controller = Controller(ledger, clock=run_clock, new_id=run_ids)
        runtime = await stack.enter_async_context(open_runtime(name="telic"))
        roles: dict[str, ActorRef[Validate]] = {
            role: runtime.spawn(functools.partial(RoleActor, role), name=f"role:{role}")
            for role in ROLES
        }
        deps = RunDeps(
            ledger=ledger,
            controller=controller,
            roles=roles,
            server_cast_types=server_types,
            clock=run_clock,
            new_id=run_ids,
        )
        launcher = runtime.spawn(lambda: Launcher(deps), name="launcher")
        runs = runtime.spawn_supervisor(
            name="runs", policy=RestartPolicy(max_restarts=10, within=60.0)
        )
        service = Service(
            runs=runs,
            launcher=launcher,
            deps=deps,
            repository_root=root,
            state_dir=state,
            grounder=grounder,
            idle_seconds=idle_seconds,
        )
        keeper = await stack.enter_async_context(anyio.create_task_group())
        keeper.start_soon(
            service.keep_deadlines, sleep_until or sleeper_on(lambda: seconds(run_clock()))
        )
        try:
            yield service
        finally:
            keeper.cancel_scope.cancel()
