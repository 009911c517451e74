"""Common types of the Telic 1.0 protocol (docs/protocol.md §3.0).

Scalars are ``Annotated`` aliases so that one definition carries the constraint, its JSON Schema
and its error. Closed sets are ``Literal`` aliases; the ones code iterates also keep their
members as tuples, so that code need not re-spell the values. A set that holds another names
it (``RunStatus`` is ``TerminalStatus`` and two more), so each member is spelled once.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Final, Literal, TypeVar, get_args

from pydantic import AfterValidator, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import UNDESCRIBED, WireModel
from telic.protocol._vocabulary import (
    CAPABILITIES as CAPABILITIES,
    IDENTIFIER_PATTERN as IDENTIFIER_PATTERN,
    MAX_IDENTIFIER as MAX_IDENTIFIER,
    MAX_SUMMARY as MAX_SUMMARY,
    MAX_TARGET as MAX_TARGET,
    MODES as MODES,
    Capability as Capability,
    Mode as Mode,
)

T = TypeVar("T")

# ------------------------------------------------------------------------------------ limits

MAX_ITEMS: Final = 256
"""Default maximum size of a collection."""
MAX_ARTIFACT_BYTES: Final = 2_097_152
"""Maximum canonical JSON size of one artifact body."""
MAX_BOUNDED_TEXT: Final = 32_768
"""Maximum chars (and UTF-8 bytes) of a BoundedText."""
MAX_REFERENCE_URI: Final = 2_048
MAX_RELATIVE_PATH: Final = 1_024
MAX_NODE_TOOL_CALLS: Final = 1_000
"""Most tool calls one work node (or one remediation order) may reserve."""
MAX_PLAN_TOOL_CALLS: Final = 4_000
"""Most tool calls one plan (and one run, cumulatively) may reserve."""

REFERENCE_URI_PATTERN: Final = r"^(artifact|trace|repo)://[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$"
SHA256_PATTERN: Final = r"^sha256:[0-9a-f]{64}$"
_TIMESTAMP_RE: Final = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$"
)

# ------------------------------------------------------------------------------------ scalars


def utf8_at_most(limit: int) -> AfterValidator:
    """Return a validator refusing strings of more than ``limit`` UTF-8 bytes."""

    def check(value: str) -> str:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise PydanticCustomError(
                "string_too_many_bytes",
                "String should have at most {limit} UTF-8 bytes, not {size}",
                {"limit": limit, "size": size},
            )
        return value

    return AfterValidator(check)


def unique(values: list[str]) -> bool:
    """Return whether ``values`` holds no duplicates (every "ids must be unique" rule)."""
    return len(set(values)) == len(values)


def _check_timestamp(value: str) -> str:
    if not _TIMESTAMP_RE.match(value):
        raise PydanticCustomError(
            "timestamp_format", "Timestamp should be ISO-8601 with a time-zone offset"
        )
    try:
        datetime.fromisoformat(value)
    except ValueError as exc:
        raise PydanticCustomError(
            "timestamp_value", "Timestamp is not a real date and time"
        ) from exc
    return value


def _check_relative_path(value: str) -> str:
    if value.startswith("/") or ".." in value.split("/"):
        raise PydanticCustomError(
            "relative_path", "Path should be relative, without a leading '/' or a '..' segment"
        )
    return value


Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_IDENTIFIER, pattern=IDENTIFIER_PATTERN)
]
"""A stable id: ``^[A-Za-z0-9][A-Za-z0-9._:-]*$``, 1–128 chars."""


def _reference_uri(schemes: str) -> StringConstraints:
    """The constraints of a reference: ``REFERENCE_URI_PATTERN`` with ``schemes`` as its scheme."""
    pattern = REFERENCE_URI_PATTERN.replace("(artifact|trace|repo)", schemes)
    return StringConstraints(min_length=1, max_length=MAX_REFERENCE_URI, pattern=pattern)


ReferenceUri = Annotated[str, _reference_uri("(artifact|trace|repo)")]
"""An ``artifact://``, ``trace://`` or ``repo://`` reference, ≤2048 chars."""

ArtifactUri = Annotated[str, _reference_uri("artifact")]
"""An ``artifact://`` reference of at most 2048 chars."""

RepositoryUri = Annotated[str, _reference_uri("repo")]
"""A ``repo://`` reference to a repository file, ≤2048 chars."""

TraceUri = Annotated[str, _reference_uri("trace")]
"""A ``trace://`` reference of at most 2048 chars."""

Timestamp = Annotated[
    str, AfterValidator(_check_timestamp), Field(json_schema_extra={"format": "date-time"})
]
"""An ISO-8601 timestamp with an offset, kept as the exact string submitted."""

RelativePath = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_RELATIVE_PATH),
    AfterValidator(_check_relative_path),
]
"""A repository-relative path: 1–1024 chars, no leading '/', no '..' segment."""

Sha256 = Annotated[str, StringConstraints(pattern=SHA256_PATTERN)]
"""A content digest: ``sha256:`` + 64 lowercase hex."""

BoundedText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_BOUNDED_TEXT),
    utf8_at_most(MAX_BOUNDED_TEXT),
]
"""Free text: 1–32,768 chars and at most 32,768 UTF-8 bytes."""

Summary = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_SUMMARY), utf8_at_most(MAX_SUMMARY)
]
"""A decision summary: 1–4,096 chars and at most 4,096 UTF-8 bytes."""

Label = Annotated[str, StringConstraints(min_length=1, max_length=255)]
"""A short label of 1–255 chars."""

Items = Annotated[list[T], Field(max_length=MAX_ITEMS)]
"""A list of at most 256 items."""

NonEmptyItems = Annotated[list[T], Field(min_length=1, max_length=MAX_ITEMS)]
"""A list of 1–256 items."""

FewItems = Annotated[list[T], Field(max_length=64)]
"""A list of at most 64 items."""

Confidence = Annotated[float, Field(ge=0, le=1)]
"""A probability between 0 and 1."""

Score = Annotated[float, Field(ge=0, le=100)]
"""A score between 0 and 100."""

OnceBudget = Annotated[int, Field(ge=0, le=1)]
"""A budget of at most one use (contract revisions, shared remediations): 0 or 1."""

WorkerCount = Annotated[int, Field(ge=1, le=16)]
"""Most workers that may run at once: 1–16."""

ChildCount = Annotated[int, Field(ge=0, le=16)]
"""Most subagents that may be spawned (by a node, or under a permission set): 0–16."""

SubagentDepth = Annotated[int, Field(ge=0, le=4)]
"""Deepest allowed subagent nesting: 0–4."""

ToolCalls = Annotated[int, Field(ge=1, le=MAX_NODE_TOOL_CALLS)]
"""The tool-call budget of one work order: 1–1000."""

ExitCode = Annotated[int, Field(ge=0, le=255)]
"""A process exit status: 0–255."""

ActionTarget = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TARGET)]
"""What an action or a permission check was aimed at: a path, command, URL or host, ≤2048 chars."""

# ------------------------------------------------------------------------------------ enums

_PhaseOutputType = Literal[
    "ClarificationRequest",
    "ProblemFrame",
    "ScenarioSpec",
    "TaskContract",
    "PromptReview",
    "WorkPlan",
    "WorkResult",
    "QualityReview",
    "ReleaseAudit",
    "UserReport",
]

ArtifactType = Literal[
    "RunEnvelope",
    "ContextManifest",
    "NextAction",
    _PhaseOutputType,
    "TraceEvent",
    "Evidence",
    "ReceiptAudit",
]

HostArtifactType = Literal[_PhaseOutputType, "Evidence"]
"""The eleven types a host may submit."""
HOST_ARTIFACT_TYPES: Final[tuple[HostArtifactType, ...]] = get_args(HostArtifactType)

ControllerArtifactType = Literal[
    "RunEnvelope", "ContextManifest", "NextAction", "TraceEvent", "ReceiptAudit"
]
CONTROLLER_ARTIFACT_TYPES: Final[tuple[ControllerArtifactType, ...]] = get_args(
    ControllerArtifactType
)

InternalArtifactType = Literal[
    "UserMessage", "ContextDocument", "EvidencePacket", "CastRecord", "CastPolicy"
]
"""Types the ledger stores that are not in the protocol enum.

``EvidencePacket``, ``CastRecord`` and ``CastPolicy`` hold the casting layer's sealed packets,
admitted casts and the run's user-enabled cast types (models from ``telic_packets``); the phase
logic never reads them.
"""
INTERNAL_ARTIFACT_TYPES: Final[tuple[InternalArtifactType, ...]] = get_args(InternalArtifactType)

_AgentPhase = Literal[
    "agent_1_frame",
    "agent_2_compile",
    "agent_1_review",
    "agent_2_revision",
    "contract_validation",
    "agent_3_plan",
    "plan_validation",
    "agent_4_execute",
    "diagnosis_review",
    "agent_3_quality_review",
    "agent_3_evidence_reverify",
    "remediation_plan",
    "agent_4_remediation",
    "agent_5_release_audit",
    "user_report",
]

TerminalPhase = Literal["completed", "partial", "blocked", "cancelled"]

TerminalStatus = Literal[TerminalPhase, "failed_verification"]
"""How the run ended, as reported to the user."""

ActionPhase = Literal["received", "context_discovery", _AgentPhase]
"""Protocol phases a host can be asked to perform (neither paused nor terminal)."""

Phase = Literal[
    "received", "context_discovery", "awaiting_clarification", _AgentPhase, TerminalPhase
]
PHASES: Final[tuple[Phase, ...]] = get_args(Phase)

Topology = Literal["micro", "standard", "forensic"]
"""The shape of a run's phase graph a host may ask for at start (docs/protocol.md §3.7):
``micro`` (frame, spot review, report), ``standard`` (the 1.0 path) or ``forensic`` (the 1.0
path plus an evidence re-verifying review)."""
TOPOLOGIES: Final[tuple[Topology, ...]] = get_args(Topology)

ReviewKind = Literal["spot", "evidence_reverify"]
"""Which review a QualityReview is: the ordinary one, or a forensic run's re-verifying one."""

InternalPhase = Literal[
    "context_grounding",
    "agent_1_frame",
    "agent_2_compile",
    "agent_1_review",
    "agent_2_revise",
    "agent_3_plan",
    "agent_4_execute",
    "agent_3_review",
    "agent_3_evidence_reverify",
    "agent_5_audit",
    "agent_5_report",
]
"""The controller's working phases (terminal runs keep the phase they ended in)."""

ActionRole = Literal[
    "controller",
    "scenario_author",
    "task_compiler",
    "quality_controller",
    "executor",
    "release_auditor",
]
"""The logical roles that own a phase."""
ACTION_ROLES: Final[tuple[ActionRole, ...]] = get_args(ActionRole)

LogicalRole = Literal[ActionRole, "host", "tool", "user"]
LOGICAL_ROLES: Final[tuple[LogicalRole, ...]] = get_args(LogicalRole)

RunStatus = Literal["active", "awaiting_input", TerminalStatus]

InternalRunStatus = Literal["running", "awaiting_clarification", TerminalPhase]

NativeSubagents = Literal["available", "unavailable", "unknown"]
Stage = Literal["diagnosis", "completion"]

TaskContractField = Literal[
    "id",
    "runId",
    "schemaVersion",
    "version",
    "originalRequestRef",
    "problemFrameRef",
    "intentMode",
    "objective",
    "scope",
    "constraints",
    "nonGoals",
    "contextRefs",
    "ruleRefs",
    "permissions",
    "acceptanceCriteria",
    "requiredOutputs",
    "verificationRequirements",
    "stopConditions",
    "assumptions",
    "unresolvedQuestions",
    "rationaleSummary",
]
"""Field names of a TaskContract, as findings and reviews cite them."""

CorrectableField = Literal[
    "objective",
    "contextRefs",
    "requiredOutputs",
    "verificationRequirements",
    "stopConditions",
    "assumptions",
    "unresolvedQuestions",
    "rationaleSummary",
]
"""The TaskContract fields a revision may correct."""

# ------------------------------------------------------------------------------ permissions

Glob = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
ShellCommand = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
RuntimeTarget = Annotated[str, StringConstraints(min_length=1, max_length=255)]
DomainName = Annotated[str, StringConstraints(min_length=1, max_length=253)]


class RepositoryPermissions(WireModel):
    """Repository path globs per operation."""

    read: Items[Glob]
    write: Items[Glob]
    delete: Items[Glob]


class ShellPermissions(WireModel):
    """Read-only inspection and an exact command allowlist."""

    inspect: bool
    execute_allowlist: Items[ShellCommand]


class RuntimePermissions(WireModel):
    """Runtime targets per operation."""

    inspect: Items[RuntimeTarget]
    restart: Items[RuntimeTarget]


class BrowserPermissions(WireModel):
    """Browser inspection and state mutation."""

    model_config = UNDESCRIBED

    inspect: bool
    mutate_state: bool


class NetworkPermissions(WireModel):
    """Exact host names to read."""

    read_domains: Items[DomainName]
    external_write: bool


class SubagentPermissions(WireModel):
    """Whether and how deeply children may be spawned."""

    model_config = UNDESCRIBED

    spawn: bool
    maximum_children: ChildCount
    maximum_depth: SubagentDepth


class PermissionSet(WireModel):
    """A complete permission set; every part is required."""

    model_config = UNDESCRIBED

    repository: RepositoryPermissions
    shell: ShellPermissions
    runtime: RuntimePermissions
    browser: BrowserPermissions
    network: NetworkPermissions
    subagents: SubagentPermissions

    @classmethod
    def empty(cls) -> PermissionSet:
        """Return the set that permits nothing.

        It is one shared instance (the controller asks for it several times per step): models
        are frozen, and nothing may mutate the lists inside a permission set.
        """
        return _NO_PERMISSIONS


_NO_PERMISSIONS: Final = PermissionSet(
    repository=RepositoryPermissions(read=[], write=[], delete=[]),
    shell=ShellPermissions(inspect=False, execute_allowlist=[]),
    runtime=RuntimePermissions(inspect=[], restart=[]),
    browser=BrowserPermissions(inspect=False, mutate_state=False),
    network=NetworkPermissions(read_domains=[], external_write=False),
    subagents=SubagentPermissions(spawn=False, maximum_children=0, maximum_depth=0),
)


# --------------------------------------------------------------------- claims and findings

ClaimStatus = Literal["observed", "inferred", "user_reported", "unverified"]


class EvidenceClaim(WireModel):
    """A claim with its provenance status and the evidence behind it."""

    model_config = UNDESCRIBED

    id: Identifier
    text: BoundedText
    status: ClaimStatus
    evidence_refs: Items[ReferenceUri]
    confidence: Confidence

    @model_validator(mode="after")
    def _observed_needs_evidence(self) -> EvidenceClaim:
        if self.status in ("observed", "inferred") and not self.evidence_refs:
            raise PydanticCustomError(
                "claim_without_evidence", "An observed or inferred claim needs an evidenceRef"
            )
        return self


Severity = Literal["info", "warning", "blocking"]


class Finding(WireModel):
    """A review finding, optionally asking for a contract correction."""

    id: Identifier
    severity: Severity
    claim: BoundedText
    source_refs: Items[ReferenceUri]
    rubric_dimension: Label | None
    required_correction: BoundedText | None
    preserve_fields: FewItems[TaskContractField]
    correction_fields: FewItems[CorrectableField] = []
    rationale_summary: Summary

    @model_validator(mode="after")
    def _blocking_needs_source(self) -> Finding:
        if self.severity == "blocking" and not self.source_refs:
            raise PydanticCustomError(
                "blocking_finding_without_source", "A blocking finding needs a sourceRef"
            )
        return self


# ------------------------------------------------------------------ shared artifact shapes


class Scope(WireModel):
    """In the user's terms."""

    include: Items[BoundedText]
    exclude: Items[BoundedText]


class AcceptanceCriterion(WireModel):
    """A testable criterion, staged for diagnosis or completion."""

    id: Identifier
    stage: Stage
    requirement: BoundedText
    evidence_required: NonEmptyItems[Label]
    """Kinds of evidence that would prove it."""
