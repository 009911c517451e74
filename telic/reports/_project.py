"""The pure projection of one run's ledger records onto ``RunReportData``.

Bodies are read defensively: the ledger verified their digests, and the controller validated
them on the way in, but an artifact type this module does not know (a later addition such as
``EvidencePacket``) or a body that fails to parse is shown for what it is, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from telic.casting import CONSUMED_EVENT, children_of, parse_time
from telic.controller import (
    ELICITED_EVENT,
    TERMINAL_STATUSES,
    protocol_phase,
    run_phase,
)
from telic.ledger import ArtifactRecord, RunRecord, TraceRecord, VerifyReport
from telic.protocol import MAX_PLAN_TOOL_CALLS
from telic.reports._model import (
    GENERATOR_NAME,
    AnswerSource,
    ArtifactEntry,
    BudgetRow,
    ClaimRow,
    ClarificationRow,
    CriterionRow,
    EvidenceEntry,
    Integrity,
    NextStep,
    PathStep,
    PermissionRow,
    Provenance,
    RunReportData,
    TimelineEntry,
    VerificationRow,
)
from telic.reports._packets import packet_rows

Body = Mapping[str, Any]
_SILENT_EVENTS: Final = frozenset(
    {"permission_checked", "context_source_stored", "packet_consumed"}
)
_LAYER_PATTERNS: Final = (
    re.compile(r"explicitly denied by the (\S+) layer"),
    re.compile(r"the (\S+) layer does not grant"),
    re.compile(r"the (\S+) layer's grant needs a target"),
    re.compile(r"outside the (\S+) layer's scope"),
)
_ALLOWED_BY: Final = re.compile(r"allowed by every layer \(([^)]*)\)")
_SUMMARY_CHARS: Final = 160
EXCERPT_LINES: Final = 40
"""Lines of an Evidence content shown inline."""
EXCERPT_CHARS: Final = 4_000
"""Characters of an Evidence content shown inline."""
FULL_CHARS: Final = 262_144
"""The longest Evidence content a report carries whole (behind a click)."""
_KIND_ORDER: Final = {"diff": 0, "test": 1, "tool_output": 1, "log": 2}


@dataclass(frozen=True, slots=True)
class Stored:
    """An artifact record with its verified body."""

    record: ArtifactRecord
    body: Body


def artifact_id_of(run_id: str, ref: str) -> str:
    """Return the artifact id of an ``artifact://<run_id>/<id>`` ref, else the ref itself."""
    prefix = f"artifact://{run_id}/"
    return ref[len(prefix) :] if ref.startswith(prefix) else ref


def deciding_layer(decision: Mapping[str, Any]) -> str:
    """Name the layer that decided a recorded permission decision.

    The controller records the decision's reason, which names the deciding layer; an allow was
    granted by every layer, and a deny that names no layer refused the target itself.
    """
    explicit = decision.get("decidingLayer")
    if isinstance(explicit, str) and explicit:
        return explicit
    reason = str(decision.get("rationaleSummary", ""))
    allowed = _ALLOWED_BY.search(reason)
    if allowed:
        return f"all layers ({allowed.group(1)})"
    for pattern in _LAYER_PATTERNS:
        found = pattern.search(reason)
        if found:
            return found.group(1)
    return "all layers" if decision.get("decision") == "allow" else "target (before any layer)"


def _ms(earlier: str, later: str) -> int:
    return int((parse_time(later) - parse_time(earlier)).total_seconds() * 1000)


def _list(body: Body, key: str) -> list[Any]:
    value = body.get(key)
    return list(value) if isinstance(value, list | tuple) else []


def _text(body: Body, key: str, default: str = "") -> str:
    value = body.get(key)
    return value if isinstance(value, str) else default


def _outcome(stored: Stored | None) -> str | None:
    if stored is None:
        return None
    for key in ("decision", "terminalStatus", "status"):
        value = stored.body.get(key)
        if isinstance(value, str):
            return value
    return None


def shorten(text: str, limit: int = _SUMMARY_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _Run:
    """Lookup helpers over one run's artifacts, in commit order."""

    def __init__(self, run_id: str, artifacts: Sequence[Stored]) -> None:
        self.run_id = run_id
        self.artifacts = tuple(artifacts)
        self.by_id = {a.record.artifact_id: a for a in artifacts}

    def latest(self, type_: str) -> Stored | None:
        return next((a for a in reversed(self.artifacts) if a.record.type == type_), None)

    def all(self, type_: str) -> list[Stored]:
        return [a for a in self.artifacts if a.record.type == type_]

    def ids(self, refs: Sequence[Any]) -> tuple[str, ...]:
        return tuple(artifact_id_of(self.run_id, str(r)) for r in refs)

    def of_ref(self, ref: str) -> Stored | None:
        return self.by_id.get(artifact_id_of(self.run_id, ref))

    def first(self, refs: Sequence[str]) -> Stored | None:
        """The first of ``refs`` that names an artifact of the run."""
        return next((s for s in map(self.of_ref, refs) if s is not None), None)


def _timeline(run: _Run, events: Sequence[TraceRecord]) -> tuple[TimelineEntry, ...]:
    entries: list[TimelineEntry] = []
    previous: str | None = None
    for event in events:
        if event.event_type in _SILENT_EVENTS:
            continue
        stored = run.first(event.output_refs)
        entries.append(
            TimelineEntry(
                sequence=event.sequence,
                timestamp=event.timestamp,
                phase=protocol_phase(event.phase),
                actor=event.actor,
                event=event.event_type,
                artifact_id=None if stored is None else stored.record.artifact_id,
                artifact_type=None if stored is None else stored.record.type,
                outcome=_outcome(stored),
                duration_ms=None if previous is None else _ms(previous, event.timestamp),
            )
        )
        previous = event.timestamp
    return tuple(entries)


_NEXT_KIND: Final[dict[str, tuple[Literal["revision", "remediation", "fix"], str]]] = {
    "revise": ("revision", "revise"),
    "remediate": ("remediation", "remediate"),
    "proceed_to_fix": ("fix", "proceed to fix"),
}

_ASKED: Final = PathStep(phase="awaiting_clarification", kind="clarification", label="asked")


def _path(
    run: _Run, events: Sequence[TraceRecord], record: RunRecord, terminal: str | None
) -> tuple[PathStep, ...]:
    steps = [PathStep(phase="context_discovery", kind="start", label="run started")]
    pending: tuple[Any, str] = ("advance", "")
    for event in events:
        phase = protocol_phase(event.phase)
        if event.event_type == "phase_submitted":
            if phase != steps[-1].phase or pending[0] != "advance":
                steps.append(PathStep(phase=phase, kind=pending[0], label=pending[1]))
            stored = run.first(event.output_refs)
            body: Body = {} if stored is None else stored.body
            decision = _text(body, "decision")
            pending = _NEXT_KIND.get(decision, ("advance", ""))
            if decision in ("block", "partial"):
                pending = ("advance", decision)
            elif _text(body, "status") in ("partial", "blocked", "failed"):
                pending = ("advance", f"result {_text(body, 'status')}")
        elif event.event_type == "clarification_requested":
            steps.append(_ASKED)
        elif event.event_type in _ANSWERED:
            pending = ("resume", "answered")
        elif event.event_type == "budget_consumed":
            pending = ("advance", "second clarification")
        elif event.event_type == "run_cancelled" and phase != steps[-1].phase:
            steps.append(PathStep(phase=phase, kind=pending[0], label=pending[1]))
    if record.status in TERMINAL_STATUSES:
        status = terminal or record.status
        steps.append(PathStep(phase=record.status, kind="terminal", label=status))
    elif record.status == "awaiting_clarification":
        if steps[-1].kind != "clarification":
            steps.append(_ASKED)
    else:
        current = protocol_phase(record.phase)
        if current != steps[-1].phase or pending[0] != "advance":
            label = pending[1] or "next"
            steps.append(PathStep(phase=current, kind=pending[0], label=label))
    return tuple(steps)


_ANSWERED: Final = frozenset({"clarification_answered", ELICITED_EVENT})


def _clarifications(run: _Run, events: Sequence[TraceRecord]) -> tuple[ClarificationRow, ...]:
    answers = {
        artifact_id_of(run.run_id, event.input_refs[0]): (event, run.of_ref(event.output_refs[0]))
        for event in events
        if event.event_type in _ANSWERED and event.input_refs and event.output_refs
    }
    rows = []
    for request in run.all("ClarificationRequest"):
        event, message = answers.get(request.record.artifact_id, (None, None))
        source: AnswerSource = "pending"
        if event is not None:
            source = "elicited" if event.event_type == ELICITED_EVENT else "response"
        choices = tuple(
            (_text(c, "id"), _text(c, "label"), _text(c, "consequence"))
            for c in _list(request.body, "responseChoices")
        )
        rows.append(
            ClarificationRow(
                request_id=request.record.artifact_id,
                question=_text(request.body, "question"),
                choices=choices,
                answer_id=None if message is None else message.record.artifact_id,
                choice_id=None if message is None else _text(message.body, "content") or None,
                answered_by=source,
            )
        )
    return tuple(rows)


def _criteria(run: _Run) -> tuple[CriterionRow, ...]:
    contract = run.latest("TaskContract")
    if contract is None:
        return ()
    judged: dict[str, tuple[str, tuple[str, ...]]] = {}
    review = run.latest("QualityReview")
    sources = [(result, "acceptanceCoverage") for result in run.all("WorkResult")]
    sources += [] if review is None else [(review, "acceptanceResults")]  # the review judges last
    for judge, key in sources:
        for entry in _list(judge.body, key):
            judged[str(entry.get("criterionId"))] = (
                str(entry.get("status", "")),
                run.ids(_list(entry, "evidenceRefs")),
            )
    rows = []
    for criterion in _list(contract.body, "acceptanceCriteria"):
        cid = str(criterion.get("id", ""))
        status, evidence = judged.get(cid, ("pending", ()))
        rows.append(
            CriterionRow(
                id=cid,
                stage=str(criterion.get("stage", "")),
                requirement=str(criterion.get("requirement", "")),
                status=status,
                evidence=evidence,
            )
        )
    return tuple(rows)


def _claims(run: _Run) -> tuple[ClaimRow, ...]:
    """The ReleaseAudit's claim matrix, else the UserReport's claims (``id``, ``text``)."""
    audit, report = run.latest("ReleaseAudit"), run.latest("UserReport")
    source = audit or report
    if source is None:
        return ()
    key, id_key, text_key = (
        ("claimEvidenceMatrix", "claimId", "claim")
        if audit is not None
        else ("completionClaims", "id", "text")
    )
    return tuple(
        ClaimRow(
            claim_id=str(row.get(id_key, "")),
            claim=str(row.get(text_key, "")),
            status=str(row.get("status", "")),
            basis=str(row.get("basis", "")) if audit is not None else "reported",
            criteria=tuple(str(c) for c in _list(row, "criterionIds")),
            evidence=run.ids(_list(row, "evidenceRefs")),
            source=source.record.artifact_id,
        )
        for row in _list(source.body, key)
    )


def _verifications(run: _Run) -> tuple[VerificationRow, ...]:
    contract = run.latest("TaskContract")
    if contract is None:
        return ()
    results: dict[str, Body] = {}
    review = run.latest("QualityReview")
    if review is not None:
        results = {
            str(r.get("requirementId")): r for r in _list(review.body, "verificationResults")
        }
    rows = []
    for requirement in _list(contract.body, "verificationRequirements"):
        rid = str(requirement.get("id", ""))
        result = results.get(rid)
        rows.append(
            VerificationRow(
                requirement_id=rid,
                capability=str(requirement.get("capability", "")),
                required=bool(requirement.get("required", False)),
                description=str(requirement.get("description", "")),
                status="pending" if result is None else str(result.get("status", "")),
                evidence=() if result is None else run.ids(_list(result, "evidenceRefs")),
                host_attested=requirement.get("capability") == "shell.execute",
            )
        )
    return tuple(rows)


def _evidence(run: _Run) -> tuple[EvidenceEntry, ...]:
    entries = []
    for stored in run.all("Evidence"):
        body = stored.body
        content = _text(body, "content")
        binary = _text(body, "encoding") == "base64"
        head = "".join(content.splitlines(keepends=True)[:EXCERPT_LINES])
        excerpt = "" if binary else head[:EXCERPT_CHARS].rstrip("\n")
        entries.append(
            EvidenceEntry(
                artifact_id=stored.record.artifact_id,
                kind=_text(body, "kind"),
                summary=_text(body, "summary"),
                excerpt=excerpt,
                total_lines=len(content.splitlines()),
                total_chars=len(content),
                truncated=not binary and excerpt != content.rstrip("\n"),
                full=None if binary or len(content) > FULL_CHARS else content,
                binary=binary,
            )
        )
    return tuple(sorted(entries, key=lambda e: _KIND_ORDER.get(e.kind, 3)))


def _permissions(run: _Run, events: Sequence[TraceRecord]) -> tuple[PermissionRow, ...]:
    rows = []
    for event in events:
        decision = event.permission_decision
        if event.event_type != "permission_checked" or decision is None:
            continue
        subject = run.first(event.input_refs)
        rows.append(
            PermissionRow(
                sequence=event.sequence,
                decision="ALLOW" if decision.get("decision") == "allow" else "DENY",
                capability=str(decision.get("capability", "")),
                scope=str(decision.get("scope", "")),
                deciding_layer=deciding_layer(decision),
                reason=str(decision.get("rationaleSummary", "")),
                artifact_id=None if subject is None else subject.record.artifact_id,
                host_attested=decision.get("capability") == "shell.execute",
            )
        )
    return tuple(rows)


def _budgets(run: _Run, record: RunRecord, events: Sequence[TraceRecord]) -> tuple[BudgetRow, ...]:
    envelope = run.by_id.get(record.run_id)
    limits = {} if envelope is None else dict(envelope.body.get("budgets") or {})
    revisions = int(limits.get("promptRevisions", record.prompt_revisions_remaining))
    remediations = int(limits.get("postExecutionRemediations", record.remediations_remaining))
    reserved = sum(
        int(node.get("budgets", {}).get("maximumToolCalls", 0))
        for plan in run.all("WorkPlan")
        for node in _list(plan.body, "nodes")
    )
    actions = sum(
        1
        for result in run.all("WorkResult")
        for action in _list(result.body, "actions")
        if action.get("status") != "skipped"
    )
    rows = [
        ("Prompt revisions", revisions - record.prompt_revisions_remaining, revisions),
        ("Post-execution remediations", remediations - record.remediations_remaining, remediations),
        ("Clarifications", len(run.all("ClarificationRequest")), 1),
        ("Plan tool-call reservations", reserved, MAX_PLAN_TOOL_CALLS),
        ("Actions reported (of reserved calls)", actions, reserved),
        ("Artifacts", len(run.artifacts), 2048),
        ("Trace events", len(events), 10_000),
    ]
    return tuple(BudgetRow(name=name, used=used, limit=limit) for name, used, limit in rows)


def _artifact_summary(stored: Stored) -> str:
    body, kind = stored.body, stored.record.type
    if kind == "Evidence":
        return shorten(f"{_text(body, 'kind')}: {_text(body, 'summary')}")
    if kind == "ContextDocument":
        return shorten(_text(body, "repositoryRef"))
    if kind == "WorkResult":
        return f"node {_text(body, 'nodeId')}: {_text(body, 'status')}"
    if kind == "EvidencePacket":
        return shorten(
            f"{_text(body, 'packetId')}: {_text(body, 'outcome')}/{_text(body, 'verdict')}"
        )
    outcome = _outcome(stored)
    return "" if outcome is None or kind == "RunEnvelope" else f"{outcome}"


def project(
    record: RunRecord,
    artifacts: Sequence[Stored],
    events: Sequence[TraceRecord],
    verify: VerifyReport,
    *,
    generator_version: str,
    generated_at: str,
    followed_by: Sequence[str] = (),
) -> RunReportData:
    """Project a run's records (artifacts in commit order, events by sequence) onto report data.

    ``followed_by``: the runs started to follow this one (the ledger knows them, not the run).
    """
    run = _Run(record.run_id, artifacts)
    envelope = run.by_id.get(record.run_id)
    request_ref = None if envelope is None else envelope.body.get("originalRequestRef")
    message = None if not isinstance(request_ref, str) else run.of_ref(request_ref)
    report = run.latest("UserReport")
    terminal: str | None = None
    if record.status == "cancelled":
        terminal = "cancelled"
    elif record.status in TERMINAL_STATUSES:
        terminal = record.status if report is None else _text(report.body, "terminalStatus")
    risks: list[str] = []
    for source in (run.latest("ReleaseAudit"), report):
        for risk in [] if source is None else _list(source.body, "unresolvedRisks"):
            if str(risk) not in risks:
                risks.append(str(risk))
    next_actions = tuple(
        NextStep(
            id=str(step.get("id", "")),
            description=str(step.get("description", "")),
            requires_authorization=bool(step.get("requiresAuthorization", False)),
        )
        for step in ([] if report is None else _list(report.body, "nextActions"))
    )
    packets, digest = packet_rows(
        [(a.record.artifact_id, a.body) for a in run.all("EvidencePacket")],
        [e.decision_summary for e in events if e.event_type == CONSUMED_EVENT],
        children_of((e.event_type, e.decision_summary) for e in events).observed,
    )
    chain = [(a.record.chain_index, a.record.record_hash) for a in artifacts]
    chain += [(e.chain_index, e.record_hash) for e in events]
    length, head = max(chain, default=(0, ""))
    problem = None
    if verify.first_broken is not None:
        broken = verify.first_broken
        problem = f"{broken.kind} {broken.id}: {broken.reason}"
    return RunReportData(
        prior_run_id=record.prior_run_id,
        followed_by=tuple(followed_by),
        run_id=record.run_id,
        request=None if message is None else _text(message.body, "content") or None,
        mode=record.requested_mode,
        run_status=record.status,
        terminal_status=terminal,
        phase=run_phase(record.phase, record.status),
        version=record.version,
        created_at=record.created_at,
        updated_at=record.updated_at,
        summary=None if report is None else _text(report.body, "summary") or None,
        timeline=_timeline(run, events),
        path=_path(run, events, record, terminal),
        criteria=_criteria(run),
        claims=_claims(run),
        verifications=_verifications(run),
        evidence=_evidence(run),
        permissions=_permissions(run, events),
        budgets=_budgets(run, record, events),
        packets=packets,
        digest=digest,
        risks=tuple(risks),
        next_actions=next_actions,
        artifacts=tuple(
            ArtifactEntry(
                artifact_id=a.record.artifact_id,
                type=a.record.type,
                producer=a.record.producer,
                created_at=a.record.created_at,
                sha256=a.record.sha256,
                size_bytes=a.record.size_bytes,
                summary=_artifact_summary(a),
            )
            for a in artifacts
        ),
        clarifications=_clarifications(run, events),
        integrity=Integrity(ok=verify.ok, records_checked=verify.records_checked, problem=problem),
        provenance=Provenance(
            run_id=record.run_id,
            chain_head=head,
            chain_length=length,
            generator_name=GENERATOR_NAME,
            generator_version=generator_version,
            generated_at=generated_at,
        ),
    )
