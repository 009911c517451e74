"""The result models of every tool: each tool's ``outputSchema`` is its model's JSON Schema.

They describe the success envelope ``{ok: true, …}`` as it travels (camelCase, exactly the keys
``docs/protocol.md`` §2 lists). Artifact metadata is typed field by field, and a run by the
ledger's ``RunWire`` and ``RunSummaryWire``, the types ``RunRecord``'s serialisers return: a
Telic 1.0 host reads them by name. The large protocol objects (NextAction, the context manifest,
trace events, packets) are typed as objects here and described in full by their own schemas
(``telic://schemas/{artifact_type}``), so ``tools/list`` stays small. Every model allows extra
keys: ours follow the original's, and an object may gain keys without breaking a host.
The server never builds these models on the hot path; the official client validates each
result against the listed schema, and so do the tests.
"""

# ruff: noqa: N815 - the fields are the wire's camelCase names

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from telic.ledger import RunSummaryWire, RunWire

NextActionOut = dict[str, Any]


class _Object(BaseModel):
    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)


class _Ok(_Object):
    ok: Literal[True]


class ArtifactOut(_Object):
    """An artifact's metadata: the Telic 1.0 keys, then this ledger's chain link."""

    id: str
    runId: str
    type: str
    schemaVersion: str
    producer: str
    sha256: str
    sourceRefs: list[str]
    redaction: str
    createdAt: str
    sizeBytes: int
    """Canonical JSON bytes of the body."""
    position: int
    """1-based order among the run's artifacts."""
    chainIndex: int
    """Position in the run's hash chain."""
    previousHash: str
    recordHash: str


class StoredArtifactOut(ArtifactOut):
    """An artifact's metadata with its verified body."""

    body: dict[str, Any]


class StepResultOut(_Ok):
    """A state change: the run after it and the next action."""

    run: RunWire
    nextAction: NextActionOut
    """The NextAction (schema: telic://schemas/NextAction)."""
    artifact: ArtifactOut | None = None
    """The stored Evidence or ScenarioSpec (also on an identical replay); absent otherwise."""


class GroundResultOut(StepResultOut):
    """A grounding: the run, the next action and the context manifest."""

    manifest: dict[str, Any]
    """The ContextManifest (schema: telic://schemas/ContextManifest)."""


class NextActionResultOut(_Ok):
    """The run's next action."""

    nextAction: NextActionOut
    """The NextAction (schema: telic://schemas/NextAction)."""


class ListRunsResultOut(_Ok):
    """Runs, newest first."""

    runs: list[RunSummaryWire]


class GetRunResultOut(_Ok):
    """A run with its artifacts' metadata and its next action."""

    run: RunWire
    artifacts: list[ArtifactOut]
    nextAction: NextActionOut
    """The NextAction (schema: telic://schemas/NextAction)."""


class GetArtifactResultOut(_Ok):
    """One artifact, body included."""

    artifact: StoredArtifactOut


class GetTraceResultOut(_Ok):
    """A page of the trace."""

    events: list[dict[str, Any]]
    """TraceEvents in sequence order (schema: telic://schemas/TraceEvent)."""
    hasMore: bool


class CastResultOut(_Ok):
    """An opened cast."""

    cast: dict[str, Any]
    """The grant: cast id, handoff for the child, permissions and budget."""


class CastProgressResultOut(_Ok):
    """A cast after a progress report."""

    castId: str
    cast: dict[str, Any] | None = None
    """The cast's state and counters, while it is known."""


class ReturnPacketResultOut(_Ok):
    """A sealed packet."""

    packet: dict[str, Any]
    """The sealed evidence packet, with its pk_ token."""


class DigestResultOut(_Ok):
    """The run's packet digest."""

    runId: str
    digest: str
    """Packet contract lines: [outcome/verdict] [pk_…] castType: claim (needCode; N tokens)."""
    marks: list[dict[str, Any]]
    """Per digest line: packetId, consumption, consumerRef, citeKind, observed spend."""
    omitted: int
    """Packets the 6000-character bound left out."""


class BrokerDecisionOut(_Object):
    """A pre-action permission decision: the original's four keys, then ours."""

    allowed: bool
    reasonCode: str
    """allowed or policy_denied."""
    summary: str
    permissionDecision: dict[str, Any]
    """decision, capability, scope, policyRefs, rationaleSummary (as the trace records it)."""
    capability: str
    scope: str | None
    decidingLayer: str | None
    """The first layer that refused (mode, authorization, phase, protected), or null."""
    reason: str
    code: str
    """Why, as a stable code (allowed, not_granted, out_of_scope, path_escape, ...)."""


class CheckResultOut(_Ok):
    """A pre-action permission decision."""

    decision: BrokerDecisionOut


class ReplayStepOut(_Object):
    """One stored artifact of the run and where it entered the trace."""

    sequence: int
    phase: str
    """The internal phase of the event that produced it."""
    artifactRef: str
    artifactType: str
    digestStatus: str
    """ok, mismatch (no longer matches its digest) or missing (its body or row is gone)."""
    escalationReason: str | None = None
    """Present only when a topology escalation produced it."""


class ReplayChainOut(_Object):
    """The run's hash-chain walk (as telic_verify_run reports it)."""

    intact: bool
    recordsChecked: int
    firstBroken: dict[str, Any] | None
    traceReadable: bool
    """False when a trace record fails its hash: the steps then carry no trace index."""


class ReplayOut(_Object):
    """A run replayed step by step."""

    runId: str
    topology: str
    """micro, standard or forensic."""
    steps: list[ReplayStepOut]
    traceHighlights: list[str]
    """Escalation reasons, then the summaries of denied host checks."""
    degraded: bool | None = None
    """Present (true) only for a micro run, whose replay is a stub."""
    reason: str | None = None
    """micro_topology, with degraded."""
    chain: ReplayChainOut | None = None


class ReplayResultOut(_Ok):
    """A run's replay."""

    report: ReplayOut


class VerifyResultOut(_Ok):
    """A walk of the run's hash chain."""

    runId: str
    intact: bool
    recordsChecked: int
    firstBroken: dict[str, Any] | None
    """The first record that does not check out, or null."""
