"""Opening a run (docs/protocol.md §2 tool 1) and projecting its trace (§3.1 TraceEvent), purely.

``StartRequest`` is what a start asks for, declared once. ``open_run`` validates its authority
inputs through ``telic.permissions.start_run_authority`` (mode default grants, silent
intersection with the host's capabilities, exact allowlists, bare domains) after refusing any
argument that holds a likely secret (``RUN-NO-SECRETS``), then builds the request
``UserMessage``, the ``RunEnvelope`` (id = runId) and the ``run_started`` event of a run at
version 1 in context grounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from telic._errors import Issue, SchemaViolation, UsageError
from telic.controller._events import TraceNote
from telic.controller._lineage import check_prior
from telic.controller._scan import refuse_secret_arguments
from telic.controller._state import RunState, stored_artifact
from telic.controller._topology import classify
from telic.controller._vocabulary import ELICITED_EVENT
from telic.ledger import RunRecord, check_id
from telic.permissions import default_budgets, start_run_authority
from telic.protocol import (
    EVENT_TYPES,
    LOGICAL_ROLES,
    MAX_BOUNDED_TEXT,
    Authorization,
    HostDescriptor,
    Mode,
    NativeSubagents,
    RunEnvelope,
    Topology,
    UserMessage,
    WorkingContext,
)

_GROUNDING: Final = ("controller", "context_grounding")
"""Who records a start's trace events, and in which phase."""
_CANONICAL: Final[dict[str, str]] = {
    "context_source_stored": "artifact_recorded",
    "evidence_captured": "artifact_recorded",
    "scenario_presentation_stored": "artifact_recorded",
    "clarification_answered": "transition_allowed",
    ELICITED_EVENT: "transition_allowed",
    "run_cancelled": "run_terminated",
    "budget_consumed": "artifact_recorded",  # no canonical mapping in 1.0 (§6)
}


@dataclass(frozen=True, slots=True)
class StartRequest:
    """What a start asks for (docs/protocol.md §2 tool 1), with the tool's defaults.

    The one declaration of a start's parameters: ``telic_start_run``'s argument model builds
    it, and ``Service.start_run``, ``Controller.start_run`` and ``open_run`` carry it down.
    """

    original_request: str
    """The user's request, verbatim."""
    mode: Mode
    """The mode the user asked for."""
    host_name: str = "mcp-host"
    """The host's name."""
    native_subagents: NativeSubagents = "unknown"
    """Whether the host can start child agents."""
    host_capabilities: Sequence[str] = ("repository.read",)
    """What the host can do."""
    authorization_granted: Sequence[str] | None = None
    """What the user granted; None: the mode's defaults."""
    authorization_denied: Sequence[str] = ()
    """What the user denied."""
    shell_execute_allowlist: Sequence[str] = ()
    """Exact commands the run may execute (needs shell.execute)."""
    network_read_domains: Sequence[str] = ()
    """Domains the run may read (needs network.read)."""
    active_files: Sequence[str] = ()
    """The files the user works on."""
    protected_paths_granted: Sequence[str] = ()
    """(Beyond Telic 1.0) the protected paths writes and deletes may reach; nothing else can."""
    prior_run_id: str | None = None
    """A terminal run of this ledger and repository to follow, whose every record verifies
    (read and checked before anything is stored); the new run may cite its Evidence."""
    topology_override: Topology | None = None
    """(Beyond Telic 1.0, §3.7) a micro, standard or forensic run; None: 1.0 exactly."""


def open_run(
    request: StartRequest, *, run_id: str, message_id: str, now: str, repository_root: str
) -> tuple[RunState, tuple[TraceNote, ...]]:
    """Return the state of a new run and its first trace events.

    A ``prior_run_id`` (the driver has checked it with ``check_prior``) is recorded in the row,
    and ``lineage_linked`` follows ``run_started``.

    Raises:
        SchemaViolation: the request is empty, blank or longer than 32,768 characters.
        SecretDetected: an argument holds a likely secret (``RUN-NO-SECRETS``).
        RuleViolation: the authority inputs break an ``SR-*`` rule, or the request does not
            fit ``topology_override`` (``TP-OVERRIDE-*``, checked after the 1.0 start checks).
        LineageRefused: ``prior_run_id`` is not a run id at all (``RUN-PRIOR-EXISTS``).
    """
    if not request.original_request.strip() or len(request.original_request) > MAX_BOUNDED_TEXT:
        message = "original_request must be 1–32,768 characters and not blank"
        raise SchemaViolation(message, issues=(Issue("original_request", "invalid", message),))
    refuse_secret_arguments(
        (
            ("original_request", request.original_request),
            ("repository_root", repository_root),
            ("host_name", request.host_name),
            ("host_capabilities", request.host_capabilities),
            ("authorization_granted", request.authorization_granted or ()),
            ("authorization_denied", request.authorization_denied),
            ("shell_execute_allowlist", request.shell_execute_allowlist),
            ("network_read_domains", request.network_read_domains),
            ("active_files", request.active_files),
        )
    )
    authority = start_run_authority(
        mode=request.mode,
        host_capabilities=request.host_capabilities,
        authorization_granted=request.authorization_granted,
        authorization_denied=request.authorization_denied,
        shell_execute_allowlist=request.shell_execute_allowlist,
        network_read_domains=request.network_read_domains,
        protected_paths_granted=request.protected_paths_granted,
    )
    classified = None
    if request.topology_override is not None:
        classified = classify(
            request=request.original_request,
            mode=request.mode,
            granted=authority.granted,
            shell_execute_allowlist=request.shell_execute_allowlist,
            network_read_domains=request.network_read_domains,
            override=request.topology_override,
        )
    budgets = default_budgets(request.native_subagents)
    user_message = UserMessage(
        schema_version="1.0", id=message_id, run_id=run_id, content=request.original_request
    )
    asked = stored_artifact(run_id, "UserMessage", user_message, "user", (), now)
    envelope = RunEnvelope(
        schema_version="1.0",
        run_id=run_id,
        created_at=now,
        original_request_ref=asked.uri,
        followup_request_refs=[],
        requested_mode=request.mode,
        status="active",
        working_context=WorkingContext(
            repository_root=repository_root,
            active_files=list(request.active_files),
            applicable_rule_refs=[],
        ),
        host=HostDescriptor(
            name=request.host_name,
            version=None,
            native_subagents=request.native_subagents,
            capabilities=list(authority.host_capabilities),
        ),
        authorization=Authorization(
            granted=authority.granted_permissions(),
            denied=authority.denied_permissions(),
            protected_paths_granted=list(authority.protected_paths_granted),
        ),
        budgets=budgets,
        policy_refs=[],
        topology=None if classified is None else classified.topology,
    )
    if request.prior_run_id is not None:
        try:
            check_id("prior_run_id", request.prior_run_id)
        except UsageError:  # no run has such an id: refused as a lookup of it would be
            check_prior(request.prior_run_id, repository_root, None, None)
    run = RunRecord(
        run_id=run_id,
        schema_version="1.0",
        repository_root=repository_root,
        requested_mode=request.mode,
        status="running",
        phase="context_grounding",
        resume_phase=None,
        version=1,
        prompt_revisions_remaining=budgets.prompt_revisions,
        remediations_remaining=budgets.post_execution_remediations,
        outcome_hint=None,
        created_at=now,
        updated_at=now,
        prior_run_id=request.prior_run_id,
        topology=None if classified is None else classified.topology,
    )
    artifacts = (
        asked,
        stored_artifact(run_id, "RunEnvelope", envelope, "controller", (asked.uri,), now),
    )
    started = f"Run started in {request.mode}"
    outputs = tuple(a.uri for a in artifacts)
    notes = [TraceNote("run_started", *_GROUNDING, output_refs=outputs, summary=started)]
    if classified is not None:  # only a run that asked: a 1.0 run's trace stays 1.0's
        notes.append(TraceNote("topology_classified", *_GROUNDING, summary=classified.rationale))
    if (prior := request.prior_run_id) is not None:
        linked = f"Linked to prior run {prior}"
        notes.append(
            TraceNote("lineage_linked", *_GROUNDING, (f"trace://{prior}",), summary=linked)
        )
    return RunState(run=run, artifacts=artifacts), tuple(notes)


def canonical_event_type(internal: str) -> str:
    """Map an internal event name to its canonical TraceEvent eventType (§3.1)."""
    if internal in _CANONICAL:
        return _CANONICAL[internal]
    return internal if internal in EVENT_TYPES else "artifact_recorded"


def canonical_actor(actor: str) -> str:
    """Return ``actor`` if it is a LogicalRole, else ``host``."""
    return actor if actor in LOGICAL_ROLES else "host"
