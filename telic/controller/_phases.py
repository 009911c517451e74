"""The phase table of the state machine (docs/protocol.md §3.2).

Each internal phase has one protocol name, one logical role, one primary output type, the
additional types it accepts, and the artifact types its NextAction may list as inputs. Everything
the machine and NextAction need to know about a phase is read from ``PHASES`` so that the table
is the single place where the protocol's phase rules live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, cast

from telic.protocol import (
    CONTROLLER_ARTIFACT_TYPES,
    HOST_ARTIFACT_TYPES,
    ActionPhase,
    ActionRole,
    Capability,
    HostArtifactType,
    InternalPhase,
    Mode,
)


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """What one internal phase is: its protocol name, role, outputs and eligible inputs."""

    name: InternalPhase
    protocol: ActionPhase
    role: ActionRole
    primary: str
    additional: tuple[str, ...]
    """Other types accepted in the phase (ClarificationRequest, supporting types)."""
    inputs: frozenset[str]
    """Artifact types the phase's inputRefs closure may contain."""
    summary: str

    @property
    def advertised(self) -> tuple[HostArtifactType, ...]:
        """Additional types whose schema NextAction advertises (never ScenarioSpec, §6)."""
        return tuple(cast(HostArtifactType, t) for t in self.additional if t != "ScenarioSpec")


_CR = "ClarificationRequest"
_DOCS = frozenset({"UserMessage", "ContextManifest", "ContextDocument", _CR})
_WORK = frozenset({"WorkPlan", "WorkResult", "QualityReview", "ReleaseAudit", "Evidence"})
_CONTRACT = frozenset({"UserMessage", "ProblemFrame", "TaskContract", _CR})


PHASES: Final[dict[InternalPhase, PhaseSpec]] = {
    spec.name: spec
    for spec in (
        PhaseSpec(
            "context_grounding",
            "context_discovery",
            "controller",
            "ContextManifest",
            (_CR,),
            frozenset({"UserMessage", _CR}),
            "Ground the repository context before any role acts.",
        ),
        PhaseSpec(
            "agent_1_frame",
            "agent_1_frame",
            "scenario_author",
            "ProblemFrame",
            (_CR,),
            _DOCS,
            "Frame the problem from the request and the grounded context.",
        ),
        PhaseSpec(
            "agent_2_compile",
            "agent_2_compile",
            "task_compiler",
            "TaskContract",
            (_CR, "ScenarioSpec"),
            _DOCS | {"ProblemFrame"},
            "Compile the problem frame into a version 1 task contract.",
        ),
        PhaseSpec(
            "agent_1_review",
            "agent_1_review",
            "scenario_author",
            "PromptReview",
            (_CR,),
            _CONTRACT,
            "Review the task contract against the request and the frame.",
        ),
        PhaseSpec(
            "agent_2_revise",
            "agent_2_revision",
            "task_compiler",
            "TaskContract",
            (_CR,),
            _DOCS | _CONTRACT | {"PromptReview"},
            "Revise the contract exactly as the blocking review findings require.",
        ),
        PhaseSpec(
            "agent_3_plan",
            "agent_3_plan",
            "quality_controller",
            "WorkPlan",
            (_CR,),
            _CONTRACT | _WORK | {"ContextManifest", "PromptReview"},
            "Plan work nodes within the contract, permissions and budgets.",
        ),
        PhaseSpec(
            "agent_4_execute",
            "agent_4_execute",
            "executor",
            "WorkResult",
            (_CR, "Evidence"),
            frozenset({"UserMessage", "ContextManifest", "TaskContract", _CR}) | _WORK,
            "Do the pending work node within its permissions; report the result.",
        ),
        PhaseSpec(
            "agent_3_review",
            "agent_3_quality_review",
            "quality_controller",
            "QualityReview",
            (_CR,),
            _CONTRACT | _WORK,
            "Review the work against the contract's criteria and verifications.",
        ),
        PhaseSpec(
            "agent_3_evidence_reverify",
            "agent_3_evidence_reverify",
            "quality_controller",
            "QualityReview",
            (_CR,),
            _CONTRACT | _WORK,
            "Re-verify the reviewed evidence in a second review (forensic runs only).",
        ),
        PhaseSpec(
            "agent_5_audit",
            "agent_5_release_audit",
            "release_auditor",
            "ReleaseAudit",
            (),
            _CONTRACT | _WORK | {"PromptReview"},
            "Audit the run's claims against the request and the evidence.",
        ),
        PhaseSpec(
            "agent_5_report",
            "user_report",
            "release_auditor",
            "UserReport",
            (),
            _CONTRACT | _WORK | {"PromptReview", "ContextManifest"},
            "Report honestly what was and was not proven.",
        ),
    )
}
"""The working phases, in protocol order (the reverify phase only in forensic runs, §3.7)."""

CONTROLLER_OWNED: Final = frozenset(CONTROLLER_ARTIFACT_TYPES)
"""Types only the controller produces; a host can never submit them."""
HOST_TYPES: Final = frozenset(HOST_ARTIFACT_TYPES)
"""The eleven host-submittable types."""
SUPPORTING_TYPES: Final = frozenset({"Evidence", "ScenarioSpec"})
"""Types stored beside a phase without advancing the run version."""

EXECUTING_MODES: Final[frozenset[Mode]] = frozenset({"analyze_only", "fix_only", "analyze_and_fix"})
"""Modes whose plans are executed (report_only and plan_only skip execution)."""
MUTATING_MODES: Final[frozenset[Mode]] = frozenset({"fix_only", "analyze_and_fix"})
"""Modes that may change the repository (analyze_and_fix only after the fix is unlocked)."""
MAY_MUTATE: Final[frozenset[Capability]] = frozenset(
    {
        "repository.write",
        "repository.delete",
        "runtime.restart",
        "browser.mutate",
        "external.write",
        "shell.execute",
        "subagent.spawn",
    }
)
"""Capabilities that may change something: a completion verifier runs after every node allowed
one (WP-VERIFIER-AFTER-MUTATION), and granting one is a forensic signal (§3.7)."""


def expected_producer(artifact_type: str, phase: InternalPhase) -> ActionRole:
    """Return the producer the controller records for ``artifact_type`` submitted in ``phase``.

    The caller never chooses it: it is the role that owns the phase (every type is accepted
    only in phases its producer owns, and a ClarificationRequest is produced by whichever role
    owns the current phase), except a ScenarioSpec, which the scenario author writes beside
    the compile phase.
    """
    return "scenario_author" if artifact_type == "ScenarioSpec" else PHASES[phase].role
