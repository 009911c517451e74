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
        AuditDecision as AuditDecision,
    )
    from telic.protocol._audit import (
        ClaimBasis as ClaimBasis,
    )
    from telic.protocol._audit import (
        ClaimEvidenceEntry as ClaimEvidenceEntry,
    )
    from telic.protocol._audit import (
        ClaimSupport as ClaimSupport,
    )
    from telic.protocol._audit import (
        ModeCompliance as ModeCompliance,
    )
    from telic.protocol._audit import (
        ReleaseAudit as ReleaseAudit,
    )
    from telic.protocol._audit import (
        RemediationDefect as RemediationDefect,
    )
    from telic.protocol._base import (
        SCHEMA_VERSION as SCHEMA_VERSION,
    )
    from telic.protocol._base import (
        ArtifactBody as ArtifactBody,
    )
    from telic.protocol._base import (
        WireModel as WireModel,
    )
    from telic.protocol._canonical import (
        CanonicalJsonError as CanonicalJsonError,
    )
    from telic.protocol._canonical import (
        canonical_json as canonical_json,
    )
    from telic.protocol._canonical import (
        canonical_sha256 as canonical_sha256,
    )
    from telic.protocol._canonical import (
        parse_json_strict as parse_json_strict,
    )
    from telic.protocol._canonical import (
        sha256_hex_digest as sha256_hex_digest,
    )
    from telic.protocol._clarification import (
        AUTHORITY_EFFECTS as AUTHORITY_EFFECTS,
    )
    from telic.protocol._clarification import (
        CLARIFICATION_REASONS as CLARIFICATION_REASONS,
    )
    from telic.protocol._clarification import (
        MAX_CHOICES as MAX_CHOICES,
    )
    from telic.protocol._clarification import (
        MIN_CHOICES as MIN_CHOICES,
    )
    from telic.protocol._clarification import (
        RUN_EFFECTS as RUN_EFFECTS,
    )
    from telic.protocol._clarification import (
        AuthorityEffect as AuthorityEffect,
    )
    from telic.protocol._clarification import (
        ClarificationChoice as ClarificationChoice,
    )
    from telic.protocol._clarification import (
        ClarificationReason as ClarificationReason,
    )
    from telic.protocol._clarification import (
        ClarificationRequest as ClarificationRequest,
    )
    from telic.protocol._clarification import (
        RunEffect as RunEffect,
    )
    from telic.protocol._context import (
        EXCLUSION_REASONS as EXCLUSION_REASONS,
    )
    from telic.protocol._context import (
        INVENTORY_SOURCES as INVENTORY_SOURCES,
    )
    from telic.protocol._context import (
        MAX_CANDIDATES as MAX_CANDIDATES,
    )
    from telic.protocol._context import (
        TRUST_KINDS as TRUST_KINDS,
    )
    from telic.protocol._context import (
        ContextBudget as ContextBudget,
    )
    from telic.protocol._context import (
        ContextCandidate as ContextCandidate,
    )
    from telic.protocol._context import (
        ContextDocument as ContextDocument,
    )
    from telic.protocol._context import (
        ContextManifest as ContextManifest,
    )
    from telic.protocol._context import (
        ContextManifestWire as ContextManifestWire,
    )
    from telic.protocol._context import (
        ExcludedCandidate as ExcludedCandidate,
    )
    from telic.protocol._context import (
        ExcludedCandidateSummary as ExcludedCandidateSummary,
    )
    from telic.protocol._context import (
        ExclusionCount as ExclusionCount,
    )
    from telic.protocol._context import (
        ExclusionReason as ExclusionReason,
    )
    from telic.protocol._context import (
        InventorySource as InventorySource,
    )
    from telic.protocol._context import (
        RepositoryFingerprint as RepositoryFingerprint,
    )
    from telic.protocol._context import (
        SelectedCandidate as SelectedCandidate,
    )
    from telic.protocol._context import (
        SelectedSource as SelectedSource,
    )
    from telic.protocol._context import (
        TrustKind as TrustKind,
    )
    from telic.protocol._context import (
        WireBudget as WireBudget,
    )
    from telic.protocol._context import (
        WireFingerprint as WireFingerprint,
    )
    from telic.protocol._context import (
        normalize_manifest as normalize_manifest,
    )
    from telic.protocol._contract import (
        NON_MUTATING_MODES as NON_MUTATING_MODES,
    )
    from telic.protocol._contract import (
        VERIFICATION_CAPABILITIES as VERIFICATION_CAPABILITIES,
    )
    from telic.protocol._contract import (
        VERIFYING_MODES as VERIFYING_MODES,
    )
    from telic.protocol._contract import (
        Assumption as Assumption,
    )
    from telic.protocol._contract import (
        TaskContract as TaskContract,
    )
    from telic.protocol._contract import (
        VerificationCapability as VerificationCapability,
    )
    from telic.protocol._contract import (
        VerificationRequirement as VerificationRequirement,
    )
    from telic.protocol._evidence import (
        ENCODINGS as ENCODINGS,
    )
    from telic.protocol._evidence import (
        EVIDENCE_KINDS as EVIDENCE_KINDS,
    )
    from telic.protocol._evidence import (
        MAX_EVIDENCE_CONTENT_BYTES as MAX_EVIDENCE_CONTENT_BYTES,
    )
    from telic.protocol._evidence import (
        Encoding as Encoding,
    )
    from telic.protocol._evidence import (
        Evidence as Evidence,
    )
    from telic.protocol._evidence import (
        EvidenceKind as EvidenceKind,
    )
    from telic.protocol._evidence import (
        decode_evidence_content as decode_evidence_content,
    )
    from telic.protocol._frame import (
        DIVERGENT_CLASSIFICATIONS as DIVERGENT_CLASSIFICATIONS,
    )
    from telic.protocol._frame import (
        FACT_PROVENANCES as FACT_PROVENANCES,
    )
    from telic.protocol._frame import (
        UNKNOWN_CLASSIFICATIONS as UNKNOWN_CLASSIFICATIONS,
    )
    from telic.protocol._frame import (
        ClarificationNeeded as ClarificationNeeded,
    )
    from telic.protocol._frame import (
        ClarificationNotNeeded as ClarificationNotNeeded,
    )
    from telic.protocol._frame import (
        FactProvenance as FactProvenance,
    )
    from telic.protocol._frame import (
        FrameClarification as FrameClarification,
    )
    from telic.protocol._frame import (
        GroundedFact as GroundedFact,
    )
    from telic.protocol._frame import (
        GroundedInference as GroundedInference,
    )
    from telic.protocol._frame import (
        ProblemFrame as ProblemFrame,
    )
    from telic.protocol._frame import (
        ScenarioSpec as ScenarioSpec,
    )
    from telic.protocol._frame import (
        SourceMapEntry as SourceMapEntry,
    )
    from telic.protocol._frame import (
        Unknown as Unknown,
    )
    from telic.protocol._frame import (
        UnknownClassification as UnknownClassification,
    )
    from telic.protocol._next_action import (
        ACTION_PHASES as ACTION_PHASES,
    )
    from telic.protocol._next_action import (
        ACTION_ROLES as ACTION_ROLES,
    )
    from telic.protocol._next_action import (
        INSTRUCTION_REF_PATTERN as INSTRUCTION_REF_PATTERN,
    )
    from telic.protocol._next_action import (
        STOP_CONDITIONS as STOP_CONDITIONS,
    )
    from telic.protocol._next_action import (
        TERMINAL_PHASES as TERMINAL_PHASES,
    )
    from telic.protocol._next_action import (
        TERMINAL_STATUSES as TERMINAL_STATUSES,
    )
    from telic.protocol._next_action import (
        ActionPhase as ActionPhase,
    )
    from telic.protocol._next_action import (
        ActionRole as ActionRole,
    )
    from telic.protocol._next_action import (
        ClarificationAction as ClarificationAction,
    )
    from telic.protocol._next_action import (
        NextAction as NextAction,
    )
    from telic.protocol._next_action import (
        PhaseAction as PhaseAction,
    )
    from telic.protocol._next_action import (
        RemainingBudgets as RemainingBudgets,
    )
    from telic.protocol._next_action import (
        TerminalAction as TerminalAction,
    )
    from telic.protocol._next_action import (
        TerminalPhase as TerminalPhase,
    )
    from telic.protocol._next_action import (
        TerminalStatus as TerminalStatus,
    )
    from telic.protocol._next_action import (
        instruction_ref as instruction_ref,
    )
    from telic.protocol._next_action import (
        next_action_from_wire as next_action_from_wire,
    )
    from telic.protocol._plan import (
        MAX_NODE_TOOL_CALLS as MAX_NODE_TOOL_CALLS,
    )
    from telic.protocol._plan import (
        MAX_PLAN_NODES as MAX_PLAN_NODES,
    )
    from telic.protocol._plan import (
        MAX_PLAN_TOOL_CALLS as MAX_PLAN_TOOL_CALLS,
    )
    from telic.protocol._plan import (
        GlobalBudgets as GlobalBudgets,
    )
    from telic.protocol._plan import (
        NodeBudgets as NodeBudgets,
    )
    from telic.protocol._plan import (
        PlanValidation as PlanValidation,
    )
    from telic.protocol._plan import (
        WorkNode as WorkNode,
    )
    from telic.protocol._plan import (
        WorkPlan as WorkPlan,
    )
    from telic.protocol._quality import (
        CorrectionWorkOrder as CorrectionWorkOrder,
    )
    from telic.protocol._quality import (
        DiagnosisGate as DiagnosisGate,
    )
    from telic.protocol._quality import (
        DiagnosisStatus as DiagnosisStatus,
    )
    from telic.protocol._quality import (
        QualityDecision as QualityDecision,
    )
    from telic.protocol._quality import (
        QualityReview as QualityReview,
    )
    from telic.protocol._quality import (
        RemediationWorkOrder as RemediationWorkOrder,
    )
    from telic.protocol._quality import (
        ReviewCheck as ReviewCheck,
    )
    from telic.protocol._quality import (
        VerificationResult as VerificationResult,
    )
    from telic.protocol._quality import (
        VerificationStatus as VerificationStatus,
    )
    from telic.protocol._registry import (
        ARTIFACT_MODELS as ARTIFACT_MODELS,
    )
    from telic.protocol._registry import (
        Artifact as Artifact,
    )
    from telic.protocol._registry import (
        json_schema as json_schema,
    )
    from telic.protocol._registry import (
        parse_artifact as parse_artifact,
    )
    from telic.protocol._report import (
        NextUserAction as NextUserAction,
    )
    from telic.protocol._report import (
        UserReport as UserReport,
    )
    from telic.protocol._result import (
        ACCEPTANCE_STATUSES as ACCEPTANCE_STATUSES,
    )
    from telic.protocol._result import (
        AcceptanceCoverage as AcceptanceCoverage,
    )
    from telic.protocol._result import (
        AcceptanceStatus as AcceptanceStatus,
    )
    from telic.protocol._result import (
        ActionStatus as ActionStatus,
    )
    from telic.protocol._result import (
        ChangeType as ChangeType,
    )
    from telic.protocol._result import (
        FileChange as FileChange,
    )
    from telic.protocol._result import (
        TestResult as TestResult,
    )
    from telic.protocol._result import (
        TestStatus as TestStatus,
    )
    from telic.protocol._result import (
        WorkAction as WorkAction,
    )
    from telic.protocol._result import (
        WorkResult as WorkResult,
    )
    from telic.protocol._result import (
        WorkResultStatus as WorkResultStatus,
    )
    from telic.protocol._review import (
        PASS_SCORE as PASS_SCORE,
    )
    from telic.protocol._review import (
        ContractCoverage as ContractCoverage,
    )
    from telic.protocol._review import (
        CoverageStatus as CoverageStatus,
    )
    from telic.protocol._review import (
        DimensionScores as DimensionScores,
    )
    from telic.protocol._review import (
        HardGate as HardGate,
    )
    from telic.protocol._review import (
        PromptReview as PromptReview,
    )
    from telic.protocol._review import (
        PromptReviewDecision as PromptReviewDecision,
    )
    from telic.protocol._review import (
        js_round2 as js_round2,
    )
    from telic.protocol._review import (
        weighted_score as weighted_score,
    )
    from telic.protocol._run import (
        Authorization as Authorization,
    )
    from telic.protocol._run import (
        HostDescriptor as HostDescriptor,
    )
    from telic.protocol._run import (
        RunBudgets as RunBudgets,
    )
    from telic.protocol._run import (
        RunEnvelope as RunEnvelope,
    )
    from telic.protocol._run import (
        UserMessage as UserMessage,
    )
    from telic.protocol._run import (
        WorkingContext as WorkingContext,
    )
    from telic.protocol._trace import (
        EVENT_TYPES as EVENT_TYPES,
    )
    from telic.protocol._trace import (
        MAX_SEQUENCE as MAX_SEQUENCE,
    )
    from telic.protocol._trace import (
        REDACTION_CATEGORIES as REDACTION_CATEGORIES,
    )
    from telic.protocol._trace import (
        BudgetSnapshot as BudgetSnapshot,
    )
    from telic.protocol._trace import (
        EventType as EventType,
    )
    from telic.protocol._trace import (
        PermissionDecision as PermissionDecision,
    )
    from telic.protocol._trace import (
        RedactionCategory as RedactionCategory,
    )
    from telic.protocol._trace import (
        ToolTrace as ToolTrace,
    )
    from telic.protocol._trace import (
        TraceEvent as TraceEvent,
    )
    from telic.protocol._trace import (
        TraceRedaction as TraceRedaction,
    )
    from telic.protocol._types import (
        ARTIFACT_TYPES as ARTIFACT_TYPES,
    )
    from telic.protocol._types import (
        ARTIFACT_URI_PATTERN as ARTIFACT_URI_PATTERN,
    )
    from telic.protocol._types import (
        CAPABILITIES as CAPABILITIES,
    )
    from telic.protocol._types import (
        CONTROLLER_ARTIFACT_TYPES as CONTROLLER_ARTIFACT_TYPES,
    )
    from telic.protocol._types import (
        CORRECTABLE_FIELDS as CORRECTABLE_FIELDS,
    )
    from telic.protocol._types import (
        HOST_ARTIFACT_TYPES as HOST_ARTIFACT_TYPES,
    )
    from telic.protocol._types import (
        IDENTIFIER_PATTERN as IDENTIFIER_PATTERN,
    )
    from telic.protocol._types import (
        INTERNAL_ARTIFACT_TYPES as INTERNAL_ARTIFACT_TYPES,
    )
    from telic.protocol._types import (
        INTERNAL_PHASES as INTERNAL_PHASES,
    )
    from telic.protocol._types import (
        INTERNAL_RUN_STATUSES as INTERNAL_RUN_STATUSES,
    )
    from telic.protocol._types import (
        LOGICAL_ROLES as LOGICAL_ROLES,
    )
    from telic.protocol._types import (
        MAX_ARTIFACT_BYTES as MAX_ARTIFACT_BYTES,
    )
    from telic.protocol._types import (
        MAX_BOUNDED_TEXT as MAX_BOUNDED_TEXT,
    )
    from telic.protocol._types import (
        MAX_IDENTIFIER as MAX_IDENTIFIER,
    )
    from telic.protocol._types import (
        MAX_ITEMS as MAX_ITEMS,
    )
    from telic.protocol._types import (
        MAX_REFERENCE_URI as MAX_REFERENCE_URI,
    )
    from telic.protocol._types import (
        MAX_RELATIVE_PATH as MAX_RELATIVE_PATH,
    )
    from telic.protocol._types import (
        MAX_SUMMARY as MAX_SUMMARY,
    )
    from telic.protocol._types import (
        MODES as MODES,
    )
    from telic.protocol._types import (
        PHASES as PHASES,
    )
    from telic.protocol._types import (
        REFERENCE_URI_PATTERN as REFERENCE_URI_PATTERN,
    )
    from telic.protocol._types import (
        REPOSITORY_URI_PATTERN as REPOSITORY_URI_PATTERN,
    )
    from telic.protocol._types import (
        RUN_STATUSES as RUN_STATUSES,
    )
    from telic.protocol._types import (
        SHA256_PATTERN as SHA256_PATTERN,
    )
    from telic.protocol._types import (
        TRACE_URI_PATTERN as TRACE_URI_PATTERN,
    )
    from telic.protocol._types import (
        AcceptanceCriterion as AcceptanceCriterion,
    )
    from telic.protocol._types import (
        ArtifactType as ArtifactType,
    )
    from telic.protocol._types import (
        ArtifactUri as ArtifactUri,
    )
    from telic.protocol._types import (
        BoundedText as BoundedText,
    )
    from telic.protocol._types import (
        BrowserPermissions as BrowserPermissions,
    )
    from telic.protocol._types import (
        Capability as Capability,
    )
    from telic.protocol._types import (
        ClaimStatus as ClaimStatus,
    )
    from telic.protocol._types import (
        Confidence as Confidence,
    )
    from telic.protocol._types import (
        ControllerArtifactType as ControllerArtifactType,
    )
    from telic.protocol._types import (
        CorrectableField as CorrectableField,
    )
    from telic.protocol._types import (
        DomainName as DomainName,
    )
    from telic.protocol._types import (
        EvidenceClaim as EvidenceClaim,
    )
    from telic.protocol._types import (
        Finding as Finding,
    )
    from telic.protocol._types import (
        Glob as Glob,
    )
    from telic.protocol._types import (
        HostArtifactType as HostArtifactType,
    )
    from telic.protocol._types import (
        Identifier as Identifier,
    )
    from telic.protocol._types import (
        InternalArtifactType as InternalArtifactType,
    )
    from telic.protocol._types import (
        InternalPhase as InternalPhase,
    )
    from telic.protocol._types import (
        InternalRunStatus as InternalRunStatus,
    )
    from telic.protocol._types import (
        Items as Items,
    )
    from telic.protocol._types import (
        Label as Label,
    )
    from telic.protocol._types import (
        LogicalRole as LogicalRole,
    )
    from telic.protocol._types import (
        Mode as Mode,
    )
    from telic.protocol._types import (
        NativeSubagents as NativeSubagents,
    )
    from telic.protocol._types import (
        NetworkPermissions as NetworkPermissions,
    )
    from telic.protocol._types import (
        PermissionSet as PermissionSet,
    )
    from telic.protocol._types import (
        Phase as Phase,
    )
    from telic.protocol._types import (
        Redaction as Redaction,
    )
    from telic.protocol._types import (
        ReferenceUri as ReferenceUri,
    )
    from telic.protocol._types import (
        RelativePath as RelativePath,
    )
    from telic.protocol._types import (
        RepositoryPermissions as RepositoryPermissions,
    )
    from telic.protocol._types import (
        RepositoryUri as RepositoryUri,
    )
    from telic.protocol._types import (
        RunStatus as RunStatus,
    )
    from telic.protocol._types import (
        RuntimePermissions as RuntimePermissions,
    )
    from telic.protocol._types import (
        RuntimeTarget as RuntimeTarget,
    )
    from telic.protocol._types import (
        Scope as Scope,
    )
    from telic.protocol._types import (
        Score as Score,
    )
    from telic.protocol._types import (
        Severity as Severity,
    )
    from telic.protocol._types import (
        Sha256 as Sha256,
    )
    from telic.protocol._types import (
        ShellCommand as ShellCommand,
    )
    from telic.protocol._types import (
        ShellPermissions as ShellPermissions,
    )
    from telic.protocol._types import (
        Stage as Stage,
    )
    from telic.protocol._types import (
        SubagentPermissions as SubagentPermissions,
    )
    from telic.protocol._types import (
        Summary as Summary,
    )
    from telic.protocol._types import (
        TaskContractField as TaskContractField,
    )
    from telic.protocol._types import (
        Timestamp as Timestamp,
    )
    from telic.protocol._types import (
        TraceUri as TraceUri,
    )
    from telic.protocol._types import (
        unique as unique,
    )

__all__ = [
    "ACCEPTANCE_STATUSES",
    "ACTION_PHASES",
    "ACTION_ROLES",
    "ARTIFACT_MODELS",
    "ARTIFACT_TYPES",
    "ARTIFACT_URI_PATTERN",
    "AUTHORITY_EFFECTS",
    "CAPABILITIES",
    "CLARIFICATION_REASONS",
    "CONTROLLER_ARTIFACT_TYPES",
    "CORRECTABLE_FIELDS",
    "DIVERGENT_CLASSIFICATIONS",
    "ENCODINGS",
    "EVENT_TYPES",
    "EVIDENCE_KINDS",
    "EXCLUSION_REASONS",
    "FACT_PROVENANCES",
    "HOST_ARTIFACT_TYPES",
    "IDENTIFIER_PATTERN",
    "INSTRUCTION_REF_PATTERN",
    "INTERNAL_ARTIFACT_TYPES",
    "INTERNAL_PHASES",
    "INTERNAL_RUN_STATUSES",
    "INVENTORY_SOURCES",
    "LOGICAL_ROLES",
    "MAX_ARTIFACT_BYTES",
    "MAX_BOUNDED_TEXT",
    "MAX_CANDIDATES",
    "MAX_CHOICES",
    "MAX_EVIDENCE_CONTENT_BYTES",
    "MAX_IDENTIFIER",
    "MAX_ITEMS",
    "MAX_NODE_TOOL_CALLS",
    "MAX_PLAN_NODES",
    "MAX_PLAN_TOOL_CALLS",
    "MAX_REFERENCE_URI",
    "MAX_RELATIVE_PATH",
    "MAX_SEQUENCE",
    "MAX_SUMMARY",
    "MIN_CHOICES",
    "MODES",
    "NON_MUTATING_MODES",
    "PASS_SCORE",
    "PHASES",
    "REDACTION_CATEGORIES",
    "REFERENCE_URI_PATTERN",
    "REPOSITORY_URI_PATTERN",
    "RUN_EFFECTS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "SHA256_PATTERN",
    "STOP_CONDITIONS",
    "TERMINAL_PHASES",
    "TERMINAL_STATUSES",
    "TRACE_URI_PATTERN",
    "TRUST_KINDS",
    "UNKNOWN_CLASSIFICATIONS",
    "VERIFICATION_CAPABILITIES",
    "VERIFYING_MODES",
    "AcceptanceCoverage",
    "AcceptanceCriterion",
    "AcceptanceStatus",
    "ActionPhase",
    "ActionRole",
    "ActionStatus",
    "Artifact",
    "ArtifactBody",
    "ArtifactType",
    "ArtifactUri",
    "Assumption",
    "AuditDecision",
    "AuthorityEffect",
    "Authorization",
    "BoundedText",
    "BrowserPermissions",
    "BudgetSnapshot",
    "CanonicalJsonError",
    "Capability",
    "ChangeType",
    "ClaimBasis",
    "ClaimEvidenceEntry",
    "ClaimStatus",
    "ClaimSupport",
    "ClarificationAction",
    "ClarificationChoice",
    "ClarificationNeeded",
    "ClarificationNotNeeded",
    "ClarificationReason",
    "ClarificationRequest",
    "Confidence",
    "ContextBudget",
    "ContextCandidate",
    "ContextDocument",
    "ContextManifest",
    "ContextManifestWire",
    "ContractCoverage",
    "ControllerArtifactType",
    "CorrectableField",
    "CorrectionWorkOrder",
    "CoverageStatus",
    "DiagnosisGate",
    "DiagnosisStatus",
    "DimensionScores",
    "DomainName",
    "Encoding",
    "EventType",
    "Evidence",
    "EvidenceClaim",
    "EvidenceKind",
    "ExcludedCandidate",
    "ExcludedCandidateSummary",
    "ExclusionCount",
    "ExclusionReason",
    "FactProvenance",
    "FileChange",
    "Finding",
    "FrameClarification",
    "Glob",
    "GlobalBudgets",
    "GroundedFact",
    "GroundedInference",
    "HardGate",
    "HostArtifactType",
    "HostDescriptor",
    "Identifier",
    "InternalArtifactType",
    "InternalPhase",
    "InternalRunStatus",
    "InventorySource",
    "Items",
    "Label",
    "LogicalRole",
    "Mode",
    "ModeCompliance",
    "NativeSubagents",
    "NetworkPermissions",
    "NextAction",
    "NextUserAction",
    "NodeBudgets",
    "PermissionDecision",
    "PermissionSet",
    "Phase",
    "PhaseAction",
    "PlanValidation",
    "ProblemFrame",
    "PromptReview",
    "PromptReviewDecision",
    "QualityDecision",
    "QualityReview",
    "Redaction",
    "RedactionCategory",
    "ReferenceUri",
    "RelativePath",
    "ReleaseAudit",
    "RemainingBudgets",
    "RemediationDefect",
    "RemediationWorkOrder",
    "RepositoryFingerprint",
    "RepositoryPermissions",
    "RepositoryUri",
    "ReviewCheck",
    "RunBudgets",
    "RunEffect",
    "RunEnvelope",
    "RunStatus",
    "RuntimePermissions",
    "RuntimeTarget",
    "ScenarioSpec",
    "Scope",
    "Score",
    "SelectedCandidate",
    "SelectedSource",
    "Severity",
    "Sha256",
    "ShellCommand",
    "ShellPermissions",
    "SourceMapEntry",
    "Stage",
    "SubagentPermissions",
    "Summary",
    "TaskContract",
    "TaskContractField",
    "TerminalAction",
    "TerminalPhase",
    "TerminalStatus",
    "TestResult",
    "TestStatus",
    "Timestamp",
    "ToolTrace",
    "TraceEvent",
    "TraceRedaction",
    "TraceUri",
    "TrustKind",
    "Unknown",
    "UnknownClassification",
    "UserMessage",
    "UserReport",
    "VerificationCapability",
    "VerificationRequirement",
    "VerificationResult",
    "VerificationStatus",
    "WireBudget",
    "WireFingerprint",
    "WireModel",
    "WorkAction",
    "WorkNode",
    "WorkPlan",
    "WorkResult",
    "WorkResultStatus",
    "WorkingContext",
    "canonical_json",
    "canonical_sha256",
    "decode_evidence_content",
    "instruction_ref",
    "js_round2",
    "json_schema",
    "next_action_from_wire",
    "normalize_manifest",
    "parse_artifact",
    "parse_json_strict",
    "sha256_hex_digest",
    "unique",
    "weighted_score",
]

_EXPORTS: typing.Final = {
    "telic.protocol._audit": (
        "AuditDecision",
        "ClaimBasis",
        "ClaimEvidenceEntry",
        "ClaimSupport",
        "ModeCompliance",
        "ReleaseAudit",
        "RemediationDefect",
    ),
    "telic.protocol._base": (
        "SCHEMA_VERSION",
        "ArtifactBody",
        "WireModel",
    ),
    "telic.protocol._canonical": (
        "CanonicalJsonError",
        "canonical_json",
        "canonical_sha256",
        "parse_json_strict",
        "sha256_hex_digest",
    ),
    "telic.protocol._clarification": (
        "AUTHORITY_EFFECTS",
        "CLARIFICATION_REASONS",
        "MAX_CHOICES",
        "MIN_CHOICES",
        "RUN_EFFECTS",
        "AuthorityEffect",
        "ClarificationChoice",
        "ClarificationReason",
        "ClarificationRequest",
        "RunEffect",
    ),
    "telic.protocol._context": (
        "EXCLUSION_REASONS",
        "INVENTORY_SOURCES",
        "MAX_CANDIDATES",
        "TRUST_KINDS",
        "ContextBudget",
        "ContextCandidate",
        "ContextDocument",
        "ContextManifest",
        "ContextManifestWire",
        "ExcludedCandidate",
        "ExcludedCandidateSummary",
        "ExclusionCount",
        "ExclusionReason",
        "InventorySource",
        "RepositoryFingerprint",
        "SelectedCandidate",
        "SelectedSource",
        "TrustKind",
        "WireBudget",
        "WireFingerprint",
        "normalize_manifest",
    ),
    "telic.protocol._contract": (
        "NON_MUTATING_MODES",
        "VERIFICATION_CAPABILITIES",
        "VERIFYING_MODES",
        "Assumption",
        "TaskContract",
        "VerificationCapability",
        "VerificationRequirement",
    ),
    "telic.protocol._evidence": (
        "ENCODINGS",
        "EVIDENCE_KINDS",
        "MAX_EVIDENCE_CONTENT_BYTES",
        "Encoding",
        "Evidence",
        "EvidenceKind",
        "decode_evidence_content",
    ),
    "telic.protocol._frame": (
        "DIVERGENT_CLASSIFICATIONS",
        "FACT_PROVENANCES",
        "UNKNOWN_CLASSIFICATIONS",
        "ClarificationNeeded",
        "ClarificationNotNeeded",
        "FactProvenance",
        "FrameClarification",
        "GroundedFact",
        "GroundedInference",
        "ProblemFrame",
        "ScenarioSpec",
        "SourceMapEntry",
        "Unknown",
        "UnknownClassification",
    ),
    "telic.protocol._next_action": (
        "ACTION_PHASES",
        "ACTION_ROLES",
        "INSTRUCTION_REF_PATTERN",
        "STOP_CONDITIONS",
        "TERMINAL_PHASES",
        "TERMINAL_STATUSES",
        "ActionPhase",
        "ActionRole",
        "ClarificationAction",
        "NextAction",
        "PhaseAction",
        "RemainingBudgets",
        "TerminalAction",
        "TerminalPhase",
        "TerminalStatus",
        "instruction_ref",
        "next_action_from_wire",
    ),
    "telic.protocol._plan": (
        "MAX_NODE_TOOL_CALLS",
        "MAX_PLAN_NODES",
        "MAX_PLAN_TOOL_CALLS",
        "GlobalBudgets",
        "NodeBudgets",
        "PlanValidation",
        "WorkNode",
        "WorkPlan",
    ),
    "telic.protocol._quality": (
        "CorrectionWorkOrder",
        "DiagnosisGate",
        "DiagnosisStatus",
        "QualityDecision",
        "QualityReview",
        "RemediationWorkOrder",
        "ReviewCheck",
        "VerificationResult",
        "VerificationStatus",
    ),
    "telic.protocol._registry": (
        "ARTIFACT_MODELS",
        "Artifact",
        "json_schema",
        "parse_artifact",
    ),
    "telic.protocol._report": (
        "NextUserAction",
        "UserReport",
    ),
    "telic.protocol._result": (
        "ACCEPTANCE_STATUSES",
        "AcceptanceCoverage",
        "AcceptanceStatus",
        "ActionStatus",
        "ChangeType",
        "FileChange",
        "TestResult",
        "TestStatus",
        "WorkAction",
        "WorkResult",
        "WorkResultStatus",
    ),
    "telic.protocol._review": (
        "PASS_SCORE",
        "ContractCoverage",
        "CoverageStatus",
        "DimensionScores",
        "HardGate",
        "PromptReview",
        "PromptReviewDecision",
        "js_round2",
        "weighted_score",
    ),
    "telic.protocol._run": (
        "Authorization",
        "HostDescriptor",
        "RunBudgets",
        "RunEnvelope",
        "UserMessage",
        "WorkingContext",
    ),
    "telic.protocol._trace": (
        "EVENT_TYPES",
        "MAX_SEQUENCE",
        "REDACTION_CATEGORIES",
        "BudgetSnapshot",
        "EventType",
        "PermissionDecision",
        "RedactionCategory",
        "ToolTrace",
        "TraceEvent",
        "TraceRedaction",
    ),
    "telic.protocol._types": (
        "ARTIFACT_TYPES",
        "ARTIFACT_URI_PATTERN",
        "CAPABILITIES",
        "CONTROLLER_ARTIFACT_TYPES",
        "CORRECTABLE_FIELDS",
        "HOST_ARTIFACT_TYPES",
        "IDENTIFIER_PATTERN",
        "INTERNAL_ARTIFACT_TYPES",
        "INTERNAL_PHASES",
        "INTERNAL_RUN_STATUSES",
        "LOGICAL_ROLES",
        "MAX_ARTIFACT_BYTES",
        "MAX_BOUNDED_TEXT",
        "MAX_IDENTIFIER",
        "MAX_ITEMS",
        "MAX_REFERENCE_URI",
        "MAX_RELATIVE_PATH",
        "MAX_SUMMARY",
        "MODES",
        "PHASES",
        "REFERENCE_URI_PATTERN",
        "REPOSITORY_URI_PATTERN",
        "RUN_STATUSES",
        "SHA256_PATTERN",
        "TRACE_URI_PATTERN",
        "AcceptanceCriterion",
        "ArtifactType",
        "ArtifactUri",
        "BoundedText",
        "BrowserPermissions",
        "Capability",
        "ClaimStatus",
        "Confidence",
        "ControllerArtifactType",
        "CorrectableField",
        "DomainName",
        "EvidenceClaim",
        "Finding",
        "Glob",
        "HostArtifactType",
        "Identifier",
        "InternalArtifactType",
        "InternalPhase",
        "InternalRunStatus",
        "Items",
        "Label",
        "LogicalRole",
        "Mode",
        "NativeSubagents",
        "NetworkPermissions",
        "PermissionSet",
        "Phase",
        "Redaction",
        "ReferenceUri",
        "RelativePath",
        "RepositoryPermissions",
        "RepositoryUri",
        "RunStatus",
        "RuntimePermissions",
        "RuntimeTarget",
        "Scope",
        "Score",
        "Severity",
        "Sha256",
        "ShellCommand",
        "ShellPermissions",
        "Stage",
        "SubagentPermissions",
        "Summary",
        "TaskContractField",
        "Timestamp",
        "TraceUri",
        "unique",
    ),
}
"""Where each exported name lives: loaded on first use, so importing one module of
this package does not import them all."""

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(__name__, _EXPORTS, globals())
