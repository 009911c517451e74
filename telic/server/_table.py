"""The tool table: one row per MCP tool, and everything about the surface derives from it.

A row names the tool, its title, a description a model can act on (what it does, when to call
it, what it returns), its argument and result models (by name: the models need the protocol,
which loads with the service, not at start), its annotations, whether it may notify (progress),
and whether it may append to a run's ledger. ``tools/list`` (with each tool's input and output
schema), argument validation, the quiet HTTP routing (tools that never notify) and the
telemetry's state-change observation all read this table; nothing else lists tools.

Adding a tool: one row here, its argument and result models in ``_args.py`` and
``_results.py``, its handler in ``_tools.py`` calling one service method, ``python -m
telic.server.inputs --write``, and its tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["TOOLS", "ToolSpec", "spec_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """One MCP tool."""

    name: str
    title: str
    description: str
    args: str
    """The argument model's name in ``telic.server._args``."""
    result: str
    """The result model's name in ``telic.server._results`` (the tool's ``outputSchema``)."""
    read_only: bool
    """Never changes any state (no ledger record, no run change)."""
    idempotent: bool = False
    """Repeating the call with the same arguments has no further effect."""
    destructive: bool = False
    """May end or undo something (a run's cancellation)."""
    notifies: bool = False
    """May send notifications (progress) while it runs; the others answer plain JSON."""
    changes_state: bool = False
    """May append to a run's ledger; the run id is then the first argument of its methods."""
    methods: tuple[str, ...] = ()
    """The service methods its handler calls (one per call)."""


TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="telic_start_run",
        title="Start a Telic run",
        description=(
            "Start a run for the user's request. Call once per request, before any other tool: "
            "pass the request verbatim, the intent mode, the capabilities this host really has "
            "and only the authority the user granted (authorization_granted; omitted, the "
            "mode's defaults apply). Returns the run record and its first nextAction "
            "(ground the repository context). report_only reads no repository file; a question "
            "about the code needs analyze_only. Optional topology_override: micro for a short "
            "report_only question that needs no change (frame, spot review, report); forensic "
            "adds an evidence re-verifying review; omitted, the full 1.0 path."
        ),
        args="StartRunArgs",
        result="StepResultOut",
        read_only=False,
        methods=("start_run",),
    ),
    ToolSpec(
        name="telic_ground_context",
        title="Ground repository context",
        description=(
            "Select and store the repository files this run may rely on (deterministic and "
            "bounded; report_only grounds nothing). Call when nextAction.phase is "
            "context_discovery, with its action_id and expected_run_version; active_paths pins "
            "files the request names. Sends progress notifications. Returns the run, the next "
            "action and the context manifest."
        ),
        args="GroundArgs",
        result="GroundResultOut",
        read_only=False,
        notifies=True,
        changes_state=True,
        methods=("ground",),
    ),
    ToolSpec(
        name="telic_get_next_action",
        title="Get the next step",
        description=(
            "Return the run's single legal next step: the phase, the artifact type to write "
            "and its JSON Schema, the input artifacts to read, and the permissions and budgets "
            "in force. Read-only: call it whenever you are unsure what to do next."
        ),
        args="RunArgs",
        result="NextActionResultOut",
        read_only=True,
        idempotent=True,
        methods=("get_next",),
    ),
    ToolSpec(
        name="telic_submit_artifact",
        title="Submit an artifact",
        description=(
            "Submit the artifact nextAction asks for (artifact_type with body, or body_json if "
            "your client drops empty arrays), or answer a pending clarification "
            "(clarification_response), with the current action_id and expected_run_version. "
            "Evidence and ScenarioSpec may be added during their phase without changing the "
            "version. Returns the run and the next action, plus the stored artifact's metadata "
            "for Evidence and ScenarioSpec; a refusal names the failed rules and changes nothing."
        ),
        args="SubmitArgs",
        result="StepResultOut",
        read_only=False,
        changes_state=True,
        methods=("submit_artifact", "answer_clarification"),
    ),
    ToolSpec(
        name="telic_cancel_run",
        title="Cancel a run",
        description=(
            "Cancel a live run when the user asks to stop; it ends with status cancelled and "
            "no report. A finished run is returned unchanged. Returns the run and its terminal "
            "nextAction."
        ),
        args="CancelArgs",
        result="StepResultOut",
        read_only=False,
        destructive=True,
        changes_state=True,
        methods=("cancel_run",),
    ),
    ToolSpec(
        name="telic_list_runs",
        title="List runs",
        description=(
            "List the runs in this repository's ledger, newest first: metadata only, without "
            "request text or bodies. Use it to find a run to resume when the user asks."
        ),
        args="ListRunsArgs",
        result="ListRunsResultOut",
        read_only=True,
        idempotent=True,
        methods=("list_runs",),
    ),
    ToolSpec(
        name="telic_get_run",
        title="Get a run",
        description=(
            "Return a run's record, every artifact's metadata (id, type, producer, digest, "
            "sources) and its next action. Use it to resume a run or to find an artifact id."
        ),
        args="RunArgs",
        result="GetRunResultOut",
        read_only=True,
        idempotent=True,
        methods=("get_run",),
    ),
    ToolSpec(
        name="telic_get_artifact",
        title="Read an artifact",
        description=(
            "Return one artifact of a run, its metadata with its body, after re-verifying its "
            "digest. Use it to read a nextAction's inputRefs: for artifact://<run>/<id> pass "
            "that run id and artifact id."
        ),
        args="GetArtifactArgs",
        result="GetArtifactResultOut",
        read_only=True,
        idempotent=True,
        methods=("get_artifact",),
    ),
    ToolSpec(
        name="telic_get_trace",
        title="Read a run's trace",
        description=(
            "Return a page of the run's canonical trace in sequence order (artifacts recorded, "
            "permission decisions, phase changes), and whether more follow (page with "
            "after_sequence)."
        ),
        args="GetTraceArgs",
        result="GetTraceResultOut",
        read_only=True,
        idempotent=True,
        methods=("get_trace",),
    ),
    ToolSpec(
        name="telic_cast",
        title="Cast a subagent",
        description=(
            "For hosts that start child agents, while nextAction is an executing work node: "
            "open one cast with a routing reason (a need code and why) and a turn and token "
            "budget. Returns the handoff to give the child (cast id, brief, pointers, "
            "permissions, budget; never your transcript). The child must answer with one "
            "evidence packet through telic_return_packet. Refusals carry the packet "
            "contract's code."
        ),
        args="CastArgs",
        result="CastResultOut",
        read_only=False,
        changes_state=True,
        methods=("cast",),
    ),
    ToolSpec(
        name="telic_cast_progress",
        title="Report a child's spend",
        description=(
            "Report a cast child's spend so far: turns, tool calls and tokens, as the host "
            "counts them (Telic cannot observe them, so they are recorded as self-reported). "
            "Returns the cast's state; past a cap the child may only return a typed partial."
        ),
        args="CastProgressArgs",
        result="CastProgressResultOut",
        read_only=False,
        changes_state=True,
        methods=("cast_progress",),
    ),
    ToolSpec(
        name="telic_return_packet",
        title="Return a child's evidence packet",
        description=(
            "Return the evidence packet a cast child produced. Telic checks its bounds, "
            "verifies its quotes against the ledger and seals it. Returns the sealed packet "
            "with its pk_... token: cite that token in your next phase artifact."
        ),
        args="ReturnPacketArgs",
        result="ReturnPacketResultOut",
        read_only=False,
        changes_state=True,
        methods=("return_packet",),
    ),
    ToolSpec(
        name="telic_get_digest",
        title="Read the packet digest",
        description=(
            "Return the run's packet-consumption digest: one line per evidence packet with "
            "its verdict and its spend in the packet contract's line format, and beside each "
            "line its marks: whether the parent's next decision cited it, that the tokens are "
            "self-reported, and what Telic observed the child spend."
        ),
        args="RunArgs",
        result="DigestResultOut",
        read_only=True,
        idempotent=True,
        methods=("get_digest_view",),
    ),
    ToolSpec(
        name="telic_check_tool_action",
        title="Check a native tool action",
        description=(
            "Before each native action (a serial host asks itself; a hook asks for it): decide "
            "whether the capability may act on the target under the run's permissions now "
            "(mode, authorization, work node). "
            "Returns the decision (allow or deny, with the deciding reason) and records it in "
            "the run's trace. A host written for the original Telic may also pass action_id "
            "and expected_run_version (then target is optional)."
        ),
        args="CheckToolActionArgs",
        result="CheckResultOut",
        read_only=False,
        idempotent=True,  # an identical decision is recorded once
        changes_state=True,
        methods=("broker_check",),
    ),
    ToolSpec(
        name="telic_replay_run",
        title="Replay a run",
        description=(
            "Replay a run step by step: one step per stored artifact, in trace order, with the "
            "phase that produced it and whether it still matches its digest (ok, mismatch, "
            "missing); highlights name topology escalations and denied tool-action checks. "
            "Read-only. Returns the report (and the run's hash-chain walk)."
        ),
        args="RunArgs",
        result="ReplayResultOut",
        read_only=True,
        idempotent=True,
        methods=("replay_run",),
    ),
    ToolSpec(
        name="telic_verify_run",
        title="Verify a run's hash chain",
        description=(
            "Re-hash every artifact and trace record of a run and walk its hash chain. Returns "
            "whether the run is intact, how many records were checked and the first broken one."
        ),
        args="RunArgs",
        result="VerifyResultOut",
        read_only=True,
        idempotent=True,
        methods=("verify_run",),
    ),
)
"""Every tool, in listing order."""

_BY_NAME: Final = {spec.name: spec for spec in TOOLS}


def spec_of(name: str) -> ToolSpec | None:
    """The row of the tool called ``name``, or None."""
    return _BY_NAME.get(name)
