"""NextAction: the single legal next step of a run, computed from its state (docs/protocol.md §3.2).

The id is ``action:<runId>:<version>`` and createdAt is the run's updatedAt, so the same state
always yields the same action. A running run gets a ``phase`` action, a paused run a
``clarification`` action, and an ended run a ``terminal`` action.
"""

from __future__ import annotations

from typing import Final, cast

from telic._errors import PermissionDenied
from telic.controller._authority import run_authorization
from telic.controller._closure import input_refs
from telic.controller._derive import pending_node, reserved_tool_calls
from telic.controller._phases import PHASES
from telic.controller._state import RunState
from telic.controller._statements import ROLE_PREFIX
from telic.permissions import is_subset
from telic.protocol import (
    MAX_PLAN_TOOL_CALLS,
    STOP_CONDITIONS,
    ClarificationAction,
    PermissionSet,
    PhaseAction,
    RemainingBudgets,
    RepositoryPermissions,
    TerminalAction,
    TerminalPhase,
    TerminalStatus,
    instruction_ref,
    shared_json_schema,
)

_PAUSED: Final = "The run waits for the user to answer its clarification request."
_ENDED: Final = "The run has ended; nothing more may happen."
_FOLLOW_UP: Final = (
    "The run has ended; nothing more may happen in it. To follow it up once the user authorises "
    'a new run, call telic_start_run with prior_run_id "{run_id}": the new run may cite this '
    "run's Evidence."
)
"""The terminal rationale of a run that ended asking for a separately authorised follow-up."""


def _asks_follow_up(state: RunState) -> bool:
    """Whether the run ended blocked or on a ``new_run`` clarification choice."""
    if state.run.status == "blocked":
        return True
    if state.run.status != "cancelled":
        return False
    request = state.latest("ClarificationRequest")
    answer = state.latest("UserMessage")
    if request is None or answer is None or answer.source_refs != (request.uri,):
        return False
    chosen = str(answer.body.content)
    return any(c.id == chosen and c.run_effect == "new_run" for c in request.body.response_choices)


TOPOLOGY_INSTRUCTIONS: Final[dict[tuple[str, str], str]] = {
    ("micro", "agent_1_frame"): f"{ROLE_PREFIX}scenario_author-micro-v1",
    ("micro", "agent_3_review"): f"{ROLE_PREFIX}quality_controller-spot-v1",
    ("forensic", "agent_3_evidence_reverify"): f"{ROLE_PREFIX}quality_controller-reverify-v1",
}
"""The instructionRef of a phase whose instructions differ by topology (docs/protocol.md §3.7)."""


def next_action(state: RunState) -> PhaseAction | ClarificationAction | TerminalAction:
    """Return the NextAction of ``state``.

    Raises:
        LimitExceeded: the phase's mandatory input closure exceeds 256 references.
        PermissionDenied: the pending work node's permissions exceed the run authorization.
    """
    run = state.run
    if run.terminal:
        report = state.latest("UserReport")
        phase = cast(TerminalPhase, run.status)  # run.terminal: one of the four
        status: TerminalStatus = report.body.terminal_status if report is not None else phase
        return TerminalAction(
            schema_version="1.0",
            id=run.action_id,
            run_id=run.run_id,
            created_at=run.updated_at,
            rationale_summary=(
                _FOLLOW_UP.format(run_id=run.run_id) if _asks_follow_up(state) else _ENDED
            ),
            kind="terminal",
            phase=phase,
            status=status,
            report_ref=None if report is None else report.uri,
        )
    if run.status == "awaiting_clarification":
        request = state.latest("ClarificationRequest")
        assert request is not None, "a paused run always has a ClarificationRequest"
        return ClarificationAction(
            schema_version="1.0",
            id=run.action_id,
            run_id=run.run_id,
            created_at=run.updated_at,
            rationale_summary=_PAUSED,
            kind="clarification",
            phase="awaiting_clarification",
            clarification_request_ref=request.uri,
            effective_permissions=PermissionSet.empty(),
            remaining_budgets=remaining_budgets(state),
        )
    spec = PHASES[run.phase]
    manifest = state.latest("ContextManifest")
    node = pending_node(state) if run.phase == "agent_4_execute" else None
    summary, instructions = spec.summary, instruction_ref(spec.role)
    if run.topology is not None:  # the original's words; a 1.0 run keeps ours
        summary = (
            f"Controller selected {spec.protocol} for {run.topology} topology from immutable "
            "run state."
        )
        instructions = TOPOLOGY_INSTRUCTIONS.get((run.topology, run.phase), instructions)
    return PhaseAction(
        schema_version="1.0",
        id=run.action_id,
        run_id=run.run_id,
        created_at=run.updated_at,
        rationale_summary=summary,
        kind="phase",
        phase=spec.protocol,
        logical_role=spec.role,
        instruction_ref=instructions,
        input_refs=list(input_refs(state, spec)),
        context_manifest_ref=None if manifest is None else manifest.uri,
        required_output_type=spec.primary,  # type: ignore[arg-type]
        required_output_schema=shared_json_schema(spec.primary),
        additional_output_schemas={t: shared_json_schema(t) for t in spec.advertised},
        work_node_id=None if node is None else node.id,
        effective_permissions=effective_permissions(state),
        remaining_budgets=remaining_budgets(state),
        stop_conditions=list(STOP_CONDITIONS),
    )


def effective_permissions(state: RunState) -> PermissionSet:
    """Return the permission ceiling of the current phase.

    Grounding may only read the repository as authorized; execution gets the pending node's
    permissions, which must lie inside the run authorization; every other phase gets nothing.

    Raises:
        PermissionDenied: the pending node's permissions exceed the run authorization.
    """
    phase = state.run.phase
    if phase == "context_grounding":
        read = run_authorization(state).repository.read
        empty = PermissionSet.empty()
        return empty.model_copy(
            update={"repository": RepositoryPermissions(read=list(read), write=[], delete=[])}
        )
    if phase == "agent_4_execute":
        node = pending_node(state)
        if node is None:
            return PermissionSet.empty()
        if not is_subset(node.permissions, run_authorization(state)):
            raise PermissionDenied(
                f"Work node {node.id} permissions exceed the run authorization; "
                "refusing to generate its action"
            )
        return node.permissions
    return PermissionSet.empty()


def remaining_budgets(state: RunState) -> RemainingBudgets:
    """Return what the run has left: revisions, remediations, tool calls, workers and depth."""
    run = state.run
    budgets = state.envelope.budgets
    workers = budgets.maximum_parallel_workers
    depth = budgets.maximum_subagent_depth
    if run.phase == "agent_4_execute" and not run.terminal:
        plan = state.latest("WorkPlan")
        node = pending_node(state)
        if plan is not None:
            workers = min(workers, plan.body.global_budgets.maximum_parallel_workers)
            depth = min(depth, plan.body.global_budgets.maximum_subagent_depth)
        if node is not None:
            depth = min(depth, node.permissions.subagents.maximum_depth)
    return RemainingBudgets(
        prompt_revisions=run.prompt_revisions_remaining,
        post_execution_remediations=run.remediations_remaining,
        remaining_plan_tool_calls=max(0, MAX_PLAN_TOOL_CALLS - reserved_tool_calls(state)),
        maximum_parallel_workers=workers,
        maximum_subagent_depth=depth,
    )
