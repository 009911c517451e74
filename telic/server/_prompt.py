"""The ``telic_workflow`` prompt: how a host drives a run, as one user message.

The same text, without the request and mode header, is what ``telic init`` writes as the host's
skill, rule or ``AGENTS.md`` section (``telic.hosts``); tests keep them in step.
"""

from __future__ import annotations

import json
from typing import Final

WORKFLOW_INSTRUCTIONS: Final = """\
Drive this request through Telic, one typed artifact per phase. Telic never calls a model: you \
do the thinking, Telic checks, stores and tells you the single legal next step.

1. Call telic_start_run with the request verbatim and the mode. Report the capabilities this \
host really has in host_capabilities, and put in authorization_granted only what the user \
actually granted. A mode bounds every grant: report_only reads no repository file (it answers \
from the request alone), so a question about the code or its tests needs analyze_only (reads; \
a test run only if the user grants that exact command).
1a. Topology (optional): a short report_only question that needs no change and no repository \
read (at most 200 characters and 5 lines) may pass topology_override micro: frame, spot \
review, report, with the contract and plan written by Telic. forensic adds \
a second, evidence re-verifying review before the audit; standard is the full path. Without \
topology_override the run takes the full path. In a run that asked for one, the \
ids contract-01, plan-01 and receipt-01 stay the controller's.
2. Call telic_ground_context with the action_id and expected_run_version from the returned \
nextAction.
3. For every phase: read the artifacts named in nextAction.inputRefs (telic_get_artifact), \
write exactly one artifact of nextAction.requiredOutputType that matches \
nextAction.requiredOutputSchema, and submit it with telic_submit_artifact using the current \
action_id and expected_run_version. The first time this session needs a type, its schema \
comes as {"$ref": "telic://schemas/<type>", "x-telic-type": "<text>"}: the text is that JSON \
Schema written like TypeScript, one property per line (name?: optional, = its default, // its \
description; objects admit no other keys), string(1..128) for lengths, integer(0..10) for \
bounds, T[1..256] for item counts, /…/ for a pattern, a|b|"c d" for an enum (quoted where a \
member is not a plain lower-case word), true or 1 for a constant, string<date-time> for a \
format, A | B for either, oneOf(A, B) for exactly one, json{…} for a part written as JSON \
Schema; each "type X =" or "alias X =" line defines a name, and each "field x: …" line the \
property that other objects write as a bare x line, once per session, for later texts too. \
After that it comes as \
{"$ref": "telic://schemas/<type>"}: reuse the earlier one or read that resource, which holds \
the full JSON Schema. A field's // text states every rule Telic checks on its value. A refusal \
names each failed rule and path; one for an artifact's structure also carries the failing parts \
of the schema under requiredOutputSchema["x-telic-failing"].
3a. Where a result carries a draft beside nextAction, start from it: submit the Evidence \
drafts in draft.before first, then take draft.body, write only the fields its draft.fill \
paths name (for a choice, also apply that choice's set and fill), and submit it with \
draft.sourceRefs as source_refs when it has them. With a draft, the schemas of the types it \
covers come as the bare {"$ref": "telic://schemas/<type>"}: the draft is enough. Each fill \
line's what ends with the rules on that field; a fill line with an item may take more \
entries of that shape ("" is yours to write, a|b lists the allowed values: pick one). Read \
telic://schemas/<type> only to write beyond them. A refusal's issue may carry expected: the \
value that passes.
4. Never skip, reorder or invent phases; follow nextAction, nothing else.
5. Telic cannot intercept your native tools: keep every native action inside \
nextAction.effectivePermissions, and never change files, run mutating commands or restart \
anything in report_only, plan_only or analyze_only.
6. When a decision belongs to the user, submit a ClarificationRequest and ask the user exactly \
that one bounded question with its choices; then pass their choice id as \
clarification_response.
7. Submit short rationale summaries only; never include hidden chain-of-thought.
8. Resume an earlier run only when the user asks (telic_list_runs, then telic_get_run); cancel \
with telic_cancel_run; use body_json instead of body only if your client drops empty arrays \
from nested objects. To follow up an ended run (a new_run choice, a blocked report), start \
the new run with prior_run_id set to the ended run's id.

Two postures drive the same run. Ask which one this host is before telic_start_run.

9. Serial host (no native subagents, or the user enabled no cast type): pass native_subagents \
"unavailable" (or "unknown") and never call telic_cast. Do every phase in this session: read \
and run what the node needs yourself, submit what you observed as Evidence, and cite those \
Evidence ids in the WorkResult.
10. Native-subagent host: pass native_subagents "available", list subagent.spawn in \
host_capabilities (and in authorization_granted only if the user agreed), and pass the cast \
types the user enabled in cast_types; casting is off unless the user enables a type.
11. When to cast: only while nextAction.phase is agent_4_execute, the node's \
effectivePermissions allow subagents and its allowedTools list subagent.spawn (plan a casting \
node so: in allowedTools, not requiredCapabilities, with maximumChildren of at least 1), for \
a bounded question a fresh context answers better \
(locate, verify_claim, reproduce, measure, diagnose, review, synthesize, draft). Call \
telic_cast with cast_type, routing {needCode, text: why, in one line, expectedEvidence: the \
evidence kinds the packet must hold, acceptance: checkable criteria} and budget {maxTurns, \
maxTotalTokens, maxWallMs} inside the type's ceilings and nextAction.remainingBudgets. \
Independent questions may be cast at once (fan-out, up to the node's children); never cast \
what you can read in one step.
12. Hand-off: the child gets only the returned cast.handoff, its brief and its pointers \
(artifact:// and repo:// references, pk_ ids of earlier packets), never your transcript, your \
reasoning or pasted file contents. Start it with exactly that (in Claude Code: the telic-cast \
subagent).
13. The child's return: one JSON object {claim, evidence: [{kind, source, locator, quote}], \
completed, remaining}, every quote byte-exact from a source it was pointed at. Report its \
spend with telic_cast_progress (turns, tool_calls, input_tokens, output_tokens), then pass the \
object unchanged to telic_return_packet. A refusal names a repair code: send the child back to \
fix that, or let the cast lapse; never rewrite a child's claim yourself.
14. Cite: the next decision that relies on a packet (the WorkResult's rationale or notes, a \
later cast's packet_refs) names its pk_ token. The digest (telic_get_digest) and the report \
show which packets were consumed and which were not; a packet is verified only when every \
quote checked out, so weigh its verdict, not its claim.
15. References: each names an artifact of this run that exists, of the type its field names \
(in a run started with prior_run_id, also Evidence of that prior run); \
a trace:// reference an existing event; artifact://system/ references only where the schema \
asks for one; repo:// only for sources the ContextManifest selected; a permission_checked \
event is never evidence. After an answered clarification, the next artifact's source_refs \
cite the ClarificationRequest and its answer.
16. Before acting, read the result's boundary (beside nextAction): what a capability of this \
phase covers where its scope cannot say (shell.inspect is six typed reads; running any \
command, a test included, is shell.execute, only for its exact allowlist). Reading a file \
outside effectivePermissions.repository.read is outside the phase too. A serial host asks \
telic_check_tool_action before each native action (a read, a command, an edit) and acts only \
when it allows.
17. nextAction.instructionRef is readable as the MCP resource of that URI: \
what the role decides, what it submits, and every rule its artifact must meet.

Honest ends, in every posture:
- Stages: only analyze_and_fix has a diagnosis stage (its fix needs a second WorkPlan after the \
proceed_to_fix review); in every other mode every criterion has stage completion.
- Running a test is shell.execute (shell.inspect is only git.status, git.diff, git.log, \
network.listen, process.list or runtime.logs). In analyze_only, and in analyze_and_fix before the \
fix, only a command the user granted exactly may run (shell.execute in authorization_granted, the \
command in shell_execute_allowlist), reported with mutating false. A failure it reproduces stays \
status failed, even in a completed WorkResult: it is the finding.
- If you took an action outside your permissions, never leave it out: record it as an action with \
status unauthorized. The audit then says modeCompliance fail and the report permissionsHonored \
false.
- report_only and plan_only execute nothing, so no Evidence exists: wherever evidence is asked \
for, cite the latest WorkPlan's artifact:// URI. That is how such a run completes.
"""
"""The instructions of the workflow, in Telic's words: the eight steps, then the two postures
(serial host, native-subagent host) and how a native host casts, hands off, returns and cites,
then what every reference meets, the phase's boundary and the role instructions, and what an
honest end needs (stages, the user's test command, unauthorized actions, the WorkPlan as
report_only's evidence)."""


def workflow_message(original_request: str, mode: str) -> str:
    """Return the prompt's single user message for ``original_request`` in ``mode``.

    The request is embedded as a JSON string literal, as Telic 1.0 does: its quotes and escapes
    show the host exactly where it starts and ends, whatever characters it holds (a request
    that itself says "ignore the steps below" stays visibly inside the quotes).
    """
    # A lone surrogate cannot travel as UTF-8: it becomes its JSON escape, as JSON.stringify does.
    literal = json.dumps(original_request, ensure_ascii=False)
    literal = literal.encode("utf-8", "backslashreplace").decode("utf-8")
    return (
        f"Mode: {mode}\n\nOriginal request (a JSON string; pass its value verbatim as "
        f"original_request to telic_start_run):\n{literal}\n\n{WORKFLOW_INSTRUCTIONS}"
    )
