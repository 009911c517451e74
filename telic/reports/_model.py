"""The report's data: everything a renderer shows, gathered once from the ledger.

``RunReportData`` is a plain, frozen projection of one run's ledger records. The renderers are
pure functions of it, so the same data always renders to the same bytes; only
``load_run_report`` touches the ledger. Text fields that came from artifact bodies (the request,
claims, risks) are untrusted and every renderer escapes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from telic.controller import ReplayStep

GENERATOR_NAME: Final = "telic-reports"
"""The generator name every report carries in its provenance."""

StepKind = Literal[
    "start", "advance", "revision", "remediation", "fix", "clarification", "resume", "terminal"
]


SHELL_EXECUTE_NOTE: Final = (
    "shell.execute: whether a command changed anything is the host's word (the mutating flag of "
    "its WorkAction). Telic never runs or observes commands, so a verification by command, and "
    "the acceptance of such an action in a read-only phase, is only as true as the host."
)
"""Shown next to every verification and permission decision that rests on that flag."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineEntry:
    """One step of the run's history: what was accepted when, by whom, and how long it took."""

    sequence: int
    timestamp: str
    phase: str
    """The protocol phase the step happened in."""
    actor: str
    event: str
    """The internal trace event type (``phase_submitted``, ``clarification_answered``, …)."""
    artifact_id: str | None
    artifact_type: str | None
    outcome: str | None
    """The artifact's decision or status when it has one (``pass``, ``remediate``, …)."""
    duration_ms: int | None
    """Time since the previous step; ``None`` for the first."""


AnswerSource = Literal["elicited", "response", "pending"]


@dataclass(frozen=True, slots=True)
class Table:
    """A table of the run report, as both renderings title and head it."""

    section: str
    """The HTML section id (and the prefix of its table's ids)."""
    title: str
    columns: tuple[str, ...]
    empty: str = ""
    """What stands for the table when it has no rows."""


# The tables both renderings show, in the order they show them.
TIMELINE: Final = Table(
    "timeline",
    "Timeline",
    ("#", "Time", "Phase", "Actor", "Event", "Artifact", "Outcome", "Took"),
    "No steps recorded.",
)
CLARIFICATIONS: Final = Table(
    "clarifications",
    "Clarifications",
    ("Request", "Question", "Choices offered", "Answer", "Answered by"),
)
CRITERIA: Final = Table(
    "criteria",
    "Acceptance criteria",
    ("Criterion", "Stage", "Requirement", "Status", "Evidence"),
    "No task contract yet.",
)
CLAIMS: Final = Table(
    "claims",
    "Claim → evidence",
    ("Claim", "Statement", "Status", "Basis", "Criteria", "Evidence", "From"),
    "No claims recorded.",
)
VERIFICATIONS: Final = Table(
    "verification",
    "Verification",
    ("Requirement", "Capability", "Required", "Status", "Evidence", "Description"),
    "No verification requirements.",
)
PERMISSIONS: Final = Table(
    "permissions",
    "Permission decisions",
    ("#", "Decision", "Capability", "Scope", "Deciding layer", "Reason", "Action of"),
    "No permission decisions recorded.",
)
PACKETS: Final = Table(
    "packets",
    "Evidence packets",
    (
        "Packet",
        "Cast type",
        "Need",
        "Outcome / verdict",
        "Tokens (self-reported)",
        "Consumption",
    ),
    "No evidence packets in this run.",
)

ANSWER_SOURCES: Final[dict[str, str]] = {
    "elicited": "the user, in the client's form (MCP elicitation)",
    "response": "the host, through clarification_response",
    "pending": "not answered yet",
}
"""Who answered a clarification (``ClarificationRow.answered_by``), as the report says it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClarificationRow:
    """A ClarificationRequest, the choice it was answered with, and who chose it."""

    request_id: str
    question: str
    choices: tuple[tuple[str, str, str], ...]
    """Each offered choice: (id, label, consequence)."""
    answer_id: str | None
    """The UserMessage holding the answer, or None while it is pending."""
    choice_id: str | None
    answered_by: AnswerSource


@dataclass(frozen=True, slots=True, kw_only=True)
class PathStep:
    """One node of the path through the state machine, with how the run got there."""

    phase: str
    kind: StepKind
    label: str
    """A short annotation: the decision that led here, or the terminal status."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CriterionRow:
    """An acceptance criterion of the latest TaskContract and its latest judged status."""

    id: str
    stage: str
    requirement: str
    status: str
    """The latest judgement (``pass``, ``fail``, ``unverified``…), else ``pending``."""
    evidence: tuple[str, ...]
    """Artifact ids of the evidence the latest judgement cites."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimRow:
    """One row of the claim → evidence matrix (ReleaseAudit, else the UserReport's claims)."""

    claim_id: str
    claim: str
    status: str
    basis: str
    criteria: tuple[str, ...]
    evidence: tuple[str, ...]
    """Artifact ids (links within the report) of the evidence."""
    source: str
    """Artifact id the row comes from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceEntry:
    """An Evidence artifact's captured text: the diff, the verification output, a file's state.

    The report shows ``excerpt`` inline and the ``full`` text one click away; both are bounded
    (``EXCERPT_LINES``/``EXCERPT_CHARS`` and ``FULL_CHARS`` in ``_project``).
    """

    artifact_id: str
    kind: str
    """The evidence kind (``diff``, ``test``, ``tool_output``, …)."""
    summary: str
    excerpt: str
    """The first lines of the content (empty for binary content)."""
    total_lines: int
    total_chars: int
    truncated: bool
    """Whether ``excerpt`` is shorter than the content."""
    full: str | None
    """The whole text when it is text and within the bound, else ``None``."""
    binary: bool
    """Whether the content is base64 bytes (never shown as text)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationRow:
    """A verification requirement of the contract and its result in the latest QualityReview."""

    requirement_id: str
    capability: str
    required: bool
    description: str
    status: str
    """The latest review's status, or ``pending`` when no review judged it yet."""
    evidence: tuple[str, ...]
    host_attested: bool = False
    """Whether the result rests on the host's ``mutating`` flag (``shell.execute``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRow:
    """A ``permission_checked`` trace event: ALLOW or DENY and the layer that decided."""

    sequence: int
    decision: Literal["ALLOW", "DENY"]
    capability: str
    scope: str
    deciding_layer: str
    """The layer that denied, ``all layers`` for an allow, ``target`` for a refused target."""
    reason: str
    artifact_id: str | None
    """The WorkResult whose action was checked."""
    host_attested: bool = False
    """Whether the decision rests on the host's ``mutating`` flag (``shell.execute``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetRow:
    """A budget: how much was used against its limit."""

    name: str
    used: int
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PacketRow:
    """An evidence packet stored in the run and whether the parent's next decision cited it."""

    artifact_id: str
    packet_id: str
    cast_type: str
    need_code: str
    outcome: str
    verdict: str
    total_tokens: int
    consumption: Literal["cited", "not cited", "not observed"]
    cite_kind: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NextStep:
    """A next action the UserReport proposes."""

    id: str
    description: str
    requires_authorization: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactEntry:
    """An artifact of the run: the anchor every link in the report points at."""

    artifact_id: str
    type: str
    producer: str
    created_at: str
    sha256: str
    size_bytes: int
    summary: str
    """A short, type-specific line (an Evidence summary, a decision), or empty."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Integrity:
    """The outcome of ``verify_run`` when the report was generated."""

    ok: bool
    records_checked: int
    problem: str | None
    """What the first broken record is and why, when not ``ok``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where the report comes from: the run, the ledger's chain head, the generator, the time."""

    run_id: str
    chain_head: str
    """The record hash of the run's last ledger record."""
    chain_length: int
    """How many records (artifacts and trace events) the report covers."""
    generator_name: str
    generator_version: str
    generated_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexEntry:
    """One run in the index of runs: enough to tell it from the others."""

    run_id: str
    mode: str
    status: str
    phase: str
    """Where the run is, as a protocol phase (``run_phase``)."""
    updated_at: str
    repository: str
    request: str | None
    """The start of the original request (untrusted), or ``None`` when it cannot be read."""
    prior_run_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReportData:
    """Everything a run report shows, as projected from the ledger at one moment."""

    run_id: str
    request: str | None
    """The original request text (untrusted), or ``None`` when the message is missing."""
    mode: str
    run_status: str
    """The ledger's run status (``running``, ``completed``, ``partial``, ``cancelled``, …)."""
    terminal_status: str | None
    """The reported terminal status (adds ``failed_verification``), or ``None`` while running."""
    phase: str
    """The run's protocol phase (``run_phase``)."""
    version: int
    created_at: str
    updated_at: str
    summary: str | None
    """The UserReport's summary, when there is one."""
    timeline: tuple[TimelineEntry, ...]
    path: tuple[PathStep, ...]
    criteria: tuple[CriterionRow, ...]
    claims: tuple[ClaimRow, ...]
    verifications: tuple[VerificationRow, ...]
    evidence: tuple[EvidenceEntry, ...]
    """Evidence with its content: diffs first, then test and tool output, then the rest."""
    permissions: tuple[PermissionRow, ...]
    budgets: tuple[BudgetRow, ...]
    packets: tuple[PacketRow, ...]
    digest: str
    """The packet digest (``telic_packets.render_digest``); empty without packets."""
    risks: tuple[str, ...]
    next_actions: tuple[NextStep, ...]
    artifacts: tuple[ArtifactEntry, ...]
    integrity: Integrity
    provenance: Provenance
    clarifications: tuple[ClarificationRow, ...] = ()
    """Every ClarificationRequest and its answer, with who answered it."""
    steps: tuple[ReplayStep, ...] = ()
    """The run replayed: one step per stored artifact, in trace order (``telic_replay_run``)."""
    highlights: tuple[str, ...] = ()
    """The replay's highlights: topology escalations, then denied host checks."""
    prior_run_id: str | None = None
    """The run this one follows (``prior_run_id``), whose Evidence it may cite; or ``None``."""
    followed_by: tuple[str, ...] = ()
    """Runs started to follow this one, among the ledger's newest (``load_run_report``)."""
