"""Rule ids the state machine checks itself, before any registered invariant runs.

These decide whether a submission may be judged at all — the concurrency token, the run's
status and phase, the body's identity, the caller's sourceRefs — plus the Evidence service
checks that must run before the schema (the secret scan) or in the phase table. They report
stable rule ids exactly like the ``RULES`` registry, and ``docs/rules.md`` lists both.
"""

from __future__ import annotations

from typing import Final

from telic.controller._check import Gate

GATES: Final[tuple[Gate, ...]] = (
    Gate(
        "RUN-TOKEN-VERSION",
        "§2 optimistic-concurrency tokens",
        "Acting on a stale expected_run_version.",
    ),
    Gate("RUN-TOKEN-ACTION", "§2 optimistic-concurrency tokens", "Acting on a foreign action_id."),
    Gate(
        "RUN-ACTIVE",
        "§3.2",
        "Submitting to a terminal run, or a phase artifact while a clarification is pending.",
    ),
    Gate(
        "RUN-CONTROLLER-OWNED",
        "§2 tool 4",
        "Submitting a controller-owned type (RunEnvelope, ContextManifest, NextAction, "
        "TraceEvent).",
    ),
    Gate(
        "RUN-PHASE-TYPE",
        "§3.2 phase table",
        "Submitting a type the current phase does not accept (skipping or reordering phases).",
    ),
    Gate("ANY-BODY", "§2 tool 4", "A body that is not an object with string id and runId."),
    Gate(
        "ANY-ID-FRESH",
        "§5 immutability",
        "Reusing an artifact id of the run (overwriting an immutable artifact).",
    ),
    Gate(
        "REF-SOURCE-VALID",
        "§3.3 artifact sourceRefs",
        "Caller sourceRefs that repeat, exceed 256 or are not reference URIs.",
    ),
    Gate(
        "REF-SOURCE-LIMIT",
        "§3.3 artifact sourceRefs",
        "More than 256 references once the body's references are merged in.",
    ),
    Gate(
        "CM-DERIVED-REFS",
        "§2 tool 2",
        "A grounded manifest whose derivedRefs differ from its stored ContextDocuments.",
    ),
    Gate(
        "RUN-PRIOR-EXISTS",
        "§2 tool 1 (prior_run_id)",
        "A prior_run_id naming no run of this repository's ledger.",
    ),
    Gate(
        "RUN-PRIOR-ROOT",
        "§2 tool 1 (prior_run_id)",
        "A prior_run_id naming a run of another repository root.",
    ),
    Gate(
        "RUN-PRIOR-TERMINAL",
        "§2 tool 1 (prior_run_id)",
        "A prior_run_id naming a run that has not ended (running or awaiting clarification).",
    ),
    Gate(
        "RUN-PRIOR-INTACT",
        "§2 tool 1 (prior_run_id)",
        "A prior_run_id naming a run whose records or blobs fail verification (telic verify).",
    ),
    Gate(
        "CR-ANSWER-CHOICE",
        "§3.2 clarification",
        "Answering a clarification with anything but exactly one offered choice id.",
    ),
    Gate(
        "EV-EXECUTION-ONLY",
        "§3.1 Evidence (service rules)",
        "Submitting Evidence outside the execution phase.",
    ),
    Gate(
        "ANY-NO-SECRETS",
        "§3.4 Gates the machine checks first",
        "A host-submitted artifact of any type, or its caller sourceRefs, holding a likely "
        "secret in any string (object keys included, base64 decoded up to three layers); "
        "refused with SecretDetected naming the path and kind, never the value.",
    ),
    Gate(
        "RUN-NO-SECRETS",
        "§3.4 Gates the machine checks first",
        "telic_start_run arguments (the request, allowlist, domains, active paths, host name, "
        "repository root) holding a likely secret; refused before anything is written.",
    ),
    Gate(
        "TP-OVERRIDE-MICRO",
        "§3.7 Topologies",
        "telic_start_run asking for topology_override micro for a request that is not a short "
        "report_only question granted at most repository.read, or that shows a forensic signal.",
    ),
    Gate(
        "TP-OVERRIDE-STANDARD",
        "§3.7 Topologies",
        "telic_start_run asking for topology_override standard for a request with a forensic "
        "signal (analyze_and_fix, an elevated grant, network or shell allowlists, a long or "
        "complex request).",
    ),
    Gate(
        "TP-PRE-ESCALATION",
        "§3.7 Topologies",
        "A micro UserReport with a user_reported claim, or a standard ReleaseAudit with a "
        "user_reported claim basis: not stored; the run moves up a topology instead.",
    ),
    Gate(
        "TP-ESCALATION-LIMIT",
        "§3.7 Topologies",
        "An escalation past two per run, down from forensic, or to the topology the run is on.",
    ),
    Gate(
        "EV-NO-SECRETS",
        "§3.1 Evidence; §4 item 10.8",
        "Evidence holding a likely secret in any string, its decoded content or its sourceRefs "
        "(refused with SecretDetected: redact before submission).",
    ),
)
"""Every machine-level rule id, in the order the machine checks them."""
