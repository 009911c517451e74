"""``telic hook claude-code``: decide a native tool call from the ledger, in-process, fail closed.

Claude Code runs the command before each matching tool call, in a fresh process, with the
PreToolUse event on stdin. The command:

1. finds the ledger exactly as ``telic serve`` does for the repository (``--repository-root``,
   else ``$TELIC_REPOSITORY_ROOT``, else the event's ``cwd``), reading it with the standard
   library's ``sqlite3`` through the ledger's own synchronous SQL (``telic.ledger._sqlite_sync``);
2. takes the repository's live runs (status running or awaiting clarification). None: it prints
   nothing and exits 0, so the host proceeds as if no hook were set;
3. picks the run this session drives: the run id the session last passed to one of Telic's own
   MCP tools (this hook sees those calls too and records the binding), else the repository's
   only live run. Several live runs and no binding: deny, naming them;
4. maps the tool to a capability and target (``_claude_code.classify``) and decides with
   ``telic.permissions.authorize_action`` over the run's three layers
   (``telic.controller.tool_layers``, through the snapshot of ``_layers``) and the run's
   explicit protected-path grants, the very decision ``telic_check_tool_action`` makes;
5. appends the decision to the run's trace as a ``permission_checked`` event through the
   ledger's pure plan (``plan_events``) and transaction, so the hash chain stays valid;
6. answers in Claude Code's JSON (allow or deny, with the reason the model sees).

While a run is live, anything that prevents a decision — unreadable input, an unknown tool, a
ledger error, a crash — is a deny with its reason: the hook fails closed. A ``PostToolUse``
event for one of Telic's tools refreshes the layer snapshot (after a step the phase has
moved) and never blocks. Only SQLite ledgers have this path; for any other ledger URL the
command loads the run through the async ledger on every call (slower, same decision).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, NamedTuple
from urllib.parse import urlsplit

from telic._secrets import is_secret_like_path
from telic.hosts._claude_code import (
    HookInput,
    HookInputError,
    Mapped,
    answer,
    classify,
    parse_input,
)
from telic.hosts._layers import (
    SESSIONS_DIR,
    Authority,
    Key,
    compute_layers,
    read_layers,
    write_layers,
)
from telic.ledger import Limits, NewTraceEvent, resolve_url, sqlite_paths, utc_now
from telic.ledger._plans import fix_events, plan_events, probe_for
from telic.ledger._sqlite_sync import connect, transaction
from telic.permissions import Decision, authorize_action, protected_pattern

__all__ = [
    "READS_CLOSE_AT",
    "LiveRun",
    "claude_code_hook",
    "reopens_read",
    "select_run",
    "uuid4_text",
]

REPOSITORY_ROOT_ENV: Final = "TELIC_REPOSITORY_ROOT"
_LIVE: Final = ("running", "awaiting_clarification")
_LIVE_RUNS: Final = (
    "SELECT run_id, requested_mode, phase, version, artifact_count, "
    "prompt_revisions_remaining, remediations_remaining FROM runs "
    "WHERE repository_root = ? AND status IN (?, ?) ORDER BY updated_at DESC, run_id"
)
_RUN_KEY: Final = "SELECT version, artifact_count FROM runs WHERE run_id = ?"

READS_CLOSE_AT: Final = frozenset({"agent_5_audit", "agent_5_report"})
"""The phases in which a native read is decided by the phase layer again: the release audit
judges what the run did, and the report only tells it, so neither needs to look further."""


def reopens_read(phase: str, decision: Decision) -> bool:
    """Whether a native read the phase layer alone refused is decided again without that layer.

    A host reads before it frames, plans or reviews (a planner looks at the file it will plan a
    change to), and the phases before execution grant no ``repository.read`` of their own. So in
    every phase before the audit (``READS_CLOSE_AT``) a read that only the phase layer refused
    is decided by the mode and the run authorization, the user's grant. Protected paths and
    secret-like paths (``is_secret_like_path``) are left to the phase layer: widening never
    reaches them. Pure.
    """
    return (
        decision.capability == "repository.read"
        and not decision.allowed
        and decision.deciding_layer == "phase"
        and phase not in READS_CLOSE_AT
        and decision.scope is not None
        and protected_pattern(decision.scope) is None
        and not is_secret_like_path(decision.scope)
    )


class LiveRun(NamedTuple):
    """A live run of the repository, as its ledger row says."""

    run_id: str
    mode: str
    phase: str
    version: int
    artifact_count: int
    prompt_revisions: int
    remediations: int


def uuid4_text(random: bytes) -> str:
    """Return the text of the version 4 UUID made of 16 random bytes, as ``str(uuid.uuid4())``.

    The ``uuid`` module imports ``platform`` on load, which a fresh process per tool call would
    pay for one identifier.
    """
    if len(random) != 16:
        raise ValueError("uuid4_text: a UUID is made of exactly 16 bytes")
    raw = bytearray(random)
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class _Refused(Exception):
    """A deny decided before any layer was asked (its message is the reason)."""


def _root(repository_root: str | None, environ: Mapping[str, str], cwd: str | None) -> str:
    chosen = repository_root or environ.get(REPOSITORY_ROOT_ENV) or cwd or os.getcwd()
    return str(Path(chosen).resolve())


def _session_path(state_dir: Path, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return state_dir / SESSIONS_DIR / name


def _bound(state_dir: Path, session_id: str | None) -> str | None:
    if session_id is None:
        return None
    try:
        return _session_path(state_dir, session_id).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _bind(state_dir: Path, session_id: str | None, run_id: str) -> None:
    if session_id is None:
        return
    path = _session_path(state_dir, session_id)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(run_id, encoding="utf-8")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def select_run(live: Sequence[LiveRun], bound: str | None) -> LiveRun | str:
    """Return the run a session drives, or the reason none can be chosen.

    The rule: the live run the session last named to a Telic tool; else the repository's only
    live run; else (several, none named) no choice — a deny, since deciding against the wrong
    run's permissions is worse than asking the model to say which run it drives.
    """
    for run in live:
        if run.run_id == bound:
            return run
    if len(live) == 1:
        return live[0]
    names = ", ".join(run.run_id for run in live[:5])
    return (
        f"this repository has {len(live)} live Telic runs ({names}) and this session has not "
        "named one yet: call a Telic tool with the run_id you drive (telic_get_run), or cancel "
        "the runs you abandoned (telic_cancel_run)"
    )


def _live_runs(connection: sqlite3.Connection, root: str) -> list[LiveRun]:
    rows = connection.execute(_LIVE_RUNS, (root, *_LIVE)).fetchall()
    return [LiveRun(*row) for row in rows]


def _event(run: LiveRun, decision: Decision | None, capability: str, reason: str) -> NewTraceEvent:
    """The trace event ``telic_check_tool_action`` records for the same decision."""
    known = decision is not None and decision.code != "unknown_capability"
    permission = None
    if known and decision is not None:
        permission = {
            "decision": decision.verdict,
            "capability": capability,
            "scope": (decision.scope or capability)[:2048],
            "policyRefs": [],
            "rationaleSummary": decision.reason[:4096],
        }
    return NewTraceEvent(
        actor="host",
        phase=run.phase,
        event_type="permission_checked" if known else "tool_action_refused",
        permission_decision=permission,
        decision_summary=reason[:800],
        budget_snapshot={
            "promptRevisions": run.prompt_revisions,
            "postExecutionRemediations": run.remediations,
            "transportRetries": 0,
        },
        event_id=uuid4_text(os.urandom(16)),
        timestamp=utc_now(),
    )


def _record(connection: sqlite3.Connection, run_id: str, event: NewTraceEvent) -> None:
    limits = Limits()
    fixed = fix_events([event], utc_now)
    probe = probe_for([], fixed, limits)
    transaction(connection, run_id, probe, lambda probed: plan_events(probed, fixed, limits))


def _key(connection: sqlite3.Connection, run_id: str) -> Key | None:
    row = connection.execute(_RUN_KEY, (run_id,)).fetchone()
    return None if row is None else Key(run_id, int(row[0]), int(row[1]))


def _layers(
    connection: sqlite3.Connection, state_dir: Path, url: str, root: str, run: LiveRun
) -> Authority:
    before = Key(run.run_id, run.version, run.artifact_count)
    stored = read_layers(state_dir, before)
    if stored is not None:
        return stored
    authority = compute_layers(url, root, run.run_id)
    if _key(connection, run.run_id) == before:  # nothing moved while computing: keep them
        # A snapshot that cannot be stored costs the next call time, not this decision.
        with contextlib.suppress(OSError):
            write_layers(state_dir, before, authority)
    return authority


def _refresh(connection: sqlite3.Connection, state_dir: Path, url: str, root: str) -> None:
    """After a Telic tool ran: store the layers of every live run whose snapshot is stale."""
    for run in _live_runs(connection, root):
        _layers(connection, state_dir, url, root, run)


def _telic_tool(state_dir: Path, event: HookInput, live: Sequence[LiveRun]) -> str:
    run_id = event.tool_input.get("run_id")
    if isinstance(run_id, str) and any(run.run_id == run_id for run in live):
        _bind(state_dir, event.session_id, run_id)
    return answer("allow", "Telic checks its own tools itself.")


_PATH_CAPABILITIES: Final = frozenset({"repository.read", "repository.write", "repository.delete"})
# Their targets are the repository's own file names, which the ledger already holds (the
# grounding manifest); a command, a URL or a query is what the host types, and may hold a token.


def _shown(capability: str, target: str) -> str:
    """``target`` as the trace and the reason may hold it: redacted as the tool redacts it.

    A repository path is not scanned, and what the host typed is scanned only when the
    detector's cheap pre-filter cannot clear it (``cannot_hold_secret``: no anchor, keyword or
    decodable base64 run): loading the detector would cost every Read, Edit, Write and
    ordinary Bash command a few hundred milliseconds in a fresh process.
    """
    if capability in _PATH_CAPABILITIES:
        return target
    from telic._secrets import cannot_hold_secret

    if cannot_hold_secret(target):
        return target
    from telic._secrets import redact  # detect-secrets loads only for what may hold a secret

    return redact(target)


def _redacted(decision: Decision, capability: str) -> Decision:
    """``decision`` with its scope redacted, so neither the ledger nor the reason holds a secret.

    ``telic_check_tool_action`` redacts the scope it traces in the same way; the host's command
    or URL stays readable around the marker, so the decision is still auditable.
    """
    if decision.scope is None:
        return decision
    scope = _shown(capability, decision.scope)
    return decision if scope == decision.scope else dataclasses.replace(decision, scope=scope)


def _decide(
    connection: sqlite3.Connection,
    state_dir: Path,
    url: str,
    root: str,
    run: LiveRun,
    event: HookInput,
    mapped: Mapped | None,
) -> str:
    where = f"Telic run {run.run_id} ({run.mode}, {run.phase})"
    if mapped is None:
        reason = (
            f"{where}: Telic cannot map the tool {event.tool_name} to a capability, so it may "
            "not run while the run is live"
        )
        _record(connection, run.run_id, _event(run, None, "unmapped", reason))
        return answer("deny", reason)
    authority = _layers(connection, state_dir, url, root, run)
    decision = authorize_action(
        mapped.capability,  # type: ignore[arg-type]  # unknown ones are refused by the decision
        mapped.target,
        authority.layers,
        repository_root=root,
        protected_granted=authority.protected_granted,
    )
    reopened = reopens_read(run.phase, decision)
    if reopened:
        decision = authorize_action(
            "repository.read",
            mapped.target,
            authority.layers[:2],  # the mode and the run authorization: the user's grant
            repository_root=root,
            protected_granted=authority.protected_granted,
        )
    decision = _redacted(decision, mapped.capability)
    target = decision.scope or _shown(mapped.capability, mapped.target or "") or "(no target)"
    what = f"{mapped.capability} on {target}"
    if decision.allowed and reopened:
        reason = (
            f"{where}: {what} is {decision.reason} (native reads inside the run's grant are "
            "open in every phase before the audit)"
        )
    elif decision.allowed:
        reason = f"{where}: {what} is {decision.reason}"
    else:
        layer = decision.deciding_layer or "target"
        reason = f"{where} denies {what}: {decision.reason} (layer: {layer}; {decision.code})"
    summary = f"Claude Code {event.tool_name}: {reason}"
    _record(connection, run.run_id, _event(run, decision, mapped.capability, summary))
    return answer(decision.verdict, reason)


def claude_code_hook(
    raw: bytes, *, repository_root: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Decide one Claude Code hook event; return the stdout answer (``None``: say nothing).

    Never raises for a decision: while a run is live, every failure becomes a deny.
    """
    env = os.environ if environ is None else environ
    try:
        event: HookInput | None = parse_input(raw)
        problem = ""
    except HookInputError as exc:
        event, problem = None, str(exc)
    root = _root(repository_root, env, event.cwd if event else None)
    try:
        url = resolve_url(None, root, env)
        if urlsplit(url).scheme != "sqlite":
            return _other_ledger(url, root, event, problem)
        state_dir, db_path = sqlite_paths(url)
        if not db_path.is_file():
            return None  # no ledger yet, so no live run
        connection = connect(db_path)
    except Exception as exc:  # the hook boundary: cannot tell whether a run is live
        return answer("deny", f"Telic could not read its ledger for {root}: {_say(exc)}")
    try:
        return _with_ledger(connection, state_dir, url, root, event, problem)
    finally:
        connection.close()


def _with_ledger(
    connection: sqlite3.Connection,
    state_dir: Path,
    url: str,
    root: str,
    event: HookInput | None,
    problem: str,
) -> str | None:
    try:
        live = _live_runs(connection, root)
    except Exception as exc:  # cannot tell whether a run is live: fail closed
        return answer("deny", f"Telic could not read the runs of {root}: {_say(exc)}")
    if not live:
        return None
    try:
        if event is None:
            raise _Refused(f"{problem}; denying while a Telic run is live")
        if event.event == "PostToolUse":
            if event.tool_name.startswith("mcp__telic__"):
                _refresh(connection, state_dir, url, root)
            return None
        mapped = classify(event.tool_name, event.tool_input)
        if mapped == "telic":
            return _telic_tool(state_dir, event, live)
        chosen = select_run(live, _bound(state_dir, event.session_id))
        if isinstance(chosen, str):
            raise _Refused(chosen)
        return _decide(connection, state_dir, url, root, chosen, event, mapped)
    except _Refused as refused:
        return answer("deny", f"Telic denies this tool call: {refused}")
    except Exception as exc:  # the hook boundary: a live run and no decision is a deny
        return answer(
            "deny", f"Telic could not decide this tool call, so it is denied: {_say(exc)}"
        )


def _other_ledger(url: str, root: str, event: HookInput | None, problem: str) -> str | None:
    """A PostgreSQL (or memory) ledger: the same decision through the async ledger, slower."""
    try:
        return _through_service(url, root, event, problem)
    except Exception as exc:  # the hook boundary
        return answer(
            "deny", f"Telic could not decide this tool call, so it is denied: {_say(exc)}"
        )


def _through_service(url: str, root: str, event: HookInput | None, problem: str) -> str | None:
    import anyio

    from telic.controller import Controller, tool_layers
    from telic.ledger import open_ledger

    async def decide() -> str | None:
        async with open_ledger(url, repository_root=root) as ledger:
            summaries = await ledger.list_runs(100)
            records = [await ledger.get_run(s.run_id) for s in summaries if s.status in _LIVE]
            live = [r for r in records if r.repository_root == root]
            if not live:
                return None
            if event is None:
                return answer("deny", f"Telic denies this tool call: {problem}")
            if event.event == "PostToolUse":
                return None
            mapped = classify(event.tool_name, event.tool_input)
            if mapped == "telic":
                return answer("allow", "Telic checks its own tools itself.")
            if mapped is None:
                return answer("deny", f"Telic cannot map the tool {event.tool_name}")
            if len(live) != 1:
                return answer("deny", "several live Telic runs; bindings need an SQLite ledger")
            state = await Controller(ledger).load(live[0].run_id)
            layers = tool_layers(state)
            granted = state.envelope.authorization.protected_paths_granted
            decision = authorize_action(
                mapped.capability,  # type: ignore[arg-type]
                mapped.target,
                layers,
                repository_root=root,
                protected_granted=granted,
            )
            if reopens_read(state.run.phase, decision):
                decision = authorize_action(
                    "repository.read",
                    mapped.target,
                    layers[:2],
                    repository_root=root,
                    protected_granted=granted,
                )
            run = LiveRun(
                state.run.run_id,
                state.run.mode,
                state.run.phase,
                state.run.version,
                0,
                state.run.prompt_revisions_remaining,
                state.run.remediations_remaining,
            )
            decision = _redacted(decision, mapped.capability)
            reason = f"Telic run {run.run_id}: {decision.reason} ({decision.code})"
            await ledger.record_events(
                run.run_id, [_event(run, decision, mapped.capability, reason)]
            )
            return answer(decision.verdict, reason)

    return anyio.run(decide)


def _say(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
