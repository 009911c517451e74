"""The ``telic_workflow`` prompt: how a host drives a run, as one user message.

The same text, without the request and mode header, ships for hosts as a skill file
(``examples/hosts/telic-workflow.md``); a test keeps the two in step.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["WORKFLOW_INSTRUCTIONS", "workflow_message"]

WORKFLOW_INSTRUCTIONS: Final = """\
Drive this request through Telic, one typed artifact per phase. Telic never calls a model: you \
do the thinking, Telic checks, stores and tells you the single legal next step.

1. Call telic_start_run with the request verbatim and the mode. Report the capabilities this \
host really has in host_capabilities, and put in authorization_granted only what the user \
actually granted.
2. Call telic_ground_context with the action_id and expected_run_version from the returned \
nextAction.
3. For every phase: read the artifacts named in nextAction.inputRefs (telic_get_artifact), \
write exactly one artifact of nextAction.requiredOutputType that matches \
nextAction.requiredOutputSchema, and submit it with telic_submit_artifact using the current \
action_id and expected_run_version. A schema already sent in full in this session comes as \
{"$ref": "telic://schemas/<type>"}: reuse the earlier one or read that resource (an artifact \
refused for its schema gets it back in full in the error).
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
from nested objects.
"""
"""The eight instructions of the workflow, in Telic's words."""


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
