"""Conformance data: how each MUST of the seed protocol and each schema-held §3.4 item is met.

``docs/rules.md`` is generated from this module and the rule registry. Each ``SeedMust`` quotes
one MUST / MUST NOT sentence of the seed protocol document and says what enforces it: rule ids,
a mechanism of the controller, or — where Telic cannot see the behaviour, because it never runs
the model or the host's tools — an explicit host obligation with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["SCHEMA_HELD", "SEED_MUSTS", "SchemaHeld", "SeedMust"]

Kind = Literal["rules", "mechanism", "host", "partly host", "definition"]


@dataclass(frozen=True, slots=True)
class SeedMust:
    """One MUST sentence of the seed and what enforces it."""

    quote: str
    kind: Kind
    rules: tuple[str, ...] = ()
    how: str = ""


@dataclass(frozen=True, slots=True)
class SchemaHeld:
    """A §3.4 item enforced before the rules run (schema or machine), so it has no rule id."""

    item: str
    where: str


def _m(quote: str, kind: Kind, rules: str = "", how: str = "") -> SeedMust:
    return SeedMust(quote, kind, tuple(rules.split()), how)


SEED_MUSTS: Final[tuple[SeedMust, ...]] = (
    _m(
        "statements using MUST below may still describe a conformance target",
        "definition",
        how="States how to read the document; no requirement of its own.",
    ),
    _m(
        "The terms MUST, MUST NOT, SHOULD, SHOULD NOT, and MAY describe protocol requirements.",
        "definition",
        how="Defines the keywords; no requirement of its own.",
    ),
    _m(
        "The original user message MUST be stored unchanged and remain addressable.",
        "rules",
        "ANY-ID-FRESH PF-ORIGINAL-REQUEST TC-ORIGINAL-REQUEST RA-ORIGINAL-REQUEST RA-USER-FIDELITY",
        "start_run stores it as the run's first, content-addressed UserMessage; ids are "
        "insert-only and every read re-verifies the digest.",
    ),
    _m(
        "A generated scenario MUST NOT silently replace the user's request.",
        "rules",
        "SS-PROBLEM-FRAME-LATEST SS-ONE-PER-FRAME PF-ORIGINAL-REQUEST",
        "A ScenarioSpec is a supporting artifact kept out of Agent 2's input projection, so it "
        "can never become the contract's source.",
    ),
    _m(
        "Claims about a repository or runtime MUST carry provenance and evidence.",
        "rules",
        "PF-FACT-PROVENANCE REF-REPO-SELECTED REF-DIRECT-EVIDENCE REF-EVIDENCE-KIND",
        "The schema also requires evidence for observed/inferred claims.",
    ),
    _m(
        "The controller MUST deny actions outside the intersection of host policy, user "
        "authorization, repository policy, the task contract, and the current work order.",
        "partly host",
        "WR-ACTION-AUTHORIZED WR-ACTION-ALLOWED-TOOL WR-FILE-CHANGE-AUTHORIZED WR-NO-MUTATION "
        "TC-PERMISSIONS-AUTHORIZED WP-NODE-PERMISSIONS-CONTRACT WP-NODE-PERMISSIONS-CEILING "
        "WP-SCOPED-ORDER",
        "Every claimed action is decided against mode ∩ run authorization ∩ node (the node lies "
        "inside contract and work order). Telic cannot intercept host-native tools, so denying the "
        "real call is the host's obligation (it receives effectivePermissions).",
    ),
    _m(
        "State transitions, permission checks, schema validation, and retry counters MUST be "
        "deterministic controller behavior.",
        "mechanism",
        "RUN-TOKEN-VERSION RUN-TOKEN-ACTION",
        "step(state, submission) is pure and total; NextAction ids are action:<runId>:<version>; "
        "budgets are derived from stored artifacts (tests/telic/controller/test_determinism.py).",
    ),
    _m(
        "Agents MUST communicate through typed artifacts.",
        "mechanism",
        "RUN-PHASE-TYPE RUN-CONTROLLER-OWNED ANY-BODY",
        "Every submission is parsed by a strict schema (unknown fields rejected) and stored "
        "immutably.",
    ),
    _m(
        "A numeric score MUST NOT override a failed hard gate.",
        "mechanism",
        how="Schema: PromptReview and QualityReview pass/proceed_to_fix need no failed gate and no "
        "blocking finding whatever the score.",
    ),
    _m(
        "A completed result MUST be traceable to acceptance criteria and evidence.",
        "rules",
        "WR-COVERAGE WR-COMPLETED-COVERAGE WR-COMPLETED-CAPABILITIES "
        "QR-PASS-EXACT-COVERAGE-EVIDENCE RA-RELEASE-COVERAGE UR-CLAIM-MATCHES-AUDIT-MATRIX",
    ),
    _m(
        "Every phase projection MUST retain the transitive eligible references needed to interpret "
        "its mandatory inputs; it MUST fail rather than silently truncate that closure.",
        "mechanism",
        how="NextAction inputRefs closure raises LimitExceeded above 256 references "
        "(test_a_closure_of_257_references_fails_loudly_and_256_fit).",
    ),
    _m(
        "Hidden chain-of-thought MUST NOT be requested, stored, or exposed.",
        "partly host",
        how="Stored/exposed: strict schemas reject any unknown field (hiddenChainOfThought "
        "included) and the trace holds controller-written summaries only. Requested: NextAction "
        "stopConditions ask for summaries only, but what the host asks its own model is invisible "
        "to Telic.",
    ),
    _m(
        "MCP sampling or an external model key MUST NOT be required for the core workflow.",
        "mechanism",
        how="The controller never calls a model; tests/test_architecture.py keeps "
        "the dependency graph free of model clients.",
    ),
    _m(
        "Every run, artifact, trace event, acceptance criterion, work node, and review finding "
        "MUST have a stable identifier within its run.",
        "rules",
        "ANY-ID-FRESH TC-ASSUMPTIONS",
        "Schema Identifier fields with uniqueness checks (frame ids, criteria, verifications, "
        "nodes, claims); trace events carry UUIDs and sequences.",
    ),
    _m(
        "Derived summaries MUST refer to their source artifacts.",
        "rules",
        "REF-SOURCE-VALID REF-SOURCE-LIMIT REF-EXISTS REF-TYPED-TARGET CM-DERIVED-REFS",
        "Stored sourceRefs merge the caller's refs with every reference in the body.",
    ),
    _m(
        "Unclear requests MUST NOT be silently upgraded to a more permissive mode.",
        "partly host",
        "PF-INTENT-MODE TC-INTENT-MODE",
        "The mode is fixed at start_run and every frame/contract must keep it; choosing the mode "
        "for an unclear request is the host's and user's decision.",
    ),
    _m(
        "Mode defaults MAY be narrowed by a contract. They MUST NOT be broadened without user "
        "authorization.",
        "rules",
        "TC-PERMISSIONS-AUTHORIZED TC-REVISE-PERMISSIONS WP-NODE-PERMISSIONS-CEILING "
        "QR-CORRECTION-ORDER QR-REMEDIATION-ORDER RA-DEFECT-SCOPE",
        "start_run intersects grants with the mode ceiling and host capabilities (SR-* rules).",
    ),
    _m(
        "Tool arguments MUST be checked against scoped permissions, not only the tool name.",
        "rules",
        "WR-ACTION-AUTHORIZED WR-SHELL-INSPECT-TARGET WR-FILE-CHANGE-AUTHORIZED TC-SHELL-ALLOWLIST",
    ),
    _m(
        "Destructive operations, external messages, deployments, purchases, credential changes, "
        "and production mutations MUST require explicit authorization.",
        "partly host",
        "WR-NO-MUTATION WR-ACTION-AUTHORIZED WR-MUTATING-FLAG",
        "No mode allows runtime.restart, browser.mutate or external.write; writes need an "
        "explicit grant. Operations outside Telic's capability vocabulary, and the real calls, are "
        "the host's to gate.",
    ),
    _m(
        "The envelope records available capabilities; it MUST NOT claim that unavailable tools or "
        "native subagents exist.",
        "partly host",
        how="start_run drops grants the host does not list and derives depth from "
        "native_subagents; Telic must trust the host's own declaration of what it has.",
    ),
    _m(
        "A NextAction MUST identify exactly one legal phase, its permitted inputs, output schema, "
        "effective permission ceiling, and remaining budgets.",
        "mechanism",
        "RUN-PHASE-TYPE",
        "next_action computes them from the phase table; any other type is refused. Over MCP a "
        "session that already received a type's schema in full gets a $ref to "
        "telic://schemas/<type> instead (telic serve --schemas full always sends it).",
    ),
    _m(
        "A ContextManifest MUST preserve provenance and explain selection.",
        "mechanism",
        "RUN-CONTROLLER-OWNED CM-DERIVED-REFS",
        "Only grounding produces it: each selected source has a selectionReason and content hash, "
        "exclusions are counted by reason.",
    ),
    _m(
        "A derived summary MUST reference its exact source artifacts.",
        "rules",
        "REF-EXISTS REF-TYPED-TARGET REF-SOURCE-VALID CM-DERIVED-REFS",
    ),
    _m(
        "User instructions, applicable rules, permissions, acceptance criteria, errors, active "
        "diffs, and verification evidence MUST NOT be lossily compressed.",
        "partly host",
        "TC-FRAME-COPY TC-RULE-REFS UR-CLAIM-MATCHES-AUDIT-MATRIX UR-CHANGE-REFS "
        "UR-VERIFICATION-REFS",
        "Artifacts are stored verbatim and passed by reference; what the host's model does with "
        "them in its own context is beyond Telic.",
    ),
    _m(
        "Facts MUST be separated from inferences.",
        "rules",
        "PF-FACT-PROVENANCE TC-CONTEXT-REFS",
        "Schema: knownFacts and inferences are separate typed lists with unique ids.",
    ),
    _m(
        "For project work, a ScenarioSpec MUST NOT add facts, requirements, or permissions that "
        "are absent from its ProblemFrame.",
        "partly host",
        "SS-PROBLEM-FRAME-LATEST SS-ONE-PER-FRAME",
        "The spec is never an input of compilation; semantic equivalence of its free text is a "
        "host review responsibility, as the seed itself says.",
    ),
    _m(
        "The review MUST assess intent fidelity, grounding, permissions, and verifiability rather "
        "than rewarding the presence of decorative prompt sections.",
        "partly host",
        "PR-COVERAGE",
        "Schema fixes the six weighted dimensions and the overall score; the judgement itself is "
        "the host model's.",
    ),
    _m(
        "Node permissions MUST be no broader than the TaskContract, every executable node declares "
        "at least one permission-backed required capability, and required capabilities are unique.",
        "rules",
        "WP-NODE-PERMISSIONS-CONTRACT WP-NODE-CAPABILITIES WP-NODE-SPAWN-CHILDREN "
        "WP-PLAN-TOOL-CALLS",
    ),
    _m(
        "Observations and inferences MUST be distinct.",
        "rules",
        "REF-DIRECT-EVIDENCE",
        "Schema: observations are observed/user_reported, inferences inferred/unverified.",
    ),
    _m(
        "Agent 5 MUST NOT mutate the workspace.",
        "partly host",
        "UR-CHANGE-REFS",
        "Audit and report phases carry empty effectivePermissions and no actions; the host's "
        "native tools cannot be intercepted.",
    ),
    _m(
        "Every completion claim in a UserReport MUST resolve to the approved contract and "
        "evidence.",
        "rules",
        "UR-CLAIM-MATCHES-AUDIT-MATRIX UR-RELEASE-CLAIMS RA-CRITERIA "
        "RA-RELEASE-COVERAGE REF-DIRECT-EVIDENCE",
    ),
    _m(
        "Partial, blocked, and failed-verification reports MUST name the missing criterion or "
        "boundary rather than disguising it as success.",
        "rules",
        "UR-STATUS UR-FINDINGS UR-EARLY-BLOCK UR-FAILED-VERIFICATION",
        "Schema: a non-completed report needs a finding, risk or next action.",
    ),
    _m("trace_ref MUST be the aggregate trace://<current-run-id> URI.", "rules", "UR-TRACE-REF"),
    _m(
        "They MUST NOT expose hidden chain-of-thought, secrets, or unredacted sensitive tool "
        "output.",
        "rules",
        "EV-NO-SECRETS ANY-NO-SECRETS RUN-NO-SECRETS",
        "(They: traces.) Trace summaries are controller-written; every host-submitted string "
        "is scanned and a secret refused; permission scopes keep only bare hosts and pass "
        "through redaction; secret-like files and content are excluded at grounding "
        "(docs/secrets.md).",
    ),
    _m(
        "It MUST NOT treat prior model conversation as authoritative unless represented by an "
        "artifact reference.",
        "partly host",
        "RUN-RESUME-LINEAGE",
        "Every rule reads stored artifacts only and clarification answers become UserMessages; "
        "the host model's memory is out of Telic's sight.",
    ),
    _m(
        "Transport-level retries MAY exist for an idempotent failed tool call, but they MUST NOT "
        "silently rerun an agent phase or reset a quality budget.",
        "rules",
        "RUN-TOKEN-VERSION RUN-TOKEN-ACTION ANY-ID-FRESH QR-REMAINING-REMEDIATIONS "
        "RA-REMAINING-REMEDIATIONS",
        "Supporting replays are idempotent; budgets are counters in the run row.",
    ),
    _m(
        "All serialized artifacts MUST include a schema version.",
        "mechanism",
        how='Every body carries schemaVersion "1.0" (schema literal); the ledger stores it.',
    ),
)
"""Every MUST / MUST NOT sentence of the seed protocol document, in document order."""

SCHEMA_HELD: Final[tuple[SchemaHeld, ...]] = (
    SchemaHeld(
        "body id, runId and schemaVersion match the submission",
        'ANY-BODY, REF-SAME-RUN (runId) and the schema literal schemaVersion "1.0"',
    ),
    SchemaHeld(
        "producer equals the expected producer",
        "derived by the controller from type and phase; the caller cannot choose it",
    ),
    SchemaHeld("redaction ∈ none|partial|full", "set by the controller; not a submission input"),
    SchemaHeld(
        "repo:// allowed inside the ContextManifest itself",
        "the manifest is controller-owned (RUN-CONTROLLER-OWNED)",
    ),
    SchemaHeld("WorkPlan executionMode serial", "schema literal"),
    SchemaHeld(
        "completed WorkResult: no failed/denied actions, no failed tests, all coverage pass",
        "WorkResult schema",
    ),
    SchemaHeld(
        "proceed_to_fix correction order has ≥1 allowedCapability and its sourceRefs "
        "intersect the gate's directEvidenceRefs",
        "QualityReview schema (≥1 capability; "
        "sourceRefs ⊇ directEvidenceRefs, which a supported gate has)",
    ),
    SchemaHeld("ReleaseAudit claim ids unique", "ReleaseAudit schema (duplicate_claim_id)"),
    SchemaHeld("completed UserReport needs ≥1 claim", "UserReport schema"),
    SchemaHeld(
        "permission_checked events per attempted action, none for skipped",
        "_work.permission_notes, written with the accepted WorkResult",
    ),
    SchemaHeld(
        "Evidence: identical replay idempotent",
        "the machine returns the stored record; a divergent replay is ANY-ID-FRESH",
    ),
)
"""§3.4 / §3.1 items that are enforced before, or outside, the rule registry."""
