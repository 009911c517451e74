"""Conformance data: how each MUST of ``docs/protocol.md`` and each schema-held §3.4 item is met.

``docs/protocol.md`` is the project's own statement of the protocol and the document of record.
Each ``SpecMust`` quotes one of its MUST / MUST NOT sentences verbatim and says what enforces it:
rule ids, a mechanism of the controller, or — where Telic cannot see the behaviour, because it
never runs the model or the host's tools — an explicit host obligation with the reason.
``test_coverage.py`` beside it fails when a MUST of the page is not quoted here, when a quote is
no longer on the page, or when a quote names an unknown rule; ``docs/rules.md`` is generated from
this module and the rule registry. Test data, not product: the server never reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["SCHEMA_HELD", "SPEC_MUSTS", "SchemaHeld", "SpecMust"]

Kind = Literal["rules", "mechanism", "host", "partly host"]


@dataclass(frozen=True, slots=True)
class SpecMust:
    """One MUST sentence of docs/protocol.md and what enforces it."""

    section: str
    """The section of docs/protocol.md that holds the sentence, e.g. ``§3.5``."""
    quote: str
    kind: Kind
    rules: tuple[str, ...] = ()
    how: str = ""


@dataclass(frozen=True, slots=True)
class SchemaHeld:
    """A §3.4 item enforced before the rules run (schema or machine), so it has no rule id."""

    item: str
    where: str


def _m(section: str, quote: str, kind: Kind, rules: str = "", how: str = "") -> SpecMust:
    return SpecMust(section, quote, kind, tuple(rules.split()), how)


SPEC_MUSTS: Final[tuple[SpecMust, ...]] = (
    _m(
        "§2",
        "A state-changing call MUST present the run's current version and the current action id.",
        "rules",
        "RUN-TOKEN-VERSION RUN-TOKEN-ACTION",
        "The ledger repeats the version check inside the committing transaction.",
    ),
    _m(
        "§2",
        "A transport-level retry MAY repeat an idempotent call, but it MUST NOT run a phase again "
        "or reset a budget: a replayed phase artifact meets a stale token, and a replayed "
        "supporting artifact returns the stored record.",
        "rules",
        "RUN-TOKEN-VERSION RUN-TOKEN-ACTION ANY-ID-FRESH QR-REMAINING-REMEDIATIONS "
        "RA-REMAINING-REMEDIATIONS",
        "Budgets are counters in the run row, changed only by accepted transitions.",
    ),
    _m(
        "§3.1",
        "The envelope MUST NOT claim a capability or native subagents the host did not declare: "
        "grants the host lacks are dropped, and the subagent depth follows `native_subagents`.",
        "partly host",
        "SR-GRANT-NOT-ON-HOST",
        "start_run intersects the grant with the host's capabilities and derives workers and depth "
        "from native_subagents; Telic has to trust the host's own declaration of what it has.",
    ),
    _m(
        "§3.1",
        "A frame MUST keep facts apart from inferences, and MUST NOT upgrade an unclear request to "
        "a more permissive mode.",
        "partly host",
        "PF-FACT-PROVENANCE PF-INTENT-MODE TC-INTENT-MODE TC-CONTEXT-REFS",
        "Schema: knownFacts and inferences are separate typed lists with unique ids. The mode is "
        "fixed at start_run; choosing it for an unclear request is the host's and the user's call.",
    ),
    _m(
        "§3.1",
        "A ScenarioSpec MUST NOT take the place of the user's request, and it MUST NOT add facts, "
        "requirements or permissions its ProblemFrame lacks.",
        "partly host",
        "SS-PROBLEM-FRAME-LATEST SS-ONE-PER-FRAME PF-ORIGINAL-REQUEST TC-ORIGINAL-REQUEST",
        "A ScenarioSpec is a supporting artifact outside Agent 2's input projection, so it never "
        "becomes the contract's source; whether its prose adds anything is the host's review.",
    ),
    _m(
        "§3.1",
        "The review MUST judge intent fidelity, grounding, permissions and verifiability, not the "
        "presence of prompt sections.",
        "partly host",
        "PR-COVERAGE",
        "Schema fixes the six weighted dimensions and the overall score; the judgement itself is "
        "the host model's.",
    ),
    _m(
        "§3.1",
        "A numeric score MUST NOT outweigh a failed hard gate or a blocking finding, in a "
        "PromptReview or in a QualityReview.",
        "mechanism",
        how="Schema: PromptReview pass and QualityReview pass/proceed_to_fix need no failed gate "
        "and no blocking finding whatever the score.",
    ),
    _m(
        "§3.1",
        "Observations MUST stay distinct from inferences.",
        "rules",
        "REF-DIRECT-EVIDENCE",
        "Schema: observations are observed/user_reported, inferences inferred/unverified.",
    ),
    _m(
        "§3.1",
        "The trace MUST NOT expose hidden chain-of-thought, secrets or unredacted sensitive tool "
        "output.",
        "rules",
        "EV-NO-SECRETS ANY-NO-SECRETS RUN-NO-SECRETS",
        "Trace summaries are controller-written; every host-submitted string is scanned and a "
        "secret refused; permission scopes keep only bare hosts and pass through redaction; "
        "secret-like files and content are excluded at grounding (docs/secrets.md).",
    ),
    _m(
        "§3.2",
        "A NextAction MUST name exactly one legal phase with its permitted inputs, its output "
        "schema, its effective permission ceiling and its remaining budgets.",
        "mechanism",
        "RUN-PHASE-TYPE",
        "next_action computes them from the phase table; any other type is refused. Over MCP a "
        "session that already received a type's schema in full gets a $ref to "
        "telic://schemas/<type> instead (telic serve --schemas full always sends it).",
    ),
    _m(
        "§3.2",
        "A projection MUST keep the whole transitive closure of references its mandatory inputs "
        "need, and MUST fail rather than drop part of it.",
        "mechanism",
        how="The NextAction inputRefs closure raises LimitExceeded above 256 references "
        "(test_a_closure_of_257_references_fails_loudly_and_256_fit).",
    ),
    _m(
        "§3.2",
        "The release auditor MUST NOT change the workspace: the audit and report phases grant no "
        "permissions.",
        "partly host",
        "UR-CHANGE-REFS",
        "Audit and report phases carry empty effectivePermissions and no actions; the host's "
        "native tools cannot be intercepted.",
    ),
    _m(
        "§3.4",
        "Every derived artifact MUST reference the exact artifacts it derives from.",
        "rules",
        "REF-SOURCE-VALID REF-SOURCE-LIMIT REF-EXISTS REF-TYPED-TARGET CM-DERIVED-REFS",
        "Stored sourceRefs merge the caller's refs with every reference in the body.",
    ),
    _m(
        "§3.4",
        "User instructions, applicable rules, permissions, acceptance criteria, errors, active "
        "diffs and verification evidence MUST NOT be lossily compressed on their way from one "
        "role to the next: they travel by reference to the stored artifact.",
        "partly host",
        "TC-FRAME-COPY TC-RULE-REFS UR-CLAIM-MATCHES-AUDIT-MATRIX UR-CHANGE-REFS "
        "UR-VERIFICATION-REFS",
        "Artifacts are stored verbatim and passed by reference; what the host's model does with "
        "them in its own context is beyond Telic.",
    ),
    _m(
        "§3.4",
        "A node's permissions MUST NOT be broader than the TaskContract's, and every executed node "
        "MUST declare unique, permission-backed required capabilities.",
        "rules",
        "WP-NODE-PERMISSIONS-CONTRACT WP-NODE-CAPABILITIES WP-NODE-SPAWN-CHILDREN "
        "WP-PLAN-TOOL-CALLS",
    ),
    _m(
        "§3.4",
        "A completed result MUST be traceable to its acceptance criteria and to the evidence "
        "behind each.",
        "rules",
        "WR-COVERAGE WR-COMPLETED-COVERAGE WR-COMPLETED-CAPABILITIES "
        "QR-PASS-EXACT-COVERAGE-EVIDENCE RA-RELEASE-COVERAGE UR-CLAIM-MATCHES-AUDIT-MATRIX",
    ),
    _m(
        "§3.4",
        "Every completion claim of a UserReport MUST resolve to the approved contract and its "
        "evidence.",
        "rules",
        "UR-CLAIM-MATCHES-AUDIT-MATRIX UR-RELEASE-CLAIMS RA-CRITERIA RA-RELEASE-COVERAGE "
        "REF-DIRECT-EVIDENCE",
    ),
    _m(
        "§3.4",
        "A partial, blocked or failed-verification report MUST name the missing criterion or the "
        "boundary that stopped it instead of presenting itself as a success.",
        "rules",
        "UR-STATUS UR-FINDINGS UR-EARLY-BLOCK UR-FAILED-VERIFICATION",
        "Schema: a report that is not completed needs a finding, a risk or a next action.",
    ),
    _m(
        "§3.4",
        "The report's `traceRef` MUST be the aggregate `trace://<runId>` of its own run.",
        "rules",
        "UR-TRACE-REF",
    ),
    _m(
        "§3.5",
        "The controller MUST refuse every claimed action outside the intersection of the mode, the "
        "user's grant as the host can honour it, the task contract and the current work node or "
        "work order.",
        "partly host",
        "WR-ACTION-AUTHORIZED WR-ACTION-ALLOWED-TOOL WR-FILE-CHANGE-AUTHORIZED WR-NO-MUTATION "
        "TC-PERMISSIONS-AUTHORIZED WP-NODE-PERMISSIONS-CONTRACT WP-NODE-PERMISSIONS-CEILING "
        "WP-SCOPED-ORDER",
        "Every claimed action is decided against mode ∩ run authorization ∩ node (the node lies "
        "inside contract and work order). Telic cannot intercept host-native tools, so denying the "
        "real call is the host's obligation (it receives effectivePermissions).",
    ),
    _m(
        "§3.5",
        "A contract MAY narrow the mode's defaults, but permissions MUST NOT widen beyond what the "
        "user granted.",
        "rules",
        "SR-GRANT-NOT-ON-HOST TC-PERMISSIONS-AUTHORIZED TC-REVISE-PERMISSIONS "
        "WP-NODE-PERMISSIONS-CEILING QR-CORRECTION-ORDER QR-REMEDIATION-ORDER RA-DEFECT-SCOPE",
        "start_run intersects grants with the mode ceiling and the host's capabilities.",
    ),
    _m(
        "§3.5",
        "An action MUST be judged on its target (path, command, host), not on its capability name "
        "alone.",
        "rules",
        "WR-ACTION-AUTHORIZED WR-SHELL-INSPECT-TARGET WR-FILE-CHANGE-AUTHORIZED TC-SHELL-ALLOWLIST "
        "SR-ALLOWLIST-COMMAND SR-DOMAIN-FORM",
    ),
    _m(
        "§3.5",
        "Destructive, external and production-changing operations MUST need an explicit grant.",
        "partly host",
        "WR-NO-MUTATION WR-ACTION-AUTHORIZED WR-MUTATING-FLAG",
        "No mode allows runtime.restart, browser.mutate or external.write; writes need an "
        "explicit grant. Operations outside Telic's capability vocabulary, and the real calls, are "
        "the host's to gate.",
    ),
    _m(
        "§3.5",
        "The host MUST keep its own native tools within the `effectivePermissions` it was given, "
        "because Telic never sees those calls; `telic_check_tool_action` lets a host hook ask "
        "first.",
        "host",
        how="Telic cannot intercept native tools; it publishes effectivePermissions in every "
        "NextAction, the workflow prompt tells the host to honour them, and "
        "telic_check_tool_action decides and traces a question a hook asks before acting.",
    ),
    _m(
        "§4",
        "A ContextManifest MUST record where each selected source came from and why it was chosen, "
        "and MUST NOT contain the path or content of an excluded secret-like file.",
        "mechanism",
        "RUN-CONTROLLER-OWNED CM-DERIVED-REFS",
        "Only grounding produces a manifest: each selected source has a selectionReason and a "
        "content hash; exclusions are emitted as counts by reason only.",
    ),
    _m(
        "§4",
        "A claim about the repository or the runtime MUST cite its source and its evidence.",
        "rules",
        "PF-FACT-PROVENANCE REF-REPO-SELECTED REF-DIRECT-EVIDENCE REF-EVIDENCE-KIND",
        "Schema: observed and inferred claims need an evidenceRef.",
    ),
    _m(
        "§5",
        "The user's original request MUST be stored unchanged and stay addressable for the whole "
        "run.",
        "rules",
        "ANY-ID-FRESH PF-ORIGINAL-REQUEST TC-ORIGINAL-REQUEST RA-ORIGINAL-REQUEST RA-USER-FIDELITY",
        "start_run stores it as the run's first, content-addressed UserMessage; ids are "
        "insert-only and every read re-verifies the digest.",
    ),
    _m(
        "§5",
        "Every stored artifact MUST carry its schema version.",
        "mechanism",
        how='Every body carries schemaVersion "1.0" (a schema literal); the ledger stores it in '
        "the artifact row.",
    ),
    _m(
        "§5",
        "A stored artifact MUST NOT be overwritten, and every read MUST verify the body against "
        "its digest.",
        "rules",
        "ANY-ID-FRESH",
        "Artifact rows are insert-only per (run, id); every read re-hashes the body; the hash "
        "chain that telic_verify_run walks catches rewritten rows.",
    ),
    _m(
        "§5",
        "Every run, artifact, trace event, criterion, work node and finding MUST have an "
        "identifier that is stable within its run.",
        "rules",
        "ANY-ID-FRESH TC-ASSUMPTIONS",
        "Schema Identifier fields with uniqueness checks (frame ids, criteria, verifications, "
        "nodes, claims); trace events carry UUIDs and sequences.",
    ),
    _m(
        "§6",
        "A cast MUST carry a routing reason and a budget within its type's ceilings, and a cast "
        "type MUST be enabled by the user before any child of that type starts.",
        "mechanism",
        how="Cast admission refuses with missing_routing_reason, budget_missing, "
        "budget_exceeds_ceiling or cast_type_disabled; cast types are enabled only by the "
        "start_run cast_types argument or the server's telic.toml.",
    ),
    _m(
        "§6",
        "A child's handoff MUST NOT carry the parent's transcript.",
        "mechanism",
        how="The Handoff model is strict and has no history, message or transcript field; any "
        "such field is refused with unknown_field.",
    ),
    _m(
        "§6",
        "A packet's verdict and verified flags MUST be derived by the controller, never taken from "
        "the child.",
        "mechanism",
        how="Sealing verifies each quote byte for byte against the ledger and computes the "
        "verdict; the child's return model has no verdict or verified field.",
    ),
    _m(
        "§6",
        "A packet over a bound MUST be refused with its typed code rather than truncated.",
        "mechanism",
        how="telic_packets refuses with packet_too_large, claim_too_long, too_many_evidence_lines "
        "or quote_too_long; each bound has conformance-table rows at the limit and one past it.",
    ),
    _m(
        "§7",
        "The core workflow MUST NOT need MCP sampling or an external model key.",
        "mechanism",
        how="The controller never calls a model; tests/test_architecture.py keeps the dependency "
        "graph free of model clients.",
    ),
    _m(
        "§7",
        "State transitions, permission decisions, schema validation and budget counters MUST be "
        "deterministic controller behaviour.",
        "mechanism",
        "RUN-TOKEN-VERSION RUN-TOKEN-ACTION",
        "step(state, submission) is pure and total; NextAction ids are action:<runId>:<version>; "
        "budgets are derived from stored artifacts (tests/telic/controller/test_determinism.py).",
    ),
    _m(
        "§7",
        "Roles MUST exchange only typed artifacts.",
        "mechanism",
        "RUN-PHASE-TYPE RUN-CONTROLLER-OWNED ANY-BODY",
        "Every submission is parsed by a strict schema (unknown fields refused) and stored "
        "immutably.",
    ),
    _m(
        "§7",
        "Hidden chain-of-thought MUST NOT be asked for, stored or exposed.",
        "partly host",
        how="Stored/exposed: strict schemas refuse any unknown field (hiddenChainOfThought "
        "included) and the trace holds controller-written summaries only. Asked for: NextAction "
        "stopConditions ask for summaries only, but what the host asks its own model is invisible "
        "to Telic.",
    ),
    _m(
        "§7",
        "The host MUST NOT treat earlier model conversation as authoritative unless an artifact "
        "reference represents it.",
        "partly host",
        "RUN-RESUME-LINEAGE",
        "Every rule reads stored artifacts only and clarification answers become UserMessages; "
        "the host model's memory is out of Telic's sight.",
    ),
)
"""Every MUST / MUST NOT sentence of docs/protocol.md, in page order."""

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
        "completed WorkResult: no failed/denied actions, all coverage pass (a failed test: "
        "WR-COMPLETED-FAILED-TEST)",
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
