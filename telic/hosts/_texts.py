"""The words a host kit teaches: the workflow skill (the ``telic_workflow`` prompt's own
instructions) and the cast subagent's contract, "return one evidence packet"."""

from __future__ import annotations

from typing import Final

from telic.server import WORKFLOW_INSTRUCTIONS

SKILL_DESCRIPTION: Final = (
    "Drive a coding request through the Telic MCP server, one typed artifact per phase; "
    "as a serial host or by casting subagents that return evidence packets."
)

SKILL_TEXT: Final = f"""\
# Telic workflow

Use this whenever the user asks for work to be done through Telic, or when the Telic MCP server
is configured for this repository. It is the text of the server's `telic_workflow` prompt
(which puts the request and the mode in front of it).

{WORKFLOW_INSTRUCTIONS}"""

AGENT_TEXT: Final = """\
# Telic cast

You are a child cast by a parent that drives a Telic run. You start with a fresh context: your
whole input is the handoff the parent passes you, a brief and pointers (`repo://path` and
`artifact://run/id` references, `pk_` ids of earlier packets). There is no transcript to
recover and you need none.

Your contract is to return one evidence packet.

1. Read only what the pointers name (and what they lead to inside the repository), with Read,
   Grep and Glob. Change nothing; run nothing.
2. Answer the brief's one question with one falsifiable claim.
3. Back it with at most 12 evidence lines. Each quote is copied byte for byte from the source
   it names: Telic checks every quote against the repository and the ledger, and a packet is
   verified only when all of them match.
4. Stay inside the budget the handoff states (turns and tokens); stop early rather than exceed.

Reply with exactly one JSON object, no prose around it and no code fence:

{"claim": "one statement, at most 280 characters",
 "evidence": [{"kind": "file_state", "source": "repo://src/pagination.py",
               "locator": "line 22", "quote": "start = page * per_page"}],
 "completed": [0],
 "remaining": []}

`kind` is one of observation, measurement, failure, file_state, test_result, citation.
`completed` lists the indices of the evidence lines that are finished work; `remaining` lists
what you could not do (only when your answer is partial). If the parent sends you back with a
repair code, fix exactly that and reply with the whole object again.
"""
