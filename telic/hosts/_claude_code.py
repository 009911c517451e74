"""Claude Code's hook protocol, as data: the PreToolUse input, the tool → capability table and
the JSON answer. Pure; nothing here reads the ledger.

Claude Code runs a ``PreToolUse`` command hook with a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``tool_name``, ``tool_input``) and reads a
JSON answer on stdout with exit code 0: ``{"hookSpecificOutput": {"hookEventName":
"PreToolUse", "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": …}}``.
A deny's reason is shown to the model. Tools of an MCP server are named
``mcp__<server>__<tool>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

__all__ = [
    "MATCHER",
    "READ_ONLY_COMMANDS",
    "TELIC_TOOL_PREFIX",
    "TOOL_CAPABILITIES",
    "HookInput",
    "HookInputError",
    "Mapped",
    "answer",
    "classify",
    "parse_input",
]

TELIC_TOOL_PREFIX: Final = "mcp__telic__"
"""How Claude Code names the tools of the MCP server ``telic init`` registers as ``telic``."""

TOOL_CAPABILITIES: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
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
``Bash`` is classified by its command (``READ_ONLY_COMMANDS``). docs/hosts.md has the table.

The subagent tool is ``Agent`` in current Claude Code (``Task`` is its legacy alias, which Claude
Code resolves before the hook runs); ``Task`` stays for older builds that still send it."""

READ_ONLY_COMMANDS: Final[Mapping[str, str]] = {
    "git status": "git.status",
    "git diff": "git.diff",
    "git log": "git.log",
}
"""Bash commands that are exactly one of the typed ``shell.inspect`` targets."""

_DEFAULT_TARGETS: Final[Mapping[str, str]] = {"Glob": ".", "Grep": ".", "LS": "."}
"""Search tools without a ``path`` search the working directory: the repository root."""

MATCHER: Final = "|".join([*TOOL_CAPABILITIES, "Bash", "mcp__.*"])
"""The PreToolUse matcher ``telic init claude-code`` installs: every tool in the table, Bash and
every MCP tool (Telic's own are allowed and bind the session; others are denied while a run is
live, since Telic cannot tell what they do)."""


class HookInputError(ValueError):
    """The hook's stdin is not a Claude Code hook event."""


class HookInput(NamedTuple):
    """The fields of a Claude Code hook event the decision uses.

    Records on the hook's path are named tuples, not dataclasses: a fresh process per tool call
    pays for building each class, and a dataclass costs several times as much to build.
    """

    event: str
    session_id: str | None
    cwd: str | None
    tool_name: str
    tool_input: Mapping[str, object]
    tool_response: object = None


class Mapped(NamedTuple):
    """What a tool call asks for: a capability and its target (``None``: it names none)."""

    capability: str
    target: str | None


def parse_input(raw: bytes) -> HookInput:
    """Parse a hook event from stdin.

    Raises:
        HookInputError: not JSON, not an object, or without a string ``tool_name`` and an object
            ``tool_input`` (rule ``hook.input``).
    """
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"hook.input: stdin is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise HookInputError("hook.input: stdin is not a JSON object")
    tool_name, tool_input = value.get("tool_name"), value.get("tool_input", {})
    if not isinstance(tool_name, str) or not tool_name:
        raise HookInputError("hook.input: tool_name is missing or not a string")
    if not isinstance(tool_input, dict):
        raise HookInputError("hook.input: tool_input is not an object")
    session, cwd = value.get("session_id"), value.get("cwd")
    event = value.get("hook_event_name")
    return HookInput(
        event=event if isinstance(event, str) else "PreToolUse",
        session_id=session if isinstance(session, str) and session else None,
        cwd=cwd if isinstance(cwd, str) and cwd else None,
        tool_name=tool_name,
        tool_input=tool_input,
        tool_response=value.get("tool_response"),
    )


def classify(tool_name: str, tool_input: Mapping[str, object]) -> Mapped | Literal["telic"] | None:
    """Map a tool call to what it asks for: ``"telic"`` for Telic's own MCP tools (Telic checks
    those itself), ``None`` for a tool this table does not know."""
    if tool_name.startswith(TELIC_TOOL_PREFIX):
        return "telic"
    if tool_name == "Bash":
        command = tool_input.get("command")
        text = command.strip() if isinstance(command, str) else ""
        if text in READ_ONLY_COMMANDS:
            return Mapped("shell.inspect", READ_ONLY_COMMANDS[text])
        return Mapped("shell.execute", text or None)
    known = TOOL_CAPABILITIES.get(tool_name)
    if known is None:
        return None
    capability, keys = known
    for key in keys:
        target = tool_input.get(key)
        if isinstance(target, str) and target:
            return Mapped(capability, target)
    return Mapped(capability, _DEFAULT_TARGETS.get(tool_name))


def answer(decision: Literal["allow", "deny"], reason: str) -> str:
    """Return the PreToolUse answer Claude Code reads on stdout."""
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)
