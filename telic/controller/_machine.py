"""``step``: the pure, total state machine of a run (docs/protocol.md §2 tokens, §3.2, §3.3).

``step(state, submission)`` never performs I/O and never raises for a refused submission: it
returns ``Accepted`` with the new state and exactly the records to commit, or ``Rejection`` with
the typed error naming the failed rules. Refusals are decided in this order: token, type
ownership, body identity, run status and phase, secrets, schema, sourceRefs, id freshness,
invariants.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final, TypeVar, assert_never

from telic._errors import (
    InvalidTransition,
    Issue,
    LedgerConflict,
    RuleViolation,
    SchemaViolation,
    SecretDetected,
    StaleToken,
    TelicError,
)
from telic.controller._check import Check, evaluate
from telic.controller._closure import input_refs
from telic.controller._events import (
    Accepted,
    AnswerClarification,
    Cancel,
    Ground,
    Rejection,
    Submission,
    SubmitArtifact,
    Token,
    TraceNote,
)
from telic.controller._phases import (
    CONTROLLER_OWNED,
    HOST_TYPES,
    PHASES,
    SUPPORTING_TYPES,
    expected_producer,
)
from telic.controller._refs import merge_source_refs
from telic.controller._rules import rules_for
from telic.controller._scan import scan_content, scan_submission
from telic.controller._state import (
    RunState,
    StoredArtifact,
    body_refs,
    stored_artifact,
)
from telic.controller._topology import (
    MAX_ESCALATIONS,
    RECEIPT,
    asked_topology,
    bootstrap,
    certify,
    pre_escalation,
    receipt_summary,
)
from telic.controller._transitions import transition
from telic.controller._vocabulary import ELICITED_EVENT, ELICITED_SUMMARY
from telic.controller._work import deny_notes, permission_notes
from telic.ledger import RunRecord
from telic.protocol import (
    Evidence,
    QualityReview,
    UserMessage,
    WorkResult,
    parse_artifact,
)

_E = TypeVar("_E", bound=TelicError)
_SPOT_REASONS: Final = {"partial": "MICRO_SPOT_PARTIAL", "remediate": "MICRO_SPOT_REMEDIATE"}


def step(state: RunState, submission: Submission) -> Accepted | Rejection:
    """Apply ``submission`` to ``state``; never raises for a refused submission."""
    try:
        match submission:
            case Ground():
                return _ground(state, submission)
            case SubmitArtifact():
                return _submit(state, submission)
            case AnswerClarification():
                return _answer(state, submission)
            case Cancel():
                return _cancel(state, submission)
            case _:
                assert_never(submission)
    except TelicError as error:
        return Rejection(error)


def _refusal(
    error: type[_E], path: str, rule: str, message: str, issue: str = "", expected: object = None
) -> _E:
    """``error`` with one issue of ``rule`` at ``path``, saying ``issue`` (else ``message``)."""
    found = Issue(path, rule.lower(), issue or message, rule, expected)
    return error(message, issues=(found,))


def check_token(state: RunState, token: Token, *, broker: bool = False) -> None:
    """Refuse a stale version or a foreign action id (``StaleToken``).

    ``broker``: in the original broker's words, each issue naming the value that would pass.
    """
    run = state.run
    if token.expected_run_version != run.version:
        message = (
            f"Stale run version {token.expected_run_version}; current version is {run.version}"
        )
        expected = run.version if broker else None
        path, rule = "expected_run_version", "RUN-TOKEN-VERSION"
        raise _refusal(StaleToken, path, rule, message, expected=expected)
    if token.action_id != run.action_id:
        message = "Stale or foreign action_id" + ("; reload the next action" if broker else "")
        action = run.action_id if broker else None
        raise _refusal(StaleToken, "action_id", "RUN-TOKEN-ACTION", message, expected=action)


def _require_phase_action(state: RunState) -> None:
    run = state.run
    if run.terminal:
        message = f"Run has ended ({run.status}); nothing more can be submitted"
        raise _refusal(InvalidTransition, "", "RUN-ACTIVE", message)
    if run.status == "awaiting_clarification":
        message = "The current action is a clarification, not a phase; answer it first"
        raise _refusal(InvalidTransition, "", "RUN-ACTIVE", message)


def _advance(
    state: RunState, moved: RunRecord, artifacts: tuple[StoredArtifact, ...], now: str
) -> RunState:
    run = replace(moved, version=moved.version + 1, updated_at=now)
    return state.extended(artifacts, run=run, trace=())


def _ground(state: RunState, ground: Ground) -> Accepted:
    check_token(state, ground.token)
    _require_phase_action(state)
    run = state.run
    if run.phase != "context_grounding":
        message = f"Grounding is only legal in context_discovery, not {PHASES[run.phase].protocol}"
        raise _refusal(InvalidTransition, "", "RUN-PHASE-TYPE", message)
    manifest = ground.manifest
    if manifest.run_id != run.run_id:
        issue = "The manifest's runId must be the run's id"
        raise _refusal(
            RuleViolation, "runId", "REF-SAME-RUN", "ContextManifest belongs to another run", issue
        )
    documents = tuple(
        stored_artifact(run.run_id, "ContextDocument", doc, "controller", (), ground.now)
        for doc in ground.documents
    )
    uris = tuple(d.uri for d in documents)
    if sorted(manifest.derived_refs) != sorted(uris):
        message = "derivedRefs must name exactly the stored ContextDocuments"
        raise _refusal(RuleViolation, "derivedRefs", "CM-DERIVED-REFS", message)
    refs = tuple(dict.fromkeys((*input_refs(state, PHASES["context_grounding"]), *uris)))
    if len(refs) > 256:
        message = "ContextManifest sourceRefs exceed 256 references"
        raise _refusal(RuleViolation, "sourceRefs", "REF-SOURCE-LIMIT", message)
    record = stored_artifact(
        run.run_id, "ContextManifest", manifest, "controller", refs, ground.now
    )
    for artifact in (*documents, record):
        if state.by_id(artifact.id) is not None:
            message = "Artifact already exists in this run"
            raise _refusal(LedgerConflict, "id", "ANY-ID-FRESH", message)
    moved = transition(state, record)
    new_state = _advance(state, moved, (*documents, record), ground.now)
    notes = tuple(
        TraceNote("context_source_stored", "controller", run.phase, output_refs=(uri,))
        for uri in uris
    )
    submitted = TraceNote(
        "phase_submitted", "controller", run.phase, input_refs=refs, output_refs=(record.uri,)
    )
    return Accepted(new_state, (*documents, record), (*notes, submitted))


def _identity(state: RunState, body: object) -> str:
    if not isinstance(body, dict):
        message = "The body must be a JSON object"
        raise _refusal(SchemaViolation, "", "ANY-BODY", message, "not an object")
    artifact_id, run_id = body.get("id"), body.get("runId")
    if not isinstance(artifact_id, str) or not isinstance(run_id, str):
        raise _refusal(SchemaViolation, "", "ANY-BODY", "The body must carry string id and runId")
    if run_id != state.run.run_id:
        raise _refusal(RuleViolation, "runId", "REF-SAME-RUN", "The body's runId must equal run_id")
    return artifact_id


def _submit(state: RunState, submission: SubmitArtifact) -> Accepted | Rejection:
    check_token(state, submission.token)
    kind = submission.artifact_type
    if kind in CONTROLLER_OWNED:
        message = f"{kind} is controller-owned and cannot be submitted"
        raise _refusal(InvalidTransition, "artifactType", "RUN-CONTROLLER-OWNED", message)
    if kind not in HOST_TYPES:
        raise _refusal(SchemaViolation, "artifactType", "RUN-PHASE-TYPE", "Unknown artifact type")
    artifact_id = _identity(state, submission.body)
    _require_phase_action(state)
    run = state.run
    spec = PHASES[run.phase]
    if kind != spec.primary and kind not in spec.additional:
        message = f"{kind} is not accepted in phase {spec.protocol}; submit {spec.primary}"
        mode = run.requested_mode
        if kind == "Evidence" and mode in ("report_only", "plan_only"):
            message += f" ({mode} executes nothing: cite the latest WorkPlan as its evidence)"
        rule = "EV-EXECUTION-ONLY" if kind == "Evidence" else "RUN-PHASE-TYPE"
        raise _refusal(InvalidTransition, "artifactType", rule, message)
    try:
        scan_submission(kind, submission.body, submission.source_refs)
    except SecretDetected as refused:
        return _refused_secret(state, kind, submission.body, refused)
    body = parse_artifact(kind, submission.body)
    if isinstance(body, Evidence):
        scan_content(body)
    if isinstance(body, QualityReview) and body.review_kind is None and asked_topology(state):
        body = body.model_copy(update={"review_kind": "spot"})  # stored as the original does
    wire = body.to_wire()
    found = body_refs(wire)
    refs = merge_source_refs(state, submission.source_refs, found)
    producer = expected_producer(kind, run.phase)
    record = stored_artifact(
        run.run_id, kind, body, producer, refs, submission.now, wire=wire, found=found
    )
    existing = state.by_id(artifact_id)
    if existing is not None:
        same = (existing.type, existing.sha256, existing.source_refs)
        if kind in SUPPORTING_TYPES and same == (kind, record.sha256, record.source_refs):
            return Accepted(state, supporting=True, replay_of=artifact_id, changed=False)
        raise _refusal(LedgerConflict, "id", "ANY-ID-FRESH", "Artifact already exists in this run")
    escalation = pre_escalation(state, body)
    if escalation is not None:
        return _pre_escalate(state, record, *escalation, submission.now)
    check = Check(
        state, kind, artifact_id, record.uri, body, dict(record.wire), found, refs, run.phase
    )
    issues = evaluate(rules_for(kind), check)
    if issues:
        first = issues[0]
        error = RuleViolation(
            f"{kind} violates {len(issues)} controller invariant(s); first {first.rule} at "
            f"{first.path or '(body)'}: {first.message}",
            issues=issues,
        )
        if isinstance(body, WorkResult):
            return Rejection(error, deny_notes(state, body))
        raise error
    actor = record.producer
    if kind in SUPPORTING_TYPES:
        event = "evidence_captured" if kind == "Evidence" else "scenario_presentation_stored"
        note = TraceNote(event, actor, run.phase, output_refs=(record.uri,))
        new_state = state.extended((record,))
        return Accepted(new_state, (record,), (note,), supporting=True)
    moved = transition(state, record)
    notes: list[TraceNote] = []
    if kind == "WorkResult":
        notes.extend(permission_notes(state, record))
    event = "phase_submitted"
    if kind == "ClarificationRequest":
        paused = moved.status == "awaiting_clarification"
        event = "clarification_requested" if paused else "budget_consumed"
    output = (record.uri,)
    summary = ""
    escalated: tuple[TraceNote, ...] = ()
    if moved.topology is not None and moved.topology != run.topology:
        _check_escalation(run, moved.topology)  # a micro spot review that did not pass
        reason = _SPOT_REASONS[record.body.decision]
        summary = (
            f"{reason}: the micro spot review did not pass; the run continues on the standard "
            "path at contract review"
        )
        note = TraceNote(
            "topology_escalated", "controller", run.phase, output, output, summary=reason
        )
        escalated = (note,)
    companions = _companions(state, record, submission.now)
    notes.extend((TraceNote(event, actor, run.phase, refs, output, summary=summary), *escalated))
    artifacts = (record, *(artifact for artifact, _ in companions))
    notes.extend(note for _, note in companions if note is not None)
    new_state = _advance(state, moved, artifacts, submission.now)
    return Accepted(new_state, artifacts, tuple(notes))


def _check_escalation(run: RunRecord, target: str) -> None:
    """Refuse an escalation past the limit or down from forensic (``TP-ESCALATION-LIMIT``)."""
    message = None
    if run.topology == "forensic":
        message = "Forensic topology cannot be downgraded"
    elif run.topology == target:
        message = f"Run is already on {target} topology"
    elif run.escalation_count >= MAX_ESCALATIONS:
        message = (
            f"Topology escalation budget exhausted: the run escalated {run.escalation_count} "
            f"times, the most allowed ({MAX_ESCALATIONS})"
        )
    if message is not None:
        raise _refusal(RuleViolation, "", "TP-ESCALATION-LIMIT", message)


def _companions(
    state: RunState, record: StoredArtifact, now: str
) -> tuple[tuple[StoredArtifact, TraceNote | None], ...]:
    """What the controller stores with an accepted artifact in a run that asked for a topology:
    the micro bootstrap contract and plan with the frame, the receipt with the first passing
    review (docs/protocol.md §3.7). They are listed in the same ``phase_submitted`` commit."""
    run = state.run
    if asked_topology(state) is None:
        return ()
    if record.type == "ProblemFrame" and run.topology == "micro":
        contract, plan = bootstrap(state, record, now)
        return ((contract, None), (plan, None))
    review = record.body
    if (
        isinstance(review, QualityReview)
        and run.phase == "agent_3_review"
        and run.topology in ("micro", "standard")
        and review.decision == "pass"
        and state.by_id(RECEIPT) is None
    ):
        receipt, verified = certify(state, record, now)
        note = None
        if verified:
            note = TraceNote(
                "digest_verified",
                "controller",
                run.phase,
                input_refs=verified,
                output_refs=(record.uri,),
                summary=receipt_summary(verified),
            )
        return ((receipt, note),)
    return ()


def _pre_escalate(
    state: RunState, record: StoredArtifact, target: str, reason: str, now: str
) -> Accepted:
    """Move the run up a topology without storing ``record``, and report it as an error.

    The original Telic changes the run and answers with an error; so do we, and the move is an
    ordinary committed step (version +1, one ``topology_escalated`` event, hash-chained). The
    submission itself is not stored: the host reads the new action and submits again.
    """
    run = state.run
    _check_escalation(run, target)
    phase = "agent_1_review" if target == "standard" else run.phase
    moved = replace(
        run,
        topology=target,  # type: ignore[arg-type]
        phase=phase,
        status="running",
        resume_phase=None,
        escalation_count=run.escalation_count + 1,
    )
    note = TraceNote(
        "topology_escalated",
        "controller",
        run.phase,
        input_refs=(record.uri,),
        summary=reason,
    )
    version = run.version + 1
    message = (
        f"Topology escalated to {target} ({reason}); {record.type} {record.id} was not stored. "
        f"The run is now at version {version} in {PHASES[phase].protocol}: read the next action "
        "and submit again"
    )
    expected = {"actionId": f"action:{run.run_id}:{version}", "expectedRunVersion": version}
    error = _refusal(InvalidTransition, "", "TP-PRE-ESCALATION", message, expected=expected)
    return Accepted(_advance(state, moved, (), now), (), (note,), escalated=error)


def _refused_secret(state: RunState, kind: str, raw: object, refused: SecretDetected) -> Rejection:
    """Refuse a body holding a secret; a read-only WorkResult still leaves its DENY records.

    Its attempted mutations are persisted as for any rejected read-only WorkResult
    (docs/protocol.md §3.4), their targets redacted: a secret cannot hide an attempt.
    """
    if kind != "WorkResult":
        return Rejection(refused)
    try:
        body = parse_artifact(kind, raw)
    except SchemaViolation:
        return Rejection(refused)
    return Rejection(refused, deny_notes(state, body))


def _answer(state: RunState, answer: AnswerClarification) -> Accepted:
    check_token(state, answer.token)
    run = state.run
    request = state.latest("ClarificationRequest")
    if run.status != "awaiting_clarification" or request is None:
        raise _refusal(InvalidTransition, "", "RUN-ACTIVE", "No clarification is pending")
    choice_id = answer.response.strip()
    choice = next((c for c in request.body.response_choices if c.id == choice_id), None)
    if choice is None:
        message = "clarification_response must be exactly one of the offered choice ids"
        raise _refusal(RuleViolation, "clarification_response", "CR-ANSWER-CHOICE", message)
    message_body = UserMessage(
        schema_version="1.0", id=answer.message_id, run_id=run.run_id, content=choice_id
    )
    record = stored_artifact(
        run.run_id, "UserMessage", message_body, "user", (request.uri,), answer.now
    )
    if state.by_id(record.id) is not None:
        raise LedgerConflict("Artifact already exists in this run")
    if choice.run_effect == "resume":
        assert run.resume_phase is not None
        moved = replace(run, status="running", phase=run.resume_phase, resume_phase=None)
    else:
        moved = replace(run, status="cancelled", resume_phase=None)
    summary = f"Clarification answered with {choice.run_effect}"
    if answer.elicited:
        summary += f" {ELICITED_SUMMARY}"
    note = TraceNote(
        ELICITED_EVENT if answer.elicited else "clarification_answered",
        "user",
        run.phase,
        input_refs=(request.uri,),
        output_refs=(record.uri,),
        summary=summary,
    )
    return Accepted(_advance(state, moved, (record,), answer.now), (record,), (note,))


def _cancel(state: RunState, cancel: Cancel) -> Accepted:
    check_token(state, cancel.token)
    if state.run.terminal:
        return Accepted(state, changed=False)
    moved = replace(state.run, status="cancelled", resume_phase=None)
    note = TraceNote("run_cancelled", "host", state.run.phase, summary="Run cancelled")
    return Accepted(_advance(state, moved, (), cancel.now), (), (note,))
