"""Invariants of proof: what may stand as direct evidence, of which kind, and what never can.

A direct-evidence field must name an ``Evidence`` artifact of a kind its field or capability
accepts. ``repo://`` and ``trace://`` references never prove an outcome, and a
``permission_checked`` trace event is not evidence of anything but a decision. The exceptions:
a ContextDocument may ground WorkResult observations and inferences, a user-reported claim
cites the user's own message, and in plan_only and report_only the latest WorkPlan is the
deliverable that the reviews judge.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from telic.controller._check import ANY, Check, Rules, Violation
from telic.controller._direct import DirectRef, direct_refs, evidence_fields

__all__ = ["RULES"]


_PLAN_DELIVERABLE: Final = frozenset({"plan_only", "report_only"})
_S = "§3.4 every submission"

rule = Rules((ANY,), _S)


@rule(
    "REF-TRACE-EVENT", "Citing a trace event (by id or event-NNNN) that does not exist in the run."
)
def trace_event_exists(c: Check[Any]) -> Iterator[Violation]:
    """A ``trace://<runId>/<event>`` reference names an event that exists in this run's trace."""
    prefix = f"trace://{c.state.run.run_id}/"
    for path, _, uri in c.all_refs():
        if uri.startswith(prefix) and c.state.trace_event(uri) is None:
            yield Violation(path, "The referenced trace event does not exist in this run")


def _accepts(c: Check[Any], ref: DirectRef) -> bool:
    target = c.resolve(ref.uri)
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
    if target.type == "WorkPlan" and c.mode in _PLAN_DELIVERABLE:
        latest = c.state.latest("WorkPlan")
        return latest is not None and latest.id == target.id
    return False


@rule(
    "REF-DIRECT-EVIDENCE",
    "Proving an outcome with anything but an Evidence artifact: repo:// or trace:// "
    "references, other artifact types, or a user-reported claim without the user's message.",
    types=("WorkResult", "QualityReview", "ReleaseAudit", "UserReport"),
)
def direct_evidence(c: Check[Any]) -> Iterator[Violation]:
    """Direct-evidence fields name Evidence (or their field's one exception), never repo/trace."""
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
        elif c.mode in _PLAN_DELIVERABLE:
            latest = c.state.latest("WorkPlan")
            plan = "the latest WorkPlan" if latest is None else latest.uri
            yield Violation(
                ref.path,
                f"In {c.mode} nothing is executed, so no Evidence exists: cite {plan}, the "
                "deliverable, as the evidence",
            )
        else:
            yield Violation(ref.path, "A direct-evidence field must reference an Evidence artifact")


@rule(
    "REF-EVIDENCE-KIND",
    "Backing a diff, test, action or verification with Evidence of an incompatible kind.",
    types=("WorkResult", "QualityReview"),
)
def evidence_kind(c: Check[Any]) -> Iterator[Violation]:
    """Evidence in a kind-typed field (diffs, tests, actions, verifications) has a fitting kind."""
    for ref in direct_refs(c.artifact_type, c.body):
        if ref.kinds is None:
            continue
        target = c.resolve(ref.uri)
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


@rule(
    "REF-PERMISSION-NOT-EVIDENCE",
    "Citing a permission_checked trace event as acceptance, verification or release evidence.",
)
def permission_not_evidence(c: Check[Any]) -> Iterator[Violation]:
    """A permission_checked event never serves as acceptance, verification or release evidence."""
    for path, uri in evidence_fields(c.wire):
        event = c.state.trace_event(uri)
        if event is not None and event.event_type == "permission_checked":
            yield Violation(path, "A permission decision is not evidence of an outcome")


RULES: Final = rule.registered
