"""Where direct evidence is consumed: the fields, the kinds they accept, and the exceptions.

§3.4 names the *direct-evidence fields* — the places where a reference must prove an outcome —
and, for some of them, the Evidence kinds that can do so. ``direct_refs`` walks a typed body and
yields one ``DirectRef`` per reference found in such a field, with what that field accepts, so
that the rules themselves stay a few lines long.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from telic.protocol import QualityReview, ReleaseAudit, UserReport, WorkResult

_READ_KINDS: Final = frozenset({"repository", "diff", "tool_output"})
_SHELL_KINDS: Final = frozenset({"tool_output", "log", "test"})
_RUNTIME_KINDS: Final = frozenset({"runtime", "log", "tool_output"})
CAPABILITY_KINDS: Final[dict[str, frozenset[str]]] = {
    "repository.read": _READ_KINDS,
    "repository.write": frozenset({"diff"}),
    "repository.delete": frozenset({"diff"}),
    "shell.inspect": _SHELL_KINDS,
    "shell.execute": _SHELL_KINDS,
    "runtime.inspect": _RUNTIME_KINDS,
    "runtime.restart": _RUNTIME_KINDS,
    "browser.inspect": frozenset({"browser"}),
    "browser.mutate": frozenset({"browser"}),
    "network.read": frozenset({"tool_output"}),
    "external.write": frozenset({"tool_output"}),
    "subagent.spawn": frozenset({"tool_output"}),
}
"""Evidence kinds that can back an action or a verification of each capability."""
DIFF_KINDS: Final = frozenset({"diff"})
"""Evidence kinds a FileChange's diffRef accepts."""
COMMAND_KINDS: Final = frozenset({"tool_output", "log"})
"""Evidence kinds a TestResult's commandRef accepts."""
OUTPUT_KINDS: Final = frozenset({"test", "tool_output", "log"})
"""Evidence kinds a TestResult's outputRef accepts."""


@dataclass(frozen=True, slots=True)
class DirectRef:
    """One reference in a direct-evidence field and what that field accepts."""

    path: str
    uri: str
    kinds: frozenset[str] | None = None
    """Evidence kinds the field accepts (None: any kind)."""
    context_document: bool = False
    """Whether a grounded ContextDocument may stand here (WorkResult observations/inferences)."""
    user_reported: bool = False
    """Whether the claim is user-reported, so the reference must be the user's own message."""


def _each(path: str, uris: Sequence[str], **what: Any) -> Iterator[DirectRef]:
    for index, uri in enumerate(uris):
        yield DirectRef(f"{path}.{index}", uri, **what)


def _result(body: WorkResult) -> Iterator[DirectRef]:
    yield from _each("evidenceRefs", body.evidence_refs)
    yield from _each("toolEventRefs", body.tool_event_refs)
    for i, action in enumerate(body.actions):
        kinds = CAPABILITY_KINDS.get(action.capability)
        yield from _each(f"actions.{i}.evidenceRefs", action.evidence_refs, kinds=kinds)
    for i, observation in enumerate(body.observations):
        reported = observation.status == "user_reported"
        path = f"observations.{i}.evidenceRefs"
        refs = observation.evidence_refs
        yield from _each(path, refs, context_document=True, user_reported=reported)
    for i, inference in enumerate(body.inferences):
        path = f"inferences.{i}.evidenceRefs"
        yield from _each(path, inference.evidence_refs, context_document=True)
    for i, change in enumerate(body.files_changed):
        yield DirectRef(f"filesChanged.{i}.diffRef", change.diff_ref, DIFF_KINDS)
    for i, test in enumerate(body.test_results):
        if test.command_ref is not None:
            yield DirectRef(f"testResults.{i}.commandRef", test.command_ref, COMMAND_KINDS)
        if test.output_ref is not None:
            yield DirectRef(f"testResults.{i}.outputRef", test.output_ref, OUTPUT_KINDS)
    for i, entry in enumerate(body.acceptance_coverage):
        yield from _each(f"acceptanceCoverage.{i}.evidenceRefs", entry.evidence_refs)


def _review(body: QualityReview) -> Iterator[DirectRef]:
    groups: tuple[tuple[str, Sequence[Any]], ...] = (
        ("acceptanceResults", body.acceptance_results),
        ("ruleCompliance", body.rule_compliance),
        ("regressionChecks", body.regression_checks),
        ("hardGates", body.hard_gates),
    )
    for name, checks in groups:
        for i, check in enumerate(checks):
            yield from _each(f"{name}.{i}.evidenceRefs", check.evidence_refs)
    for i, result in enumerate(body.verification_results):
        kinds = CAPABILITY_KINDS.get(result.capability)
        yield from _each(f"verificationResults.{i}.evidenceRefs", result.evidence_refs, kinds=kinds)
    if body.diagnosis_gate is not None:
        yield from _each(
            "diagnosisGate.directEvidenceRefs", body.diagnosis_gate.direct_evidence_refs
        )


def _audit(body: ReleaseAudit) -> Iterator[DirectRef]:
    for i, check in enumerate(body.user_fidelity):
        yield from _each(f"userFidelity.{i}.evidenceRefs", check.evidence_refs)
    for i, entry in enumerate(body.claim_evidence_matrix):
        reported = entry.basis == "user_reported"
        path = f"claimEvidenceMatrix.{i}.evidenceRefs"
        yield from _each(path, entry.evidence_refs, user_reported=reported)


def _report(body: UserReport) -> Iterator[DirectRef]:
    for i, claim in enumerate(body.completion_claims):
        reported = claim.status == "user_reported"
        path = f"completionClaims.{i}.evidenceRefs"
        yield from _each(path, claim.evidence_refs, user_reported=reported)
    yield from _each("verificationRefs", body.verification_refs)


def direct_refs(artifact_type: str, body: Any) -> Iterator[DirectRef]:
    """Yield every reference of ``body`` that stands in a direct-evidence field."""
    walkers: dict[str, Callable[[Any], Iterator[DirectRef]]] = {
        "WorkResult": _result,
        "QualityReview": _review,
        "ReleaseAudit": _audit,
        "UserReport": _report,
    }
    walker = walkers.get(artifact_type)
    if walker is not None:
        yield from walker(body)


_EVIDENCE_KEYS: Final = frozenset({"evidenceRefs", "directEvidenceRefs", "verificationRefs"})


def evidence_fields(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(path, uri)`` for every string under an evidence-bearing key of a wire body.

    Wider than ``direct_refs``: it also covers PromptReview hard gates and any other
    ``evidenceRefs`` list, the places where a permission decision could be passed off as proof.
    """
    # Only containers are walked and only they get a path: a body's many scalars cost one type
    # check each (this runs on every submission, over the whole body).
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _EVIDENCE_KEYS and isinstance(item, list):
                where = f"{path}.{key}" if path else str(key)
                for index, uri in enumerate(item):
                    if isinstance(uri, str):
                        yield f"{where}.{index}", uri
            elif isinstance(item, dict | list):
                yield from evidence_fields(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                yield from evidence_fields(item, f"{path}.{index}" if path else str(index))
