"""References: the sourceRefs merge rule (§3.3) and the rules every reference obeys (§3.4).

The stored ``sourceRefs`` of a submission are the caller's references (unique, valid, at most
256) followed by every reference found in the body's reference fields — minus system references
and artifact references that do not exist yet — de-duplicated, still at most 256.

A direct-evidence field must name an ``Evidence`` artifact of a kind its field or capability
accepts. ``repo://`` and ``trace://`` references never prove an outcome, and a
``permission_checked`` trace event is not evidence of anything but a decision. The exceptions:
a ContextDocument may ground WorkResult observations and inferences, a user-reported claim
cites the user's own message, and in plan_only and report_only the latest WorkPlan is the
deliverable that the reviews judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

from telic._errors import Issue, RuleViolation, SchemaViolation
from telic.controller._check import ANY, Check, Rules, Violation
from telic.controller._derive import selected_refs
from telic.controller._direct import DirectRef, direct_refs, evidence_fields
from telic.controller._next import TOPOLOGY_INSTRUCTIONS
from telic.controller._phases import EXECUTING_MODES, PHASES, SUPPORTING_TYPES
from telic.controller._state import BodyRef, RunState, StoredArtifact, parse_artifact_uri
from telic.protocol import (
    ACTION_ROLES,
    INTERNAL_ARTIFACT_TYPES,
    MAX_REFERENCE_URI,
    REFERENCE_URI_PATTERN,
    instruction_ref,
)

rule = Rules((ANY,), "§3.4 every submission")

MAX_SOURCE_REFS: Final = 256
_URI_RE: Final = re.compile(REFERENCE_URI_PATTERN)
_SYSTEM_FIELDS: Final = frozenset(
    {"applicableRuleRefs", "instructionRef", "policyRefs", "promptReadinessRubricRef", "ruleRefs"}
)
_INSTRUCTIONS: Final = {instruction_ref(role) for role in ACTION_ROLES} | set(
    TOPOLOGY_INSTRUCTIONS.values()
)
SYSTEM_REFS: Final = frozenset(
    {spelling for ref in _INSTRUCTIONS for spelling in (ref, ref.replace("_", "-"))}
    | {"artifact://system/rubrics/contract-readiness-v1"}
)
"""The system artifacts a body may cite: every role's instructions (a topology's variants too),
its role spelled with underscores or dashes, and the contract-readiness rubric."""
TYPED_FIELDS: Final[dict[str, str]] = {
    "originalRequestRef": "UserMessage",
    "problemFrameRef": "ProblemFrame",
    "targetRef": "TaskContract",
    "taskContractRef": "TaskContract",
    "workPlanRef": "WorkPlan",
    "workPlanRefs": "WorkPlan",
    "workResultRefs": "WorkResult",
    "qualityReviewRef": "QualityReview",
    "contextManifestRef": "ContextManifest",
    "clarificationRequestRef": "ClarificationRequest",
}


def merge_source_refs(
    state: RunState, caller: tuple[str, ...], found: Iterable[BodyRef]
) -> tuple[str, ...]:
    """Return the stored sourceRefs: the caller's, then the body's existing references.

    ``found`` is what ``body_refs`` returns for the body's wire form.

    Raises:
        SchemaViolation: the caller's list is too long, repeats itself or holds an invalid URI.
        RuleViolation: the merged list exceeds 256 references (``REF-SOURCE-LIMIT``).
    """
    if len(caller) > MAX_SOURCE_REFS or len(set(caller)) != len(caller):
        message = "source_refs must hold at most 256 references, each once"
        raise SchemaViolation(
            message,
            issues=(Issue("source_refs", "too_many_or_repeated", message, "REF-SOURCE-VALID"),),
        )
    for index, uri in enumerate(caller):
        if len(uri) > MAX_REFERENCE_URI or not _URI_RE.match(uri):
            message = "source_refs entries must be artifact://, trace:// or repo:// references"
            raise SchemaViolation(
                message,
                issues=(Issue(f"source_refs.{index}", "invalid_uri", message, "REF-SOURCE-VALID"),),
            )
    merged = dict.fromkeys(caller)
    for _, _, uri in found:
        if uri.startswith("artifact://system/"):
            continue
        if parse_artifact_uri(uri) is not None and state.by_uri(uri) is None:
            continue
        merged.setdefault(uri)
    if len(merged) > MAX_SOURCE_REFS:
        message = f"The merged sourceRefs hold {len(merged)} references; the limit is 256"
        raise RuleViolation(
            message, issues=(Issue("sourceRefs", "ref-source-limit", message, "REF-SOURCE-LIMIT"),)
        )
    return tuple(merged)


@rule("REF-SAME-RUN")
def ref_same_run(c: Check[Any]) -> Iterator[Violation]:
    """Referencing an artifact or trace of another run.

    A linked run's references to its prior run's artifacts are the exception outside Evidence
    (``REF-LINKED-EVIDENCE`` judges those).
    """
    run_id, prior = c.state.run.run_id, c.state.run.prior_run_id
    for path, _, uri in c.all_refs():
        if uri.startswith("artifact://system/"):
            continue
        parsed = parse_artifact_uri(uri)
        if parsed is not None and parsed[0] != run_id:
            if prior is None:
                yield Violation(
                    path,
                    "Artifact references must stay inside this run (only a run started with "
                    "prior_run_id may cite Evidence of the run it follows)",
                )
            elif parsed[0] != prior:
                yield Violation(
                    path,
                    f"Cross-run artifact reference denied: a reference outside this run may "
                    f"only name Evidence of the prior run, artifact://{prior}/<evidence id>",
                )
            elif c.artifact_type == "Evidence":
                yield Violation(
                    path,
                    "Evidence cites only this run; cite the prior run's Evidence from the "
                    "WorkResult, review, audit or report that relies on it",
                )
        if uri.startswith("trace://") and uri[len("trace://") :].split("/")[0] != run_id:
            yield Violation(path, "Trace references must name this run")


@rule("REF-LINKED-EVIDENCE")
def ref_linked_evidence(c: Check[Any]) -> Iterator[Violation]:
    """A linked run citing a prior-run artifact that does not exist, is not Evidence, or fails its
    digest check when read."""
    prior = c.state.run.prior_run_id
    if prior is None or c.artifact_type == "Evidence":
        return
    for path, _, uri in c.all_refs():
        parsed = parse_artifact_uri(uri)
        if parsed is None or parsed[0] != prior:
            continue
        linked = c.state.links.get(uri)
        if linked is None or linked.type is None:
            yield Violation(
                path,
                f"Cross-run evidence artifact does not exist: the prior run {prior} has no "
                "artifact with this id (cite one of its Evidence artifacts)",
            )
        elif not linked.intact:
            yield Violation(
                path,
                "Cross-run evidence failed its digest check when read: the prior run was "
                "changed outside Telic (telic verify names the record), so it cannot be cited",
            )
        elif linked.type != "Evidence":
            yield Violation(
                path,
                f"Cross-run evidence ref must target an Evidence artifact, not a {linked.type}: "
                "only the prior run's Evidence may be cited",
            )


@rule("REF-EXISTS")
def ref_exists(c: Check[Any]) -> Iterator[Violation]:
    """Citing a same-run artifact that does not exist (or a userReportRef that already does)."""
    run_id = c.state.run.run_id
    for path, field, uri in c.all_refs():
        parsed = parse_artifact_uri(uri)
        if parsed is None or parsed[0] != run_id:
            continue
        exists = c.state.by_uri(uri) is not None
        if c.artifact_type == "ReleaseAudit" and field == "userReportRef":
            if exists:
                yield Violation(path, "userReportRef is a forward reference and must not exist yet")
        elif not exists:
            yield Violation(path, "Referenced artifact does not exist in this run")


@rule("REF-TYPED-TARGET")
def ref_typed_target(c: Check[Any]) -> Iterator[Violation]:
    """A typed reference field (taskContractRef, workPlanRefs, …) naming another artifact type."""
    for path, field, uri in c.refs:
        expected = TYPED_FIELDS.get(field)
        target = c.state.by_uri(uri)
        if expected is not None and target is not None and target.type != expected:
            yield Violation(path, f"{field} must reference a {expected}, not a {target.type}")
        elif expected is not None and uri in c.state.links:
            yield Violation(path, f"{field} must reference a {expected} of this run")


@rule("REF-SYSTEM")
def ref_system(c: Check[Any]) -> Iterator[Violation]:
    """System references outside system fields, or naming an unknown system artifact."""
    for path, field, uri in c.all_refs():
        if not uri.startswith("artifact://system/"):
            continue
        if field not in _SYSTEM_FIELDS:
            yield Violation(path, f"System references are not allowed in {field}")
        elif uri not in SYSTEM_REFS:
            yield Violation(path, "Unknown system reference")


@rule("REF-REPO-SELECTED")
def ref_repo_selected(c: Check[Any]) -> Iterator[Violation]:
    """Citing a repo:// source the current ContextManifest did not select or pin."""
    selected = selected_refs(c.state)
    for path, _, uri in c.all_refs():
        if uri.startswith("repo://") and uri not in selected:
            yield Violation(path, "Repository reference is not selected by the current manifest")


_LINEAGE_NEUTRAL: Final = SUPPORTING_TYPES | frozenset(INTERNAL_ARTIFACT_TYPES)
"""Artifacts stored between an answer and the next primary one without consuming the lineage."""


def pending_answer(state: RunState) -> StoredArtifact | None:
    """Return the clarification answer whose lineage the next primary artifact must cite."""
    for artifact in reversed(state.artifacts):
        if artifact.type == "UserMessage" and len(artifact.source_refs) == 1:
            target = state.by_uri(artifact.source_refs[0])
            if target is not None and target.type == "ClarificationRequest":
                return artifact
        if artifact.type not in _LINEAGE_NEUTRAL:
            return None
    return None


@rule("RUN-RESUME-LINEAGE", section="§3.2 clarification")
def resume_lineage(c: Check[Any]) -> Iterator[Violation]:
    """Resuming after a clarification without citing both the request and the answer."""
    if c.artifact_type != PHASES[c.phase].primary:
        return
    answer = pending_answer(c.state)
    if answer is None:
        return
    if not {answer.source_refs[0], answer.uri} <= set(c.source_refs):
        yield Violation(
            "sourceRefs",
            "The first artifact after a clarification must cite its request and answer in "
            "the source_refs argument",
            [answer.source_refs[0], answer.uri],
        )


@rule("REF-TRACE-EVENT")
def trace_event_exists(c: Check[Any]) -> Iterator[Violation]:
    """Citing a trace event (by id or event-NNNN) that does not exist in the run."""
    prefix = f"trace://{c.state.run.run_id}/"
    for path, _, uri in c.all_refs():
        if uri.startswith(prefix) and c.state.trace_event(uri) is None:
            yield Violation(path, "The referenced trace event does not exist in this run")


def _accepts(c: Check[Any], ref: DirectRef) -> bool:
    target = c.state.by_uri(ref.uri)
    if target is None:
        # The prior run's Evidence, read and verified for this submission (a linked run only;
        # REF-LINKED-EVIDENCE says why anything else it cites there is refused).
        linked = c.state.links.get(ref.uri)
        intact = linked is not None and linked.intact and linked.type == "Evidence"
        return intact and not ref.user_reported
    if ref.user_reported:
        return target.type == "UserMessage"
    if target.type == "Evidence":
        return True
    if target.type == "ContextDocument":
        return ref.context_document
    if target.type == "WorkPlan" and c.mode not in EXECUTING_MODES:
        latest = c.state.latest("WorkPlan")
        return latest is not None and latest.id == target.id
    return False


@rule("REF-DIRECT-EVIDENCE", types=("WorkResult", "QualityReview", "ReleaseAudit", "UserReport"))
def direct_evidence(c: Check[Any]) -> Iterator[Violation]:
    """Proving an outcome with anything but an Evidence artifact: repo:// or trace:// references,
    other artifact types, or a user-reported claim without the user's message."""
    for ref in direct_refs(c.artifact_type, c.body):
        if _accepts(c, ref):
            continue
        if ref.uri.startswith(("repo://", "trace://")):
            kinds = "" if ref.kinds is None else f" (kind {', '.join(sorted(ref.kinds))})"
            yield Violation(
                ref.path,
                "repo:// and trace:// references never prove an outcome: submit what you "
                f"observed as Evidence{kinds} and cite its artifact:// URI",
            )
        elif ref.user_reported:
            yield Violation(ref.path, "A user-reported claim must cite the user's own message")
        elif c.mode not in EXECUTING_MODES:
            latest = c.state.latest("WorkPlan")
            plan = "the latest WorkPlan" if latest is None else latest.uri
            yield Violation(
                ref.path,
                f"In {c.mode} nothing is executed, so no Evidence exists: cite {plan}, the "
                "deliverable, as the evidence",
            )
        else:
            yield Violation(ref.path, "A direct-evidence field must reference an Evidence artifact")


@rule("REF-EVIDENCE-KIND", types=("WorkResult", "QualityReview"))
def evidence_kind(c: Check[Any]) -> Iterator[Violation]:
    """Backing a diff, test, action or verification with Evidence of an incompatible kind."""
    for ref in direct_refs(c.artifact_type, c.body):
        if ref.kinds is None:
            continue
        target = c.state.by_uri(ref.uri)
        linked = c.state.links.get(ref.uri)
        if target is not None and target.type == "Evidence":
            kind = target.body.kind
        elif target is None and linked is not None and linked.kind is not None:
            kind = linked.kind  # the prior run's Evidence: its kind counts the same
        else:
            continue
        if kind not in ref.kinds:
            accepted = ", ".join(sorted(ref.kinds))
            message = f"Evidence of kind {kind} cannot back this field ({accepted})"
            yield Violation(ref.path, message)


@rule("REF-PERMISSION-NOT-EVIDENCE")
def permission_not_evidence(c: Check[Any]) -> Iterator[Violation]:
    """Citing a permission_checked trace event as acceptance, verification or release evidence."""
    for path, uri in evidence_fields(c.wire):
        event = c.state.trace_event(uri)
        if event is not None and event.event_type == "permission_checked":
            yield Violation(path, "A permission decision is not evidence of an outcome")


RULES: Final = rule.registered
