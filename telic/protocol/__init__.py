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
        ClaimBasis as ClaimBasis,
        ClaimEvidenceEntry as ClaimEvidenceEntry,
        ClaimSupport as ClaimSupport,
        ModeCompliance as ModeCompliance,
        ReceiptAudit as ReceiptAudit,
        ReleaseAudit as ReleaseAudit,
        RemediationDefect as RemediationDefect,
    )
    from telic.protocol._base import (
        UNDESCRIBED as UNDESCRIBED,
        ArtifactBody as ArtifactBody,
        WireModel as WireModel,
    )
    from telic.protocol._canonical import (
        SHA256_PREFIX as SHA256_PREFIX,
        CanonicalJsonError as CanonicalJsonError,
        DuplicateKeyError as DuplicateKeyError,
        canonical_json as canonical_json,
        canonical_sha256 as canonical_sha256,
        parse_json_strict as parse_json_strict,
        sha256_hex_digest as sha256_hex_digest,
        unique_keys as unique_keys,
    )
    from telic.protocol._clarification import (
        MAX_CHOICES as MAX_CHOICES,
        MIN_CHOICES as MIN_CHOICES,
        AuthorityEffect as AuthorityEffect,
        ClarificationChoice as ClarificationChoice,
        ClarificationReason as ClarificationReason,
        ClarificationRequest as ClarificationRequest,
        RunEffect as RunEffect,
    )
    from telic.protocol._context import (
        EXCLUSION_REASONS as EXCLUSION_REASONS,
        MAX_CANDIDATES as MAX_CANDIDATES,
        MAX_FILE_BYTES as MAX_FILE_BYTES,
        MAX_INVENTORY_FILES as MAX_INVENTORY_FILES,
        MAX_SELECTED_FILES as MAX_SELECTED_FILES,
        MAX_TOTAL_BYTES as MAX_TOTAL_BYTES,
        ContextBudget as ContextBudget,
        ContextCandidate as ContextCandidate,
        ContextDocument as ContextDocument,
        ContextManifest as ContextManifest,
        ContextManifestWire as ContextManifestWire,
        ExcludedCandidate as ExcludedCandidate,
        ExcludedCandidateSummary as ExcludedCandidateSummary,
        ExclusionReason as ExclusionReason,
        InventorySource as InventorySource,
        RepositoryFingerprint as RepositoryFingerprint,
        SelectedCandidate as SelectedCandidate,
        SelectedSource as SelectedSource,
        TrustKind as TrustKind,
        WireBudget as WireBudget,
        WireFingerprint as WireFingerprint,
        normalize_manifest as normalize_manifest,
    )
    from telic.protocol._contract import (
        NON_MUTATING_MODES as NON_MUTATING_MODES,
        VERIFICATION_CAPABILITIES as VERIFICATION_CAPABILITIES,
        VERIFYING_MODES as VERIFYING_MODES,
        Assumption as Assumption,
        TaskContract as TaskContract,
        VerificationCapability as VerificationCapability,
        VerificationRequirement as VerificationRequirement,
    )
    from telic.protocol._evidence import (
        MAX_EVIDENCE_CONTENT_BYTES as MAX_EVIDENCE_CONTENT_BYTES,
        Encoding as Encoding,
        Evidence as Evidence,
        EvidenceKind as EvidenceKind,
        decode_evidence_content as decode_evidence_content,
    )
    from telic.protocol._frame import (
        DIVERGENT_CLASSIFICATIONS as DIVERGENT_CLASSIFICATIONS,
        ClarificationNeeded as ClarificationNeeded,
        ClarificationNotNeeded as ClarificationNotNeeded,
        FactProvenance as FactProvenance,
        FrameClarification as FrameClarification,
        GroundedFact as GroundedFact,
        GroundedInference as GroundedInference,
        ProblemFrame as ProblemFrame,
        ScenarioSpec as ScenarioSpec,
        SourceMapEntry as SourceMapEntry,
        Unknown as Unknown,
        UnknownClassification as UnknownClassification,
    )
    from telic.protocol._next_action import (
        INSTRUCTION_REF_PATTERN as INSTRUCTION_REF_PATTERN,
        STOP_CONDITIONS as STOP_CONDITIONS,
        ClarificationAction as ClarificationAction,
        NextAction as NextAction,
        PhaseAction as PhaseAction,
        RemainingBudgets as RemainingBudgets,
        TerminalAction as TerminalAction,
        instruction_ref as instruction_ref,
    )
    from telic.protocol._plan import (
        MAX_PLAN_NODES as MAX_PLAN_NODES,
        GlobalBudgets as GlobalBudgets,
        NodeBudgets as NodeBudgets,
        PlanValidation as PlanValidation,
        WorkNode as WorkNode,
        WorkPlan as WorkPlan,
    )
    from telic.protocol._quality import (
        CorrectionWorkOrder as CorrectionWorkOrder,
        DiagnosisGate as DiagnosisGate,
        DiagnosisStatus as DiagnosisStatus,
        QualityDecision as QualityDecision,
        QualityReview as QualityReview,
        RemediationWorkOrder as RemediationWorkOrder,
        ReviewCheck as ReviewCheck,
        VerificationResult as VerificationResult,
        VerificationStatus as VerificationStatus,
    )
    from telic.protocol._registry import (
        ARTIFACT_MODELS as ARTIFACT_MODELS,
        json_schema as json_schema,
        parse_artifact as parse_artifact,
        shared_json_schema as shared_json_schema,
        wire_names as wire_names,
    )
    from telic.protocol._report import NextUserAction as NextUserAction, UserReport as UserReport
    from telic.protocol._result import (
        AcceptanceCoverage as AcceptanceCoverage,
        AcceptanceStatus as AcceptanceStatus,
        ActionStatus as ActionStatus,
        ChangeType as ChangeType,
        FileChange as FileChange,
        TestResult as TestResult,
        TestStatus as TestStatus,
        WorkAction as WorkAction,
        WorkResult as WorkResult,
        WorkResultStatus as WorkResultStatus,
    )
    from telic.protocol._review import (
        PASS_SCORE as PASS_SCORE,
        ContractCoverage as ContractCoverage,
        CoverageStatus as CoverageStatus,
        DimensionScores as DimensionScores,
        HardGate as HardGate,
        PromptReview as PromptReview,
        PromptReviewDecision as PromptReviewDecision,
        weighted_score as weighted_score,
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
    from telic.protocol._trace import (
        EVENT_TYPES as EVENT_TYPES,
        MAX_SEQUENCE as MAX_SEQUENCE,
        BudgetSnapshot as BudgetSnapshot,
        EventType as EventType,
        PermissionDecision as PermissionDecision,
        RedactionCategory as RedactionCategory,
        ToolTrace as ToolTrace,
        TraceEvent as TraceEvent,
        TraceRedaction as TraceRedaction,
    )
    from telic.protocol._types import (
        ACTION_ROLES as ACTION_ROLES,
        CONTROLLER_ARTIFACT_TYPES as CONTROLLER_ARTIFACT_TYPES,
        HOST_ARTIFACT_TYPES as HOST_ARTIFACT_TYPES,
        INTERNAL_ARTIFACT_TYPES as INTERNAL_ARTIFACT_TYPES,
        LOGICAL_ROLES as LOGICAL_ROLES,
        MAX_ARTIFACT_BYTES as MAX_ARTIFACT_BYTES,
        MAX_BOUNDED_TEXT as MAX_BOUNDED_TEXT,
        MAX_ITEMS as MAX_ITEMS,
        MAX_NODE_TOOL_CALLS as MAX_NODE_TOOL_CALLS,
        MAX_PLAN_TOOL_CALLS as MAX_PLAN_TOOL_CALLS,
        MAX_REFERENCE_URI as MAX_REFERENCE_URI,
        MAX_RELATIVE_PATH as MAX_RELATIVE_PATH,
        PHASES as PHASES,
        REFERENCE_URI_PATTERN as REFERENCE_URI_PATTERN,
        SHA256_PATTERN as SHA256_PATTERN,
        TOPOLOGIES as TOPOLOGIES,
        AcceptanceCriterion as AcceptanceCriterion,
        ActionPhase as ActionPhase,
        ActionRole as ActionRole,
        ArtifactType as ArtifactType,
        ArtifactUri as ArtifactUri,
        BoundedText as BoundedText,
        BrowserPermissions as BrowserPermissions,
        ClaimStatus as ClaimStatus,
        Confidence as Confidence,
        ControllerArtifactType as ControllerArtifactType,
        CorrectableField as CorrectableField,
        DomainName as DomainName,
        EvidenceClaim as EvidenceClaim,
        Finding as Finding,
        Glob as Glob,
        HostArtifactType as HostArtifactType,
        Identifier as Identifier,
        InternalArtifactType as InternalArtifactType,
        InternalPhase as InternalPhase,
        InternalRunStatus as InternalRunStatus,
        Items as Items,
        Label as Label,
        LogicalRole as LogicalRole,
        NativeSubagents as NativeSubagents,
        NetworkPermissions as NetworkPermissions,
        NonEmptyItems as NonEmptyItems,
        PermissionSet as PermissionSet,
        Phase as Phase,
        ReferenceUri as ReferenceUri,
        RelativePath as RelativePath,
        RepositoryPermissions as RepositoryPermissions,
        RepositoryUri as RepositoryUri,
        ReviewKind as ReviewKind,
        RunStatus as RunStatus,
        RuntimePermissions as RuntimePermissions,
        RuntimeTarget as RuntimeTarget,
        Scope as Scope,
        Score as Score,
        Severity as Severity,
        Sha256 as Sha256,
        ShellCommand as ShellCommand,
        ShellPermissions as ShellPermissions,
        Stage as Stage,
        SubagentPermissions as SubagentPermissions,
        Summary as Summary,
        TaskContractField as TaskContractField,
        TerminalPhase as TerminalPhase,
        TerminalStatus as TerminalStatus,
        Timestamp as Timestamp,
        Topology as Topology,
        TraceUri as TraceUri,
    )
    from telic.protocol._vocabulary import (
        CAPABILITIES as CAPABILITIES,
        IDENTIFIER_PATTERN as IDENTIFIER_PATTERN,
        MAX_IDENTIFIER as MAX_IDENTIFIER,
        MAX_SUMMARY as MAX_SUMMARY,
        MAX_TARGET as MAX_TARGET,
        MODES as MODES,
        Capability as Capability,
        Mode as Mode,
        is_identifier as is_identifier,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
