"""Every host's hook payloads as data: read into one host-neutral call, answered in its own format.

One decision (``telic.hosts._hook``) decides a host-neutral ``Call``: what a native tool call asks
for (a capability and its targets), which session made it and whether it is one of Telic's own
tools. Each host gets a thin reader of its documented stdin and a writer of its documented
answer, a ``Dialect``; ``telic hook <host>`` picks one. docs/hosts.md tables each host's events,
tool names and answers. Pure; nothing here reads the ledger, and nothing here imports more than
``json`` (the hook runs in a fresh process per tool call).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Final, Literal, NamedTuple

TELIC_TOOLS: Final = frozenset(
    {
        "telic_start_run",
        "telic_get_next_action",
        "telic_ground_context",
        "telic_submit_artifact",
        "telic_get_run",
        "telic_list_runs",
        "telic_get_trace",
        "telic_cancel_run",
        "telic_get_artifact",
        "telic_check_tool_action",
        "telic_replay_run",
        "telic_verify_run",
        "telic_get_digest",
        "telic_cast",
        "telic_cast_progress",
        "telic_return_packet",
    }
)
"""The names of Telic's own MCP tools (``tests/telic/hosts`` checks them against the server's
tool table). A host that names MCP tools without their server (Cursor, VS Code) is recognised
by these names."""

TELIC_TOOL_PREFIX: Final = "mcp__telic__"
"""How Claude Code and Codex name the tools of the MCP server ``telic init`` registers."""


class HookInputError(ValueError):
    """The hook's stdin is not an event of the host it was configured for (rule ``hook.input``)."""


class Mapped(NamedTuple):
    """What a tool call asks for: a capability and its target (``None``: it names none)."""

    capability: str
    target: str | None


Decide = Literal["decide", "refresh", "ignore", "start", "stop"]
_Asks = tuple[Mapped, ...] | Literal["telic"] | None


class Call(NamedTuple):
    """A host's hook event, host-neutral: what the one decision reads.

    Records on the hook's path are named tuples, not dataclasses: a fresh process per tool call
    pays for building each class, and a dataclass costs several times as much to build.
    """

    what: Decide
    """``decide`` a permission, ``refresh`` the layer snapshot after a Telic tool, or
    ``ignore`` (say nothing)."""
    reply: str
    """Which of the host's answer shapes this event takes (its event name)."""
    tool: str
    """The host's own name for the tool, for the reason and the trace."""
    asks: _Asks
    """What it asks for; ``"telic"`` for Telic's own tools; ``None`` for a tool no table maps."""
    session_id: str | None = None
    cwd: str | None = None
    run_id: str | None = None
    """The ``run_id`` argument of a Telic tool call (binds the session to its run)."""
    agent_id: str | None = None
    """The host's id of the subagent that made the call (``None``: the parent made it), or
    that starts (``start``) or stops (``stop``)."""
    agent_type: str | None = None
    """The subagent's type (Claude Code's ``subagent_type``, e.g. ``telic-cast``)."""
    spawn_text: str | None = None
    """A spawn call's prompt, where the parent passes a cast's handoff (its ``castId``)."""
    last_message: str | None = None
    """A stopping subagent's last message (``stop``): its packet, or not."""
    stop_active: bool = False
    """A stop hook already kept this subagent going once (``stop``): it may stop now."""
    spawn_seen: bool = True
    """Whether the host's hook sees the spawn call (and so the handoff) before a ``start``;
    when not (Codex), a starting child binds to the run's only open cast no child holds."""


class Verdict(NamedTuple):
    """The host-neutral answer: allow or deny, and the reason the model sees."""

    decision: Literal["allow", "deny"]
    reason: str


class Dialect(NamedTuple):
    """One host's reader and writer."""

    label: str
    """How the trace names the host (``Claude Code Write: …``)."""
    read: Callable[[Mapping[str, object]], Call]
    write: Callable[[str, Verdict], str | None]
    """``write(call.reply, verdict)``: the stdout answer, or ``None`` to say nothing."""
    fallback_reply: str
    """The answer shape for an event that could not be read at all."""


# ------------------------------------------------------------------------------- shared pieces

READ_ONLY_COMMANDS: Final[Mapping[str, str]] = {
    "git status": "git.status",
    "git diff": "git.diff",
    "git log": "git.log",
}
"""Shell commands that are exactly one of the typed ``shell.inspect`` targets."""


def shell(command: object) -> Mapped:
    """A shell command: ``shell.inspect`` when it is exactly a typed read-only one, else
    ``shell.execute`` on the command as typed."""
    text = command.strip() if isinstance(command, str) else ""
    if text in READ_ONLY_COMMANDS:
        return Mapped("shell.inspect", READ_ONLY_COMMANDS[text])
    return Mapped("shell.execute", text or None)


def _each(tool_input: Mapping[str, object], key: str) -> list[str]:
    value = tool_input.get(key)
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item]
    return []


_PATCH_HEADERS: Final = (
    ("*** Add File: ", "repository.write"),
    ("*** Update File: ", "repository.write"),
    ("*** Move to: ", "repository.write"),
    ("*** Delete File: ", "repository.delete"),
)


def patch_targets(patch: object) -> tuple[Mapped, ...]:
    """Every file a Codex ``apply_patch`` body touches, with what it does to it (a patch that
    names no file asks for ``repository.write`` without a target, which every scoped grant
    refuses)."""
    found: list[Mapped] = []
    for line in patch.splitlines() if isinstance(patch, str) else ():
        for header, capability in _PATCH_HEADERS:
            if line.startswith(header) and line[len(header) :].strip():
                found.append(Mapped(capability, line[len(header) :].strip()))
    return tuple(found) or (Mapped("repository.write", None),)


def read_event(dialect: Dialect, raw: bytes) -> Call:
    """Read the hook's stdin as ``dialect``'s event.

    Raises:
        HookInputError: not JSON (not UTF-8, truncated, or nested deeper than the interpreter
            can read), not an object, or not an event of that host (rule ``hook.input``).
    """
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"hook.input: stdin is not JSON ({exc})") from None
    except RecursionError:  # json.loads's answer to deep nesting: input, not a crash
        raise HookInputError(
            f"hook.input: stdin is JSON nested too deeply to read ({len(raw)} bytes); send "
            "an event nested no deeper than a few hundred levels"
        ) from None
    if not isinstance(value, dict):
        raise HookInputError("hook.input: stdin is not a JSON object")
    return dialect.read(value)


def _text(event: Mapping[str, object], *keys: str) -> str | None:
    """The first of ``keys`` whose value is a non-empty string."""
    for key in keys:
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _tool(event: Mapping[str, object]) -> tuple[str, Mapping[str, object]]:
    tool_name, tool_input = event.get("tool_name"), event.get("tool_input", {})
    if isinstance(tool_input, str):  # Cursor's MCP events carry the arguments as JSON text
        try:
            tool_input = json.loads(tool_input) if tool_input.strip() else {}
        except (ValueError, RecursionError):
            raise HookInputError(
                "hook.input: tool_input is text that is not JSON (or nested too deeply to read)"
            ) from None
    if not isinstance(tool_name, str) or not tool_name:
        raise HookInputError("hook.input: tool_name is missing or not a string")
    if not isinstance(tool_input, dict):
        raise HookInputError("hook.input: tool_input is not an object")
    return tool_name, tool_input


# ------------------------------------------------------------------------------ tool tables

_Table = Mapping[str, tuple[str, tuple[str, ...]]]

CLAUDE_TOOLS: Final[_Table] = {
    "Read": ("repository.read", ("file_path",)),
    "NotebookRead": ("repository.read", ("notebook_path",)),
    "LS": ("repository.read", ("path",)),
    "Glob": ("repository.read", ("path",)),
    "Grep": ("repository.read", ("path",)),
    "Edit": ("repository.write", ("file_path",)),
    "MultiEdit": ("repository.write", ("file_path",)),
    "Write": ("repository.write", ("file_path",)),
    "NotebookEdit": ("repository.write", ("notebook_path",)),
    "WebFetch": ("network.read", ("url",)),
    "WebSearch": ("network.read", ()),
    "Agent": ("subagent.spawn", ("subagent_type",)),
    "Task": ("subagent.spawn", ("subagent_type",)),
}
"""Claude Code tool → (capability, the ``tool_input`` keys that name its target, first found).
``Bash`` is classified by its command (``shell``). The subagent tool is ``Agent`` in current
Claude Code (``Task`` is its legacy alias, resolved before the hook runs); ``Task`` stays for
older builds that still send it."""

CURSOR_TOOLS: Final[_Table] = {
    "Read": ("repository.read", ("file_path", "path", "target_file")),
    "Grep": ("repository.read", ("path",)),
    "Glob": ("repository.read", ("path", "target_directory")),
    "LS": ("repository.read", ("path", "target_directory")),
    "Write": ("repository.write", ("file_path", "path", "target_file")),
    "Edit": ("repository.write", ("file_path", "path", "target_file")),
    "StrReplace": ("repository.write", ("file_path", "path", "target_file")),
    "Delete": ("repository.delete", ("file_path", "path", "target_file")),
    "Task": ("subagent.spawn", ("subagent_type",)),
}
"""Cursor's agent tools (``preToolUse``'s ``tool_name``) → capability and target keys; ``Shell``
is classified by its command. docs/hosts.md says which names Cursor documents."""

VSCODE_TOOLS: Final[_Table] = {
    "readFile": ("repository.read", ("filePath", "file_path", "path")),
    "listDirectory": ("repository.read", ("path",)),
    "fileSearch": ("repository.read", ()),
    "textSearch": ("repository.read", ()),
    "codebase": ("repository.read", ()),
    "createFile": ("repository.write", ("filePath", "file_path", "path")),
    "createDirectory": ("repository.write", ("dirPath", "path")),
    "editFiles": ("repository.write", ()),  # its targets are ``files`` (below)
    "fetch": ("network.read", ()),  # its targets are ``urls`` (below)
    "runSubagent": ("subagent.spawn", ("agentName", "subagent_type")),
}
"""VS Code agent mode's built-in tools → capability and target keys; ``runInTerminal`` is
classified by its command."""

_DEFAULT_TARGETS: Final[Mapping[str, str]] = {
    "Glob": ".",
    "Grep": ".",
    "LS": ".",
    "fileSearch": ".",
    "textSearch": ".",
    "codebase": ".",
}
"""Search tools without a path search the working directory: the repository root."""

_SHELLS: Final = frozenset({"Bash", "Shell", "runInTerminal"})
_MANY: Final[Mapping[str, str]] = {"editFiles": "files", "fetch": "urls"}


def _table_call(
    table: _Table, tool_name: str, tool_input: Mapping[str, object]
) -> tuple[Mapped, ...] | None:
    if tool_name in _SHELLS:
        return (shell(tool_input.get("command")),)
    known = table.get(tool_name)
    if known is None:
        return None
    capability, keys = known
    many = _MANY.get(tool_name)
    if many is not None:
        targets = _each(tool_input, many)
        return tuple(Mapped(capability, t) for t in targets) or (Mapped(capability, None),)
    target = _text(tool_input, *keys) or _DEFAULT_TARGETS.get(tool_name)
    return (Mapped(capability, target),)


def _telic_name(tool_name: str) -> bool:
    """Whether a tool named without its server (Cursor, VS Code) is one of Telic's own."""
    for prefix in ("MCP:", "mcp_telic_", "mcp__telic__"):
        if tool_name.startswith(prefix):
            tool_name = tool_name[len(prefix) :]
    return tool_name in TELIC_TOOLS


def claude_tool(tool_name: str, tool_input: Mapping[str, object]) -> _Asks:
    """What a tool call in Claude Code's payload asks for: Claude Code's names first, then
    Cursor's and VS Code's (both run a project's ``.claude/settings.json`` hooks, with their own
    tool names)."""
    if tool_name.startswith(TELIC_TOOL_PREFIX) or _telic_name(tool_name):
        return "telic"
    for table in (CLAUDE_TOOLS, CURSOR_TOOLS, VSCODE_TOOLS):
        found = _table_call(table, tool_name, tool_input)
        if found is not None:
            return found
    return None


# -------------------------------------------------------------------- Claude Code and VS Code


def _answer(event: str, verdict: Verdict) -> str:
    output = {
        "hookEventName": event,
        "permissionDecision": verdict.decision,
        "permissionDecisionReason": verdict.reason,
    }
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def _read_claude(event: Mapping[str, object]) -> Call:
    # VS Code's reference spells some common fields in camelCase: either spelling is read.
    name = _text(event, "hook_event_name", "hookEventName") or "PreToolUse"
    session = _text(event, "session_id", "sessionId")
    return _read_tool_event(event, name, claude_tool, "PreToolUse", session)


def _read_tool_event(
    event: Mapping[str, object],
    name: str,
    tool_of: Callable[[str, Mapping[str, object]], _Asks],
    reply: str | None,
    session: str | None,
    *,
    spawn_seen: bool = True,
) -> Call:
    """An event in Claude Code's shape (Codex's too): a subagent's start or stop, or a tool
    call whose ``PostToolUse`` refreshes after a Telic tool; ``reply`` ``None``: ignored."""
    if name in _CHILD_EVENTS:
        return _child_event(event, name, spawn_seen=spawn_seen)
    tool_name, tool_input = _tool(event)
    asks = tool_of(tool_name, tool_input)
    what: Decide = "decide" if reply is not None else "ignore"
    if name == "PostToolUse":
        what = "refresh" if asks == "telic" else "ignore"
    return Call(
        what,
        reply or "PreToolUse",
        tool_name,
        asks,
        session,
        _text(event, "cwd"),
        _text(tool_input, "run_id") if asks == "telic" else None,
        _text(event, "agent_id"),
        _text(event, "agent_type"),
        _spawn_text(asks, tool_input),
    )


def _spawn_text(asks: object, tool_input: Mapping[str, object]) -> str | None:
    """A spawn call's prompt and description (where a parent passes a cast's handoff)."""
    if not isinstance(asks, tuple) or not any(m.capability == "subagent.spawn" for m in asks):
        return None
    parts = [_text(tool_input, key) for key in ("prompt", "description", "message")]
    return "\n".join(part for part in parts if part) or None


_CHILD_EVENTS: Final[Mapping[str, Decide]] = {"SubagentStart": "start", "SubagentStop": "stop"}


def _child_event(event: Mapping[str, object], name: str, *, spawn_seen: bool = True) -> Call:
    """A subagent's ``SubagentStart`` or ``SubagentStop`` (Claude Code's and Codex's shape)."""
    agent_id = _text(event, "agent_id")
    if agent_id is None:
        raise HookInputError(f"hook.input: {name} has no agent_id")
    return Call(
        _CHILD_EVENTS[name],
        name,
        name,
        None,
        _text(event, "session_id"),
        _text(event, "cwd"),
        agent_id=agent_id,
        agent_type=_text(event, "agent_type"),
        last_message=_text(event, "last_assistant_message"),
        stop_active=event.get("stop_hook_active") is True,
        spawn_seen=spawn_seen,
    )


def _write_child(reply: str, verdict: Verdict) -> str | None:
    """The answer to a ``SubagentStart`` (context for the child: it cannot be blocked) or a
    ``SubagentStop`` (a deny keeps the child going with the reason as its next instruction)."""
    if reply == "SubagentStart":
        output = {"hookEventName": "SubagentStart", "additionalContext": verdict.reason}
        return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)
    if verdict.decision == "allow":
        return None
    return json.dumps({"decision": "block", "reason": verdict.reason}, ensure_ascii=False)


def _write_claude(reply: str, verdict: Verdict) -> str | None:
    if reply in _CHILD_EVENTS:
        return _write_child(reply, verdict)
    return _answer(reply, verdict)


# ---------------------------------------------------------------------------------------- Codex


def _codex_tool(tool_name: str, tool_input: Mapping[str, object]) -> _Asks:
    if tool_name.startswith(TELIC_TOOL_PREFIX):
        return "telic"
    if tool_name == "Bash":
        return (shell(tool_input.get("command")),)
    if tool_name == "apply_patch":
        return patch_targets(tool_input.get("command"))
    return None


def _read_codex(event: Mapping[str, object]) -> Call:
    name = _text(event, "hook_event_name") or "PreToolUse"
    reply = name if name in ("PreToolUse", "PermissionRequest") else None
    # Codex's spawn call reaches no hook: no handoff is seen before a child starts.
    session = _text(event, "session_id")
    return _read_tool_event(event, name, _codex_tool, reply, session, spawn_seen=False)


def _write_codex(reply: str, verdict: Verdict) -> str | None:
    if reply in _CHILD_EVENTS:
        return _write_child(reply, verdict)
    if reply == "PermissionRequest":
        decision: dict[str, object] = {"behavior": verdict.decision}
        if verdict.decision == "deny":
            decision["message"] = verdict.reason
        output = {"hookEventName": "PermissionRequest", "decision": decision}
        return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)
    if verdict.decision == "allow":
        return None  # Codex has no PreToolUse allow: its own approval (and PermissionRequest) apply
    return _answer("PreToolUse", verdict)


# --------------------------------------------------------------------------------------- Cursor

_CURSOR_DECIDED: Final = frozenset(
    {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "subagentStart"}
)
_CURSOR_REFRESH: Final = frozenset({"postToolUse", "afterMCPExecution"})


def _cursor_cwd(event: Mapping[str, object]) -> str | None:
    roots = event.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return _text(event, "cwd")


def _cursor_tool(tool_name: str, tool_input: Mapping[str, object]) -> _Asks:
    if _telic_name(tool_name):
        return "telic"
    return _table_call(CURSOR_TOOLS, tool_name, tool_input)


def _read_cursor(event: Mapping[str, object]) -> Call:
    name = _text(event, "hook_event_name")
    if name is None:
        raise HookInputError("hook.input: hook_event_name is missing or not a string")
    session, cwd = _text(event, "conversation_id"), _cursor_cwd(event)
    if name == "beforeShellExecution":
        return Call("decide", name, "Shell", (shell(event.get("command")),), session, cwd)
    if name == "beforeReadFile":
        target = _text(event, "file_path")
        return Call("decide", name, "Read", (Mapped("repository.read", target),), session, cwd)
    if name == "subagentStart":
        kind = _text(event, "subagent_type", "agent_type", "subagent_name") or "subagent"
        return Call("decide", name, "Task", (Mapped("subagent.spawn", kind),), session, cwd)
    if name not in _CURSOR_DECIDED | _CURSOR_REFRESH:
        return Call("ignore", name, name, None, session, cwd)
    tool_name, tool_input = _tool(event)
    asks = _cursor_tool(tool_name, tool_input)
    if name == "beforeMCPExecution" and asks != "telic":
        asks = None  # another server's tool: Telic cannot tell what it does
    what: Decide = "decide"
    if name in _CURSOR_REFRESH:
        what = "refresh" if asks == "telic" else "ignore"
    run_id = _text(tool_input, "run_id") if asks == "telic" else None
    return Call(what, name, tool_name, asks, session, cwd, run_id)


def _write_cursor(reply: str, verdict: Verdict) -> str:
    answer: dict[str, object] = {"permission": verdict.decision}
    if reply != "beforeReadFile":  # its documented answer is the permission alone
        answer["user_message"] = verdict.reason
        answer["agent_message"] = verdict.reason
    return json.dumps(answer, ensure_ascii=False)


DIALECTS: Final[Mapping[str, Dialect]] = {
    "claude-code": Dialect("Claude Code", _read_claude, _write_claude, "PreToolUse"),
    "codex": Dialect("Codex", _read_codex, _write_codex, "PreToolUse"),
    "cursor": Dialect("Cursor", _read_cursor, _write_cursor, "preToolUse"),
    "vscode": Dialect("VS Code", _read_claude, _write_claude, "PreToolUse"),
}
"""``telic hook <host>``'s dialects; ``claude-code`` is the default of installed kits."""

HOOK_HOSTS: Final = tuple(DIALECTS)

CLAUDE_MATCHER: Final = "|".join(
    [
        *CLAUDE_TOOLS,
        "Bash",
        *sorted(set(CURSOR_TOOLS) - set(CLAUDE_TOOLS)),
        "Shell",
        "MCP:.*",
        "mcp__.*",
    ]
)
"""The PreToolUse matcher of ``.claude/settings.json``: every Claude Code tool in the table, Bash
and every MCP tool (Telic's own are allowed and bind the session; others are denied while a run
is live, since Telic cannot tell what they do), and Cursor's names for the tools it runs these
hooks for (``Shell``, ``StrReplace``, ``Delete``, ``MCP:<tool>``)."""

CURSOR_WRITE_MATCHER: Final = "Write|Edit|StrReplace|Delete|Grep|Glob|LS"
"""The matcher of Cursor's ``preToolUse`` hook: the tools its specific events do not cover
(shell, file reads, MCP calls and subagents have their own)."""

CODEX_MATCHER: Final = "Bash|apply_patch|mcp__.*"
"""The matcher of the Codex hooks: the tools Codex runs ``PreToolUse`` for (its shell, its
patch tool and MCP tools)."""
