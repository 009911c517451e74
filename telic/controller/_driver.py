"""The async shell around the pure core: load a run, ``step`` it, commit the result atomically.

Every call loads the run, asks the pure core, and commits what the core returned in one ledger
transaction fenced by the run version. A rejection writes nothing. Time and ids come from the
injected ``clock`` and ``new_id`` callables, so two controllers fed the same calls produce the
same runs.

Loading costs the same at the 2,000th artifact as at the 10th: the controller keeps the
``RunState`` of recently used runs and asks the ledger only for what was appended since (one
read of the run row when nothing was). What another controller, process or actor wrote is picked
up by that read, verified like any other; what this controller commits itself is appended to its
copy from the step's own records, whose bodies it validated and hashed before the commit. A run
it starts is kept from its first commit, and the copy carries the artifacts' ledger records, so
``get_run`` is one read of the ledger too.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from telic._errors import IntegrityError, NotFound, TelicError
from telic.controller._draft import Draft, draft_for
from telic.controller._events import (
    Accepted,
    AnswerClarification,
    Cancel,
    Ground,
    Rejection,
    Submission,
    SubmitArtifact,
    Token,
)
from telic.controller._lineage import check_prior, linked_uris
from telic.controller._log import Log
from telic.controller._machine import step
from telic.controller._next import next_action
from telic.controller._start import (
    StartRequest,
    canonical_actor,
    canonical_event_type,
    open_run,
)
from telic.controller._state import (
    LinkedArtifact,
    RunState,
    StoredArtifact,
    TraceEntry,
    artifact_uri,
    parse_artifact_uri,
)
from telic.controller._vocabulary import protocol_phase
from telic.ledger import (
    ArtifactBody,
    ArtifactRecord,
    Commit,
    Ledger,
    NewArtifact,
    NewTraceEvent,
    RunChanges,
    RunRecord,
    TraceRecord,
    budget_snapshot,
    utc_now,
)
from telic.protocol import (
    ClarificationAction,
    ContextDocument,
    ContextManifest,
    PhaseAction,
    TerminalAction,
    TraceEvent,
    parse_artifact,
)

Action = PhaseAction | ClarificationAction | TerminalAction

DEFAULT_CACHED_RUNS: Final = 256
"""How many runs' states a controller keeps between calls (least recently used go first)."""


@dataclass(frozen=True, slots=True)
class StepResult:
    """What a state-changing call returns: the run row after it and the next action."""

    run: RunRecord
    next_action: Action
    artifact: ArtifactRecord | None = None
    """The stored record of a supporting Evidence or ScenarioSpec submission."""
    state: RunState | None = None
    """The run's state right after the step, when the controller knows it without reading the
    ledger again (nothing else was written in between); otherwise None: ``load`` the run."""
    draft: Draft | None = None
    """The draft of the artifact ``next_action`` requires (``draft_for``); None when there is
    none, and on a supporting (Evidence, ScenarioSpec) acknowledgement, which leaves the phase
    and its draft unchanged."""


@dataclass(frozen=True, slots=True)
class RunDetails:
    """``get_run``: the full run row, artifact metadata and the next action."""

    run: RunRecord
    artifacts: tuple[ArtifactRecord, ...]
    next_action: Action
    draft: Draft | None = None
    """The draft of the artifact ``next_action`` requires, or None."""


@dataclass(frozen=True, slots=True)
class TraceView:
    """One page of a run's canonical trace."""

    events: tuple[TraceEvent, ...]
    has_more: bool


@dataclass(frozen=True, slots=True)
class _Cached:
    """A run's state, with its whole trace, as of its first ``known`` artifacts and events."""

    state: RunState
    records: Log[ArtifactRecord]
    """The ledger records of those artifacts, in order (what ``get_run`` lists)."""

    @property
    def known(self) -> tuple[int, int]:
        return len(self.state.artifacts), len(self.state.trace)


def _entry(event: TraceRecord) -> TraceEntry:
    return TraceEntry(
        event.event_id, event.sequence, event.event_type, event.permission_decision, event.actor
    )


def _new_artifact(artifact: StoredArtifact) -> NewArtifact:
    quota = artifact.body.problem_frame_ref if artifact.type == "ScenarioSpec" else None
    return NewArtifact(
        artifact_id=artifact.id,
        type=artifact.type,
        schema_version="1.0",
        producer=artifact.producer,
        body=artifact.wire,
        source_refs=artifact.source_refs,
        quota_key=quota,
        created_at=artifact.created_at,
        canonical=artifact.canonical,
    )


class Controller:
    """The Telic controller over a ledger: start, ground, submit, answer, cancel and read runs."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        clock: Callable[[], str] = utc_now,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        cached_runs: int = DEFAULT_CACHED_RUNS,
    ) -> None:
        self._ledger = ledger
        self._clock = clock
        self._new_id = new_id
        self._runs: OrderedDict[str, _Cached] = OrderedDict()
        self._cached_runs = cached_runs

    # ------------------------------------------------------------------ loading

    async def load(self, run_id: str) -> RunState:
        """Return the pure-core state of a run. Raises ``NotFound``."""
        return (await self._load(run_id)).state

    async def _load(self, run_id: str) -> _Cached:
        cached = self._runs.get(run_id)
        if cached is not None:
            artifacts, events = cached.known
            changes = await self._ledger.read_changes(run_id, artifacts, events)
            if changes.artifact_count >= artifacts and changes.event_count >= events:
                return self._remember(run_id, cached, self._apply(run_id, cached, changes))
            # The store holds less than this copy saw (it was replaced): start over.
            self._runs.pop(run_id, None)
        changes = await self._ledger.read_changes(run_id)
        return self._remember(run_id, None, self._apply(run_id, None, changes))

    @staticmethod
    def _apply(run_id: str, cached: _Cached | None, changes: RunChanges) -> _Cached:
        """Return ``cached`` with what the ledger appended after it (verified by the ledger)."""
        unchanged = cached is not None and not changes.artifacts and not changes.events
        if unchanged and cached is not None and cached.state.run == changes.run:
            return cached
        added = tuple(
            StoredArtifact(
                id=item.record.artifact_id,
                type=item.record.type,
                producer=item.record.producer,
                uri=artifact_uri(run_id, item.record.artifact_id),
                source_refs=item.record.source_refs,
                created_at=item.record.created_at,
                body=parse_artifact(item.record.type, dict(item.body)),
                wire=item.body,
                sha256=item.record.sha256,
            )
            for item in changes.artifacts
        )
        run = changes.run
        entries = tuple(_entry(e) for e in changes.events)
        records = tuple(item.record for item in changes.artifacts)
        if cached is None:
            state = RunState(run=run, artifacts=added, trace=entries)
            return _Cached(state, Log.of(records))
        # Extending shares the cached logs (see ``Log``): O(appended), not O(run length).
        state = cached.state.extended(added, run=run, trace=cached.state.with_trace(entries))
        return _Cached(state, cached.records.appended(records))

    def _remember(self, run_id: str, base: _Cached | None, new: _Cached) -> _Cached:
        """Keep ``new`` unless another call already replaced ``base`` with a later state."""
        current = self._runs.get(run_id)
        if current is None or current is base or sum(current.known) <= sum(new.known):
            self._runs[run_id] = new
        self._runs.move_to_end(run_id)
        while len(self._runs) > self._cached_runs:
            self._runs.popitem(last=False)
        return new

    def _committed(
        self, run_id: str, base: _Cached | None, state: RunState, commit: Commit
    ) -> RunState | None:
        """Append this controller's own commit to its copy, if nobody wrote in between.

        ``base`` is the copy the step was decided on (None for a run this commit created).
        Returns the run's state after the commit, or None when the next load must read it.
        """
        artifacts, events = (0, 0) if base is None else base.known
        records = Log[ArtifactRecord].of(()) if base is None else base.records
        contiguous = all(
            a.position == artifacts + i for i, a in enumerate(commit.artifacts, 1)
        ) and all(e.sequence == events + i for i, e in enumerate(commit.events, 1))
        if not contiguous or self._runs.get(run_id) is not base:
            return None  # another writer came first: the next load reads both from the ledger
        entries = tuple(_entry(e) for e in commit.events)
        # ``state`` came out of ``step`` (whose phase steps start an empty trace): the trace is the
        # base's, which the step was decided on, plus this commit's events.
        trace = entries if base is None else base.state.with_trace(entries)
        new = state.extended((), run=commit.run, trace=trace)
        self._remember(run_id, base, _Cached(new, records.appended(commit.artifacts)))
        return new

    # ------------------------------------------------------------------ commands

    async def start_run(self, request: StartRequest, *, repository_root: str) -> StepResult:
        """Start a run at version 1 in context grounding (docs/protocol.md §2 tool 1).

        Raises:
            LineageRefused: ``request.prior_run_id`` names no run this one may follow
                (``RUN-PRIOR-*``).
        """
        now = self._clock()
        state, notes = open_run(
            request,
            run_id=self._new_id(),
            message_id=self._new_id(),
            now=now,
            repository_root=repository_root,
        )
        if request.prior_run_id is not None:
            await self._check_prior(request.prior_run_id, state.run.repository_root)
        message, envelope = (_new_artifact(a) for a in state.artifacts)
        action = next_action(state)
        commit = await self._ledger.create_run(
            state.run, message, envelope, self._events(state.run, notes, now)
        )
        # The run's first state is known: its first load need not read it back.
        started = self._committed(state.run.run_id, None, state, commit)
        return StepResult(commit.run, action, state=started, draft=draft_for(state))

    async def _check_prior(self, prior_run_id: str, repository_root: str) -> None:
        """Read the prior run and verify every record of it; refuse what may not be followed."""
        try:
            prior: RunRecord | None = await self._ledger.get_run(prior_run_id)
        except NotFound:
            prior = None
        report = None
        if prior is not None and prior.repository_root == repository_root and prior.terminal:
            report = await self._ledger.verify_run(prior_run_id)
        check_prior(prior_run_id, repository_root, prior, report)

    async def linked(self, state: RunState, body: object, source_refs: Sequence[str]) -> RunState:
        """Return ``state`` with the prior-run artifacts a submission cites, read just now.

        Each read re-verifies the artifact's digest and record (``read_artifact``); what is
        missing or fails is recorded as such, and ``REF-LINKED-EVIDENCE`` refuses a citation
        of it. A run without a prior reads nothing.
        """
        uris = linked_uris(state, body, source_refs)
        prior = state.run.prior_run_id
        if prior is None or not uris:
            return state if not state.links else state.with_links({})
        links: dict[str, LinkedArtifact] = {}
        for uri in uris:
            parsed = parse_artifact_uri(uri)
            assert parsed is not None
            try:
                stored = await self._ledger.read_artifact(prior, parsed[1])
            except NotFound:
                links[uri] = LinkedArtifact(uri, None)
            except IntegrityError:
                links[uri] = LinkedArtifact(uri, "Evidence", intact=False)
            else:
                kind = stored.body.get("kind") if stored.record.type == "Evidence" else None
                kind = kind if isinstance(kind, str) else None
                links[uri] = LinkedArtifact(uri, stored.record.type, kind)
        return state.with_links(links)

    async def ground(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        manifest: ContextManifest,
        documents: Sequence[ContextDocument] = (),
    ) -> StepResult:
        """Accept a grounded ContextManifest and its documents; the run moves to framing."""
        token = Token(action_id, expected_run_version)
        return await self._step(run_id, Ground(token, manifest, tuple(documents), self._clock()))

    async def submit_artifact(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        artifact_type: str,
        body: object,
        source_refs: Sequence[str] = (),
    ) -> StepResult:
        """Submit a host artifact; the producer is derived, never chosen by the caller."""
        token = Token(action_id, expected_run_version)
        submission = SubmitArtifact(token, artifact_type, body, tuple(source_refs), self._clock())
        return await self._step(run_id, submission)

    async def answer_clarification(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        response: str,
        *,
        elicited: bool = False,
    ) -> StepResult:
        """Answer the pending clarification with exactly one choice id.

        ``elicited``: the user chose it in the client's form (MCP elicitation); the trace says so.
        """
        token = Token(action_id, expected_run_version)
        answer = AnswerClarification(token, response, self._new_id(), self._clock(), elicited)
        return await self._step(run_id, answer)

    async def cancel(self, run_id: str, action_id: str, expected_run_version: int) -> StepResult:
        """Cancel the run; a terminal run is returned unchanged."""
        token = Token(action_id, expected_run_version)
        return await self._step(run_id, Cancel(token, self._clock()))

    async def _step(self, run_id: str, submission: Submission) -> StepResult:
        cached = await self._load(run_id)
        state = cached.state
        if isinstance(submission, SubmitArtifact) and state.run.prior_run_id is not None:
            state = await self.linked(state, submission.body, submission.source_refs)
        result = await self._settle(run_id, state, cached, step(state, submission), submission.now)
        if isinstance(result, TelicError):
            raise result
        return result

    async def settle(
        self, run_id: str, state: RunState, outcome: Accepted | Rejection, now: str
    ) -> StepResult | TelicError:
        """Commit what ``step(state, …)`` accepted, or persist what a rejection must.

        For a caller that ran ``step`` itself on a ``state`` that ``load`` returned (the run
        actor, whose role actor stepped it): the submission is not validated a second time, and
        the state is not read again. A phase step is fenced by ``state.run.version``.

        A rejection leaves one trace only: the DENY ``permission_checked`` decisions for
        mutations a read-only WorkResult attempted (already de-duplicated by ``step``); its
        error is returned, for the caller to reply with or raise.

        Raises:
            LedgerConflict: the run moved on since ``state`` was loaded.
        """
        cached = self._runs.get(run_id)
        base = cached if cached is not None and cached.state is state else None
        return await self._settle(run_id, state, base, outcome, now)

    async def _settle(
        self,
        run_id: str,
        state: RunState,
        base: _Cached | None,
        outcome: Accepted | Rejection,
        now: str,
    ) -> StepResult | TelicError:
        if isinstance(outcome, Rejection):
            if outcome.events:
                notes = self._events(state.run, outcome.events, now)
                await self._ledger.record_events(run_id, notes)
            return outcome.error
        new = outcome.state
        action = next_action(new)
        if not outcome.changed:
            replayed = None
            if outcome.replay_of is not None:
                replayed = await self._record_of(run_id, base, outcome.replay_of)
            draft = None if replayed is not None else draft_for(new)
            return StepResult(state.run, action, replayed, state=state, draft=draft)
        events = self._events(new.run, outcome.events, now)
        if outcome.supporting:
            commit = await self._ledger.store_supporting(
                run_id, _new_artifact(outcome.artifacts[0]), events
            )
            after = None
            if base is not None and not commit.replayed:
                after = self._committed(run_id, base, new, commit)
            # An acknowledged Evidence or ScenarioSpec leaves the phase and its draft as they were:
            # the host already holds that draft, so it is not sent again (get_next_action has it).
            return StepResult(commit.run, action, commit.artifacts[0], state=after)
        commit = await self._ledger.commit_step(
            run_id,
            state.run.version,
            new.run,
            [_new_artifact(a) for a in outcome.artifacts],
            events,
        )
        after = None if base is None else self._committed(run_id, base, new, commit)
        if outcome.escalated is not None:
            raise outcome.escalated  # the run moved up a topology; the artifact was not stored
        return StepResult(commit.run, action, state=after, draft=draft_for(new))

    async def _record_of(
        self, run_id: str, base: _Cached | None, artifact_id: str
    ) -> ArtifactRecord:
        """The stored record of ``artifact_id``: from the cached run when it is there."""
        cached = base if base is not None else self._runs.get(run_id)
        if cached is not None:
            for record in cached.records:
                if record.artifact_id == artifact_id:
                    return record
        return (await self._ledger.read_artifact(run_id, artifact_id)).record

    def _events(self, run: RunRecord, notes: Sequence[Any], now: str) -> list[NewTraceEvent]:
        budgets = budget_snapshot(run.prompt_revisions_remaining, run.remediations_remaining)
        return [
            NewTraceEvent(
                actor=note.actor,
                phase=note.phase,
                event_type=note.event_type,
                input_refs=note.input_refs,
                output_refs=note.output_refs,
                permission_decision=note.permission_decision,
                decision_summary=note.summary,
                budget_snapshot=budgets,
                event_id=self._new_id(),
                timestamp=now,
            )
            for note in notes
        ]

    # ------------------------------------------------------------------ queries

    async def get_next_action(self, run_id: str) -> Action:
        """Return the run's next action (read-only)."""
        return next_action(await self.load(run_id))

    async def get_run(self, run_id: str) -> RunDetails:
        """Return the run row, its artifact metadata and its next action.

        One read of the ledger: the artifact records come with the run's state.
        """
        cached = await self._load(run_id)
        state = cached.state
        return RunDetails(state.run, tuple(cached.records), next_action(state), draft_for(state))

    async def get_next(self, run_id: str) -> tuple[Action, Draft | None]:
        """Return the run's next action and its draft (read-only)."""
        state = await self.load(run_id)
        return next_action(state), draft_for(state)

    async def get_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return an artifact of the run with its verified body. Raises ``NotFound``."""
        return await self._ledger.read_artifact(run_id, artifact_id)

    async def list_runs(self, limit: int = 20) -> tuple[RunRecord, ...]:
        """Return the runs' records, newest first (``RunRecord.summary_wire`` lists one)."""
        return await self._ledger.list_runs(limit)

    async def get_trace(self, run_id: str, after_sequence: int = 0, limit: int = 100) -> TraceView:
        """Return a page of the run's trace as canonical TraceEvents."""
        page = await self._ledger.page_trace(run_id, after_sequence, limit)
        events = tuple(
            TraceEvent.from_wire(
                {
                    "schemaVersion": "1.0",
                    "id": event.event_id,
                    "runId": event.run_id,
                    "sequence": event.sequence,
                    "timestamp": event.timestamp,
                    "actor": canonical_actor(event.actor),
                    "phase": protocol_phase(event.phase),
                    "eventType": canonical_event_type(event.event_type),
                    "inputRefs": list(event.input_refs),
                    "outputRefs": list(event.output_refs),
                    "tool": None,
                    "permissionDecision": event.permission_decision,
                    "budgetSnapshot": dict(event.budget_snapshot),
                    "rationaleSummary": event.decision_summary or event.event_type,
                    "redactions": [],
                }
            )
            for event in page.events
        )
        return TraceView(events, page.has_more)
