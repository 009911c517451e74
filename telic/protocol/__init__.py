"""Telic protocol 1.0: the strict wire schemas of every artifact, canonical JSON and digests.

Every artifact of the protocol (docs/protocol.md §3.0–3.1) is a frozen, strict pydantic model with
camelCase wire names and ``schemaVersion: "1.0"``; every schema-level rule is enforced by the
models. ``parse_artifact(type, body)`` is the door from untrusted JSON (by wire names only,
2 MiB canonical limit, ``SchemaViolation`` on failure); ``json_schema(type)`` is what a host
receives as ``requiredOutputSchema``. Cross-artifact rules live in ``telic.controller``.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.protocol._audit import (
        ReleaseAudit as ReleaseAudit,
        RemediationDefect as RemediationDefect,
    )
    from telic.protocol._base import UNDESCRIBED as UNDESCRIBED, WireModel as WireModel
    from telic.protocol._canonical import (
        SHA256_PREFIX as SHA256_PREFIX,
        CanonicalJsonError as CanonicalJsonError,
        canonical_json as canonical_json,
        canonical_sha256 as canonical_sha256,
        parse_json_strict as parse_json_strict,
        sha256_hex_digest as sha256_hex_digest,
    )
    from telic.protocol._context import (
        EXCLUSION_REASONS as EXCLUSION_REASONS,
        MAX_FILE_BYTES as MAX_FILE_BYTES,
        MAX_INVENTORY_FILES as MAX_INVENTORY_FILES,
        MAX_SELECTED_FILES as MAX_SELECTED_FILES,
        MAX_TOTAL_BYTES as MAX_TOTAL_BYTES,
        ContextDocument as ContextDocument,
        ContextManifest as ContextManifest,
        ContextManifestWire as ContextManifestWire,
        ExcludedCandidateSummary as ExcludedCandidateSummary,
        InventorySource as InventorySource,
        SelectedSource as SelectedSource,
        WireBudget as WireBudget,
        WireFingerprint as WireFingerprint,
        normalize_manifest as normalize_manifest,
    )
    from telic.protocol._contract import (
        VERIFICATION_CAPABILITIES as VERIFICATION_CAPABILITIES,
        TaskContract as TaskContract,
    )
    from telic.protocol._evidence import (
        Evidence as Evidence,
        decode_evidence_content as decode_evidence_content,
    )
    from telic.protocol._frame import ProblemFrame as ProblemFrame, ScenarioSpec as ScenarioSpec
    from telic.protocol._next_action import (
        STOP_CONDITIONS as STOP_CONDITIONS,
        ClarificationAction as ClarificationAction,
        PhaseAction as PhaseAction,
        RemainingBudgets as RemainingBudgets,
        TerminalAction as TerminalAction,
        instruction_ref as instruction_ref,
    )
    from telic.protocol._plan import WorkNode as WorkNode, WorkPlan as WorkPlan
    from telic.protocol._quality import (
        CorrectionWorkOrder as CorrectionWorkOrder,
        QualityReview as QualityReview,
        RemediationWorkOrder as RemediationWorkOrder,
        VerificationResult as VerificationResult,
    )
    from telic.protocol._registry import (
        ARTIFACT_MODELS as ARTIFACT_MODELS,
        json_schema as json_schema,
        parse_artifact as parse_artifact,
        shared_json_schema as shared_json_schema,
        wire_names as wire_names,
    )
    from telic.protocol._report import UserReport as UserReport
    from telic.protocol._result import (
        FileChange as FileChange,
        WorkAction as WorkAction,
        WorkResult as WorkResult,
    )
    from telic.protocol._review import (
        DimensionScores as DimensionScores,
        PromptReview as PromptReview,
    )
    from telic.protocol._run import (
        MAX_REPOSITORY_ROOT as MAX_REPOSITORY_ROOT,
        Authorization as Authorization,
        HostDescriptor as HostDescriptor,
        RunBudgets as RunBudgets,
        RunEnvelope as RunEnvelope,
        UserMessage as UserMessage,
        WorkingContext as WorkingContext,
    )
    from telic.protocol._trace import EVENT_TYPES as EVENT_TYPES, TraceEvent as TraceEvent
    from telic.protocol._types import (
        ACTION_ROLES as ACTION_ROLES,
        CONTROLLER_ARTIFACT_TYPES as CONTROLLER_ARTIFACT_TYPES,
        HOST_ARTIFACT_TYPES as HOST_ARTIFACT_TYPES,
        INTERNAL_ARTIFACT_TYPES as INTERNAL_ARTIFACT_TYPES,
        LOGICAL_ROLES as LOGICAL_ROLES,
        MAX_ARTIFACT_BYTES as MAX_ARTIFACT_BYTES,
        MAX_BOUNDED_TEXT as MAX_BOUNDED_TEXT,
        MAX_ITEMS as MAX_ITEMS,
        MAX_PLAN_TOOL_CALLS as MAX_PLAN_TOOL_CALLS,
        MAX_REFERENCE_URI as MAX_REFERENCE_URI,
        MAX_RELATIVE_PATH as MAX_RELATIVE_PATH,
        PHASES as PHASES,
        REFERENCE_URI_PATTERN as REFERENCE_URI_PATTERN,
        TOPOLOGIES as TOPOLOGIES,
        ActionPhase as ActionPhase,
        ActionRole as ActionRole,
        ArtifactType as ArtifactType,
        HostArtifactType as HostArtifactType,
        Identifier as Identifier,
        InternalPhase as InternalPhase,
        InternalRunStatus as InternalRunStatus,
        NativeSubagents as NativeSubagents,
        NonEmptyItems as NonEmptyItems,
        PermissionSet as PermissionSet,
        RepositoryPermissions as RepositoryPermissions,
        RunStatus as RunStatus,
        ShellPermissions as ShellPermissions,
        Stage as Stage,
        SubagentPermissions as SubagentPermissions,
        TerminalPhase as TerminalPhase,
        TerminalStatus as TerminalStatus,
        Topology as Topology,
    )
    from telic.protocol._vocabulary import (
        CAPABILITIES as CAPABILITIES,
        IDENTIFIER_PATTERN as IDENTIFIER_PATTERN,
        MAX_IDENTIFIER as MAX_IDENTIFIER,
        MODES as MODES,
        Capability as Capability,
        Mode as Mode,
        is_identifier as is_identifier,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
