"""``telic hook <host>``: decide a native tool call from the ledger, in-process, fail closed.

The host runs the command before each matching tool call, in a fresh process, with its event on
stdin. The command finds the ledger as ``telic serve`` does (an SQLite one read through the
standard library's ``sqlite3``, ``DirectLedger``; any other through the async ledger on a private
event loop, ``PortalLedger``), picks the live run this session drives (``select_run``), maps the
tool through the host's dialect (``_dialects``), decides with
``telic.permissions.authorize_action`` over the run's layers (``_layers``) and protected-path
grants — the decision ``telic_check_tool_action`` makes — traces it as a ``permission_checked``
event and answers in the host's format. docs/hosts.md ("What it decides, in order") gives the
rules step by step.

With no live run it says nothing. While a run is live, anything that prevents a decision —
unreadable input, an unknown tool, a ledger error, a crash — is a deny with its reason: the hook
fails closed. Session bindings, layer snapshots and cast scopes are files in the state directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from telic.hosts._children import (
    CastFacts,
    Decided,
    child_call,
    child_start,
    child_stop,
    read_cast_facts,
    spawn_handoff,
)
from telic.hosts._dialects import (
    DIALECTS,
    Call,
    Dialect,
    HookInputError,
    Mapped,
    Verdict,
    read_event,
)
from telic.hosts._layers import (
    SESSIONS_DIR,
    Authority,
    Key,
    Store,
    compute_layers,
    read_layers,
    state_file,
    write_layers,
    write_private,
)
from telic.ledger import (
    JSON,
    REPOSITORY_ROOT_ENV,
    STATE_DIR_ENV,
    BlockingLedger,
    DirectLedger,
    LiveRun,
    NewTraceEvent,
    budget_snapshot,
    default_state_dir,
    resolve_url,
    sqlite_paths,
    utc_now,
)
from telic.permissions import (
    Decision,
    Layer,
    authorize_action,
    permission_record,
    reopens_read,
)


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


def _root(repository_root: str | None, environ: Mapping[str, str], cwd: str | None) -> str:
    chosen = repository_root or environ.get(REPOSITORY_ROOT_ENV) or cwd or os.getcwd()
    return str(Path(chosen).resolve())


def _bound(state_dir: Path, session_id: str | None) -> str | None:
    if session_id is None:
        return None
    path = state_file(state_dir, SESSIONS_DIR, session_id, "")
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _bind(state_dir: Path, session_id: str | None, run_id: str) -> None:
    if session_id is None:
        return
    write_private(state_file(state_dir, SESSIONS_DIR, session_id, ""), run_id)


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


def _event(run: LiveRun, decision: Decision, capability: str, summary: str) -> NewTraceEvent:
    """The trace event ``telic_check_tool_action`` records for the same decision."""
    if decision.code == "unknown_capability":
        return _host_event(run, "tool_action_refused", summary)
    return _checked(
        run, summary, Verdict(decision.verdict, decision.reason), capability, decision.scope
    )


def _checked(
    run: LiveRun, summary: str, verdict: Verdict, capability: str, scope: str | None
) -> NewTraceEvent:
    """The ``permission_checked`` event of one decision (a scope falls back to the capability)."""
    permission = permission_record(verdict.decision, capability, scope, verdict.reason)
    return _host_event(run, "permission_checked", summary, permission)


def _layers(store: Store, run: LiveRun) -> Authority:
    before = Key(run.run_id, run.version, run.artifact_count)
    stored = read_layers(store.state_dir, before)
    if stored is not None:
        return stored
    authority = compute_layers(store, run.run_id)
    if store.ledger.run_key(run.run_id) == (run.version, run.artifact_count):  # nothing moved
        # A snapshot that cannot be stored costs the next call time, not this decision.
        with contextlib.suppress(OSError):
            write_layers(store.state_dir, before, authority)
    return authority


TELIC_CHECKS: Final = Verdict("allow", "Telic checks its own tools itself.")


def _pre_allowed(call: Call | None) -> Verdict | None:
    """With no live run: nothing, except an allow when the host asks its user before one of
    Telic's own tools (Codex's ``PermissionRequest``), which is what Claude Code's kit gets from
    ``permissions.allow: ["mcp__telic"]`` — so ``telic_start_run`` runs in every approval mode."""
    if call is not None and call.asks == "telic" and call.reply == "PermissionRequest":
        return TELIC_CHECKS
    return None


def _telic_tool(state_dir: Path, call: Call, live: Sequence[LiveRun]) -> Verdict:
    if call.run_id is not None and any(run.run_id == call.run_id for run in live):
        _bind(state_dir, call.session_id, call.run_id)
    return TELIC_CHECKS


_PATH_CAPABILITIES: Final = frozenset({"repository.read", "repository.write", "repository.delete"})
# Their targets are the repository's own file names, which the ledger already holds (the
# grounding manifest); a command, a URL or a query is what the host types, and may hold a token.


def _shown(capability: str, target: str) -> str:
    """``target`` as the trace and the reason may hold it: redacted as the tool redacts it.

    A repository path is not scanned, and what the host typed only when the detector's cheap
    pre-filter cannot clear it: loading the detector costs a fresh process a few hundred
    milliseconds (docs/hosts.md, "Speed").
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


def _authorize(
    root: str, run_phase: str, layers: Sequence[Layer], granted: Sequence[str], mapped: Mapped
) -> tuple[Decision, bool]:
    """The decision on one action, and whether it is a read reopened before the audit."""
    decision = authorize_action(
        mapped.capability,  # type: ignore[arg-type]  # unknown ones are refused by the decision
        mapped.target,
        layers,
        repository_root=root,
        protected_granted=granted,
    )
    if not reopens_read(run_phase, decision):
        return decision, False
    reopened = authorize_action(
        "repository.read",
        mapped.target,
        layers[:2],  # the mode and the run authorization: the user's grant
        repository_root=root,
        protected_granted=granted,
    )
    return reopened, True


def _decide(store: Store, run: LiveRun, call: Call, label: str) -> Verdict:
    ledger = store.ledger
    where = f"Telic run {run.run_id} ({run.mode}, {run.phase})"
    if call.asks is None or call.asks == "telic":
        reason = (
            f"{where}: Telic cannot map the tool {call.tool} to a capability, so it may "
            "not run while the run is live"
        )
        ledger.record_events(run.run_id, [_host_event(run, "tool_action_refused", reason)])
        return Verdict("deny", reason)
    authority = _layers(store, run)
    reasons: list[str] = []
    for mapped in call.asks:  # every target of the call must be allowed (an apply_patch's files)
        decision, reopened = _authorize(
            store.root, run.phase, authority.layers, authority.protected_granted, mapped
        )
        decision = _redacted(decision, mapped.capability)
        target = decision.scope or _shown(mapped.capability, mapped.target or "") or "(no target)"
        what = f"{mapped.capability} on {target}"
        if decision.allowed and reopened:
            reason = (
                f"{where}: {what} is {decision.reason} (native reads inside the run's grant "
                "are open in every phase before the audit)"
            )
        elif decision.allowed:
            reason = f"{where}: {what} is {decision.reason}"
        else:
            layer = decision.deciding_layer or "target"
            reason = f"{where} denies {what}: {decision.reason} (layer: {layer}; {decision.code})"
        summary = f"{label} {call.tool}: {reason}"
        if not (decision.allowed and mapped.capability == "subagent.spawn"):
            # An allowed spawn is not decided yet: its handoff is, and one record says both.
            ledger.record_events(run.run_id, [_event(run, decision, mapped.capability, summary)])
        if not decision.allowed:
            return Verdict("deny", reason)
        reasons.append(reason)
    if any(mapped.capability == "subagent.spawn" for mapped in call.asks):
        decided = spawn_handoff(call, read_cast_facts(ledger, run.run_id), where)
        if decided.verdict.decision == "allow":
            both = "; ".join([*reasons, decided.verdict.reason])
            decided = decided._replace(verdict=Verdict("allow", both))
        _record_cast(ledger, run, label, call, decided)
        return decided.verdict
    return Verdict("allow", "; ".join(reasons))


def _host_event(
    run: LiveRun, event_type: str, summary: str, permission: Mapping[str, JSON] | None = None
) -> NewTraceEvent:
    """An event the hook writes: a decision, or a cast event about a native child
    (``telic.casting._child``)."""
    return NewTraceEvent(
        actor="host",
        phase=run.phase,
        event_type=event_type,
        permission_decision=permission,
        decision_summary=summary[:800],
        budget_snapshot=budget_snapshot(run.prompt_revisions, run.remediations),
        event_id=uuid4_text(os.urandom(16)),
        timestamp=utc_now(),
    )


def _record_cast(
    ledger: BlockingLedger, run: LiveRun, label: str, call: Call, decided: Decided
) -> None:
    """Append a child decision: its cast events and, for a tool call, the decision itself
    (allowed or denied, with its reason) as ``telic_check_tool_action`` traces one — all in one
    transaction."""
    events = [_host_event(run, kind, summary) for kind, summary in decided.events]
    verdict = decided.verdict
    first = call.asks[0] if isinstance(call.asks, tuple) and call.asks else None
    if call.what == "decide" and first is not None:
        scope = _shown(first.capability, decided.scope or first.target or "")
        summary = f"{label} {call.tool}: {verdict.reason}"
        events.append(_checked(run, summary, verdict, first.capability, scope))
    if events:
        ledger.record_events(run.run_id, events)


def _child(store: Store, run: LiveRun, call: Call, label: str) -> Verdict:
    """A subagent's start, stop or tool call, decided against the cast it serves."""
    where = f"Telic run {run.run_id} ({run.mode}, {run.phase})"
    facts: CastFacts = read_cast_facts(store.ledger, run.run_id)
    if call.what == "start":
        decided = child_start(call, facts, where, store, run.run_id)
    elif call.what == "stop":
        decided = child_stop(call, facts, where)
    else:
        authority = _layers(store, run)
        decided = child_call(call, facts, where, store, run.run_id, authority)
    _record_cast(store.ledger, run, label, call, decided)
    return decided.verdict


def host_hook(
    host: str,
    raw: bytes,
    *,
    repository_root: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Decide one hook event of ``host`` (a ``DIALECTS`` key); return the stdout answer in that
    host's format (``None``: say nothing).

    Never raises for a decision: while a run is live, every failure — input that is not the
    host's event included — becomes a deny in the host's format.

    Raises:
        KeyError: an unknown host (the command line refuses it first, rule ``hook.host``).
    """
    dialect = DIALECTS[host]
    verdict, reply = decide_raw(dialect, raw, repository_root, environ)
    return None if verdict is None else dialect.write(reply, verdict)


def decide_raw(
    dialect: Dialect,
    raw: bytes,
    repository_root: str | None,
    environ: Mapping[str, str] | None,
) -> tuple[Verdict | None, str]:
    """The one decision on a raw event: its verdict (``None``: say nothing) and answer shape."""
    env = os.environ if environ is None else environ
    try:
        call: Call | None = read_event(dialect, raw)
        problem = ""
    except HookInputError as exc:
        call, problem = None, str(exc)
    reply = call.reply if call is not None else dialect.fallback_reply
    root = _root(repository_root, env, call.cwd if call else None)
    try:
        url = resolve_url(None, root, env)
        ledger: BlockingLedger
        if urlsplit(url).scheme == "sqlite":
            state_dir, db_path = sqlite_paths(url)
            if not db_path.is_file():
                return _pre_allowed(call), reply  # no ledger yet, so no live run
            ledger = DirectLedger(db_path)
        else:  # PostgreSQL (or memory): the same calls through the async ledger, slower
            from telic.ledger import PortalLedger

            configured = env.get(STATE_DIR_ENV)
            state_dir = Path(configured) if configured else default_state_dir(root)
            state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # bindings, snapshots
            ledger = PortalLedger(url, root)
    except Exception as exc:  # the hook boundary: cannot tell whether a run is live
        return Verdict("deny", f"Telic could not read its ledger for {root}: {_say(exc)}"), reply
    try:
        verdict = _with_ledger(Store(ledger, state_dir, url, root), call, problem, dialect.label)
        return verdict, reply
    finally:
        ledger.close()


def _with_ledger(store: Store, call: Call | None, problem: str, label: str) -> Verdict | None:
    try:
        live = store.ledger.live_runs(store.root)
    except Exception as exc:  # cannot tell whether a run is live: fail closed
        return Verdict("deny", f"Telic could not read the runs of {store.root}: {_say(exc)}")
    if not live:
        return _pre_allowed(call)
    try:
        if call is None:
            return Verdict(
                "deny", f"Telic denies this tool call: {problem}; denying while a Telic run is live"
            )
        if call.what == "refresh":  # a Telic tool ran: store every live run's stale layers
            for run in live:
                _layers(store, run)
        if call.what in ("refresh", "ignore"):
            return None
        if call.asks == "telic":
            return _telic_tool(store.state_dir, call, live)
        chosen = select_run(live, _bound(store.state_dir, call.session_id))
        if isinstance(chosen, str):
            return Verdict("deny", f"Telic denies this tool call: {chosen}")
        if call.agent_id is not None:  # a subagent's start, stop or call: its cast decides
            return _child(store, chosen, call, label)
        return _decide(store, chosen, call, label)
    except Exception as exc:  # the hook boundary: a live run and no decision is a deny
        return Verdict(
            "deny", f"Telic could not decide this tool call, so it is denied: {_say(exc)}"
        )


def _say(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
