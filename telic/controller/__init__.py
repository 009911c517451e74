"""The Telic controller: a pure typed state machine inside an async shell.

The pure core — ``step(state, submission) -> Accepted | Rejection`` and ``next_action(state)`` —
decides every rule of the protocol without I/O: the §3.2 phase table, the concurrency tokens,
budgets, the analyze_and_fix gate, and the invariant registry ``RULES`` (one small function per
rule, each with a stable id). ``Controller`` is the async shell: it loads a run from a ``Ledger``,
steps it, and commits the result in one version-fenced transaction; a rejection writes nothing.
"""

from telic.controller._check import Check as Check
from telic.controller._check import Gate as Gate
from telic.controller._check import Rule as Rule
from telic.controller._check import Violation as Violation
from telic.controller._closure import MAX_INPUT_REFS as MAX_INPUT_REFS
from telic.controller._closure import input_refs as input_refs
from telic.controller._derive import MAX_RUN_TOOL_CALLS as MAX_RUN_TOOL_CALLS
from telic.controller._derive import is_unlocked as is_unlocked
from telic.controller._derive import pending_node as pending_node
from telic.controller._driver import Controller as Controller
from telic.controller._driver import RunDetails as RunDetails
from telic.controller._driver import StepResult as StepResult
from telic.controller._driver import TraceView as TraceView
from telic.controller._events import Accepted as Accepted
from telic.controller._events import AnswerClarification as AnswerClarification
from telic.controller._events import Cancel as Cancel
from telic.controller._events import Ground as Ground
from telic.controller._events import Rejection as Rejection
from telic.controller._events import Submission as Submission
from telic.controller._events import SubmitArtifact as SubmitArtifact
from telic.controller._events import Token as Token
from telic.controller._events import TraceNote as TraceNote
from telic.controller._machine import step as step
from telic.controller._next import next_action as next_action
from telic.controller._phases import PHASES as PHASES
from telic.controller._phases import PhaseSpec as PhaseSpec
from telic.controller._phases import expected_producer as expected_producer
from telic.controller._rules import GATES as GATES
from telic.controller._rules import RULES as RULES
from telic.controller._rules import all_rule_ids as all_rule_ids
from telic.controller._rules import rule_ids as rule_ids
from telic.controller._scan import refuse_secrets as refuse_secrets
from telic.controller._start import open_run as open_run
from telic.controller._state import Run as Run
from telic.controller._state import RunState as RunState
from telic.controller._state import StoredArtifact as StoredArtifact
from telic.controller._state import TraceEntry as TraceEntry
from telic.controller._tool import tool_layers as tool_layers

__all__ = [
    "GATES",
    "MAX_INPUT_REFS",
    "MAX_RUN_TOOL_CALLS",
    "PHASES",
    "RULES",
    "Accepted",
    "AnswerClarification",
    "Cancel",
    "Check",
    "Controller",
    "Gate",
    "Ground",
    "PhaseSpec",
    "Rejection",
    "Rule",
    "Run",
    "RunDetails",
    "RunState",
    "StepResult",
    "StoredArtifact",
    "Submission",
    "SubmitArtifact",
    "Token",
    "TraceEntry",
    "TraceNote",
    "TraceView",
    "Violation",
    "all_rule_ids",
    "expected_producer",
    "input_refs",
    "is_unlocked",
    "next_action",
    "open_run",
    "pending_node",
    "refuse_secrets",
    "rule_ids",
    "step",
    "tool_layers",
]
