"""The Telic controller: a pure typed state machine inside an async shell.

The pure core — ``step(state, submission) -> Accepted | Rejection`` and ``next_action(state)`` —
decides every rule of the protocol without I/O: the §3.2 phase table, the concurrency tokens,
budgets, the analyze_and_fix gate, and the invariant registry ``RULES`` (one small function per
rule, each with a stable id). ``Controller`` is the async shell: it loads a run from a ``Ledger``,
steps it, and commits the result in one version-fenced transaction; a rejection writes nothing.
"""

from __future__ import annotations

from telic.controller._authority import layers as layers
from telic.controller._check import (
    Check as Check,
    Gate as Gate,
    Rule as Rule,
    Violation as Violation,
)
from telic.controller._closure import MAX_INPUT_REFS as MAX_INPUT_REFS, input_refs as input_refs
from telic.controller._derive import (
    PROMPT_COVERAGE as PROMPT_COVERAGE,
    is_unlocked as is_unlocked,
    pending_node as pending_node,
    selected_refs as selected_refs,
)
from telic.controller._draft import (
    Draft as Draft,
    Fill as Fill,
    draft_for as draft_for,
)
from telic.controller._driver import (
    Action as Action,
    Controller as Controller,
    RunDetails as RunDetails,
    StepResult as StepResult,
    TraceView as TraceView,
)
from telic.controller._events import (
    Accepted as Accepted,
    AnswerClarification as AnswerClarification,
    Cancel as Cancel,
    Ground as Ground,
    Rejection as Rejection,
    Submission as Submission,
    SubmitArtifact as SubmitArtifact,
    Token as Token,
    TraceNote as TraceNote,
)
from telic.controller._gates import GATES as GATES
from telic.controller._machine import step as step
from telic.controller._next import next_action as next_action
from telic.controller._phases import (
    PHASES as PHASES,
    PhaseSpec as PhaseSpec,
    expected_producer as expected_producer,
)
from telic.controller._replay import (
    DigestStatus as DigestStatus,
    ReplayReport as ReplayReport,
    ReplayStep as ReplayStep,
    digest_status as digest_status,
    replay_report as replay_report,
)
from telic.controller._replay_read import (
    read_replay as read_replay,
    run_topology as run_topology,
)
from telic.controller._rules import (
    RULES as RULES,
    all_rule_ids as all_rule_ids,
    rule_ids as rule_ids,
)
from telic.controller._scan import refuse_secrets as refuse_secrets
from telic.controller._start import StartRequest as StartRequest, open_run as open_run
from telic.controller._state import (
    LinkedArtifact as LinkedArtifact,
    RunState as RunState,
    StoredArtifact as StoredArtifact,
    TraceEntry as TraceEntry,
)
from telic.controller._statements import (
    GENERAL as GENERAL,
    ROLE_PREFIX as ROLE_PREFIX,
    STATEMENTS as STATEMENTS,
    UNSTATED as UNSTATED,
    Statement as Statement,
    field_statements as field_statements,
    role_instructions as role_instructions,
    role_of as role_of,
    role_rules as role_rules,
)
from telic.controller._tool import (
    check_broker_token as check_broker_token,
    envelope_ref as envelope_ref,
    tool_layers as tool_layers,
)
from telic.controller._vocabulary import (
    ELICITED_EVENT as ELICITED_EVENT,
    ELICITED_SUMMARY as ELICITED_SUMMARY,
    TERMINAL_STATUSES as TERMINAL_STATUSES,
    event_summary as event_summary,
    human_time as human_time,
    phase_label as phase_label,
    protocol_phase as protocol_phase,
    run_phase as run_phase,
    status_label as status_label,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
