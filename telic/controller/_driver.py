"""The async shell around the pure core: load a run, ``step`` it, commit the result atomically.

``Controller`` owns no state of its own beyond a parse cache: every call loads the run from the
ledger, asks the pure core, and commits what the core returned in one ledger transaction fenced
by the run version. A rejection writes nothing. Time and ids come from the injected ``clock``
and ``new_id`` callables, so two controllers fed the same calls produce the same runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from telic.controller._events import (
    Accepted,
    AnswerClarification,
    Cancel,
    Ground,
    Submission,
    SubmitArtifact,
    Token,
)
from telic.controller._machine import step
from telic.controller._next import next_action
from telic.controller._start import (
    canonical_actor,
    canonical_event_type,
    open_run,
    protocol_phase,
    snapshot,
)
from telic.controller._state import Run, RunState, StoredArtifact, TraceEntry, artifact_uri
from telic.ledger import (
    ArtifactBody,
    ArtifactRecord,
    Ledger,
    NewArtifact,
    NewTraceEvent,
    RunRecord,
    RunSummary,
    utc_now,
)
from telic.protocol._context import ContextDocument, ContextManifest
from telic.protocol._next_action import ClarificationAction, PhaseAction, TerminalAction
from telic.protocol._registry import parse_artifact
from telic.protocol._trace import TraceEvent
from telic.protocol._types import Mode, NativeSubagents

__all__ = ["Controller", "RunDetails", "StepResult", "TraceView"]

Action = PhaseAction | ClarificationAction | TerminalAction


@dataclass(frozen=True, slots=True)
class StepResult:
    """What a state-changing call returns: the run row after it and the next action."""

    run: RunRecord
    next_action: Action
    artifact: ArtifactRecord | None = None
    """The stored record of a supporting Evidence or ScenarioSpec submission."""


@dataclass(frozen=True, slots=True)
class RunDetails:
    """``get_run``: the full run row, artifact metadata and the next action."""

    run: RunRecord
    artifacts: tuple[ArtifactRecord, ...]
    next_action: Action


@dataclass(frozen=True, slots=True)
class TraceView:
    """One page of a run's canonical trace."""

    events: tuple[TraceEvent, ...]
    has_more: bool


def _new_uuid() -> str:
    return str(uuid.uuid4())


def run_record(run: Run) -> RunRecord:
    """Return the ledger row of ``run``."""
    return RunRecord(
        run_id=run.run_id,
        schema_version="1.0",
        repository_root=run.repository_root,
        requested_mode=run.mode,
        status=run.status,
        phase=run.phase,
        resume_phase=run.resume_phase,
        version=run.version,
        prompt_revisions_remaining=run.prompt_revisions_remaining,
        remediations_remaining=run.remediations_remaining,
        outcome_hint=run.outcome_hint,
        created_at=run.created_at,
        updated_at=run.updated_at,
        controller_state=run.controller_state,
    )


def run_from_record(record: RunRecord) -> Run:
    """Return the controller's view of a ledger row."""
    return Run(
        run_id=record.run_id,
        repository_root=record.repository_root,
        mode=record.requested_mode,  # type: ignore[arg-type]
        status=record.status,  # type: ignore[arg-type]
        phase=record.phase,  # type: ignore[arg-type]
        resume_phase=record.resume_phase,  # type: ignore[arg-type]
        version=record.version,
        prompt_revisions_remaining=record.prompt_revisions_remaining,
        remediations_remaining=record.remediations_remaining,
        outcome_hint=record.outcome_hint,  # type: ignore[arg-type]
        created_at=record.created_at,
        updated_at=record.updated_at,
        controller_state=record.controller_state,
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
    )


class Controller:
    """The Telic controller over a ledger: start, ground, submit, answer, cancel and read runs."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        clock: Callable[[], str] = utc_now,
        new_id: Callable[[], str] = _new_uuid,
    ) -> None:
        self._ledger = ledger
        self._clock = clock
        self._new_id = new_id
        self._parsed: dict[tuple[str, str], Any] = {}

    # ------------------------------------------------------------------ loading

    async def load(self, run_id: str) -> RunState:
        """Return the pure-core state of a run. Raises ``NotFound``."""
        record = await self._ledger.get_run(run_id)
        artifacts = []
        for meta in await self._ledger.list_artifacts(run_id):
            key = (meta.type, meta.sha256)
            stored = await self._ledger.read_artifact(run_id, meta.artifact_id)
            if key not in self._parsed:
                self._parsed[key] = parse_artifact(meta.type, dict(stored.body))
            body = self._parsed[key]
            artifacts.append(
                StoredArtifact(
                    id=meta.artifact_id,
                    type=meta.type,
                    producer=meta.producer,
                    uri=artifact_uri(run_id, meta.artifact_id),
                    source_refs=meta.source_refs,
                    created_at=meta.created_at,
                    body=body,
                    wire=stored.body,
                    sha256=meta.sha256,
                )
            )
        return RunState(
            run=run_from_record(record),
            artifacts=tuple(artifacts),
            trace=await self._trace(run_id),
        )

    async def _trace(self, run_id: str) -> tuple[TraceEntry, ...]:
        entries: list[TraceEntry] = []
        after = 0
        while True:
            page = await self._ledger.page_trace(run_id, after, 500)
            entries.extend(
                TraceEntry(e.event_id, e.sequence, e.event_type, e.permission_decision)
                for e in page.events
            )
            if not page.has_more or not page.events:
                return tuple(entries)
            after = page.events[-1].sequence

    # ------------------------------------------------------------------ commands

    async def start_run(
        self,
        original_request: str,
        mode: Mode,
        *,
        repository_root: str,
        host_name: str = "mcp-host",
        native_subagents: NativeSubagents = "unknown",
        host_capabilities: Sequence[str] = ("repository.read",),
        authorization_granted: Sequence[str] | None = None,
        authorization_denied: Sequence[str] = (),
        shell_execute_allowlist: Sequence[str] = (),
        network_read_domains: Sequence[str] = (),
        active_files: Sequence[str] = (),
    ) -> StepResult:
        """Start a run at version 1 in context grounding (reference §2 tool 1)."""
        now = self._clock()
        state, notes = open_run(
            run_id=self._new_id(),
            message_id=self._new_id(),
            now=now,
            original_request=original_request,
            mode=mode,
            repository_root=repository_root,
            host_name=host_name,
            native_subagents=native_subagents,
            host_capabilities=host_capabilities,
            authorization_granted=authorization_granted,
            authorization_denied=authorization_denied,
            shell_execute_allowlist=shell_execute_allowlist,
            network_read_domains=network_read_domains,
            active_files=active_files,
        )
        request, envelope = (_new_artifact(a) for a in state.artifacts)
        action = next_action(state)
        commit = await self._ledger.create_run(
            run_record(state.run), request, envelope, self._events(state.run, notes, now)
        )
        return StepResult(commit.run, action)

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
        self, run_id: str, action_id: str, expected_run_version: int, response: str
    ) -> StepResult:
        """Answer the pending clarification with exactly one choice id."""
        token = Token(action_id, expected_run_version)
        answer = AnswerClarification(token, response, self._new_id(), self._clock())
        return await self._step(run_id, answer)

    async def cancel(self, run_id: str, action_id: str, expected_run_version: int) -> StepResult:
        """Cancel the run; a terminal run is returned unchanged."""
        token = Token(action_id, expected_run_version)
        return await self._step(run_id, Cancel(token, self._clock()))

    async def _step(self, run_id: str, submission: Submission) -> StepResult:
        state = await self.load(run_id)
        outcome = step(state, submission)
        if not isinstance(outcome, Accepted):
            if outcome.events:
                # The one trace a rejection leaves: DENY decisions for attempted mutations.
                now = submission.now
                await self._ledger.record_events(
                    run_id, self._events(state.run, outcome.events, now)
                )
            raise outcome.error
        new = outcome.state
        action = next_action(new)
        if not outcome.changed:
            return StepResult(await self._ledger.get_run(run_id), action)
        now = submission.now
        events = self._events(new.run, outcome.events, now)
        if outcome.supporting:
            commit = await self._ledger.store_supporting(
                run_id, _new_artifact(outcome.artifacts[0]), events
            )
            return StepResult(commit.run, action, commit.artifacts[0])
        commit = await self._ledger.commit_step(
            run_id,
            state.run.version,
            run_record(new.run),
            [_new_artifact(a) for a in outcome.artifacts],
            events,
        )
        return StepResult(commit.run, action)

    def _events(self, run: Run, notes: Sequence[Any], now: str) -> list[NewTraceEvent]:
        return [
            NewTraceEvent(
                actor=note.actor,
                phase=note.phase,
                event_type=note.event_type,
                input_refs=note.input_refs,
                output_refs=note.output_refs,
                permission_decision=note.permission_decision,
                decision_summary=note.summary,
                budget_snapshot=snapshot(run),
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
        """Return the run row, its artifact metadata and its next action."""
        state = await self.load(run_id)
        record = await self._ledger.get_run(run_id)
        artifacts = await self._ledger.list_artifacts(run_id)
        return RunDetails(record, artifacts, next_action(state))

    async def get_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return an artifact of the run with its verified body. Raises ``NotFound``."""
        return await self._ledger.read_artifact(run_id, artifact_id)

    async def list_runs(self, limit: int = 20) -> tuple[RunSummary, ...]:
        """Return run metadata, newest first."""
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
