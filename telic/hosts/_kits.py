"""Host kits: the project files ``telic init <host>`` writes, merged into what is already there.

A kit is planned purely (``plan_kit``: the files' current text in, their new text out) and
written by ``write_kit``. Each file follows its host's documented format (docs/hosts.md tables
them). Commands are absolute and bind the repository explicitly (``--repository-root``), so a
host started in another folder still drives this one.

Merging never drops what the user wrote: JSON files keep every other key (re-indented with two
spaces when the file was written differently); TOML and Markdown files keep every byte outside
Telic's own table or marked section, and the merged TOML is parsed back to prove that nothing
else changed. A file that cannot be merged safely is refused with ``UsageError`` naming the rule
(``init.json``, ``init.toml``, …) before anything is written.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from telic._errors import UsageError
from telic.hosts._dialects import (
    CLAUDE_MATCHER,
    CODEX_MATCHER,
    CURSOR_WRITE_MATCHER,
    HOOK_HOSTS,
    TELIC_TOOL_PREFIX,
)

SERVER_NAME: Final = "telic"
AGENT_NAME: Final = "telic-cast"
SKILL_NAME: Final = "telic-workflow"
AGENT_DESCRIPTION: Final = (
    "Run one Telic cast: read what the handoff points at and return exactly one evidence packet "
    "(JSON). Use for every telic_cast the parent admits."
)
HOOK_TIMEOUT_SECONDS: Final = 30
"""The ``timeout`` every kit gives the hook: three times the longest the hook itself waits for
the resident server (``telic.resident._shim.HOOK_WAIT``), so the hook answers before the host
would kill it."""
CLAUDE_FAIL_CLOSED: Final = {"onFailure": "block"}
"""Claude Code's option (2.1.295 and later; earlier releases ignore the key) that makes a
PreToolUse hook which cannot start, times out or exits with an unexpected code block the call,
where by default such a failure lets it through."""
CURSOR_FAIL_CLOSED: Final = {"failClosed": True}
"""Cursor's option that makes a hook which crashes, times out or answers unreadable JSON block the
action, where by default such a failure lets it through."""
DEFAULT_CAST_TURNS: Final = 8
"""The cast subagent's turn cap when the server configures no enabled cast type (types a run
enables at its start are not known when ``telic init`` runs)."""
FORWARDED_ENV: Final = (
    "TELIC_STATE_DIR",
    "TELIC_DATABASE_URL",
    "TELIC_SCHEMAS",
    "TELIC_TOOLS",
    "TELIC_RUNTIME_DIR",
    "TELIC_RESIDENT_IDLE",
    "TELIC_RESIDENT_START_TIMEOUT",
    "TELIC_OTEL",
    "TELIC_DEBUG",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)
"""The variables Codex forwards to Telic's server (``env_vars``): Codex starts an MCP server with
a filtered environment, so without them the server would use another ledger than ``telic runs``
and the hook in the same shell."""
PRE_ALLOWED: Final = "mcp__" + SERVER_NAME
"""Claude Code's permission rule for every tool of the ``telic`` MCP server: a run can start in
any permission mode, ``claude -p`` included (Telic checks its own tools itself)."""
BEGIN: Final = "<!-- telic:begin (written by telic init; edits inside are replaced) -->"
END: Final = "<!-- telic:end -->"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a kit: its path relative to the repository, its text now and after init."""

    path: str
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        """Whether ``init`` would write this file."""
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class KitCheck:
    """One line of ``telic doctor``: about an installed kit, or (``telic.cli``) anything else."""

    name: str
    ok: bool
    detail: str
    required: bool = True
    """Whether a failure fails the doctor (``False``: a warning)."""


def telic_command() -> list[str]:
    """The absolute command that runs this very ``telic``: its console script when there is one
    beside the interpreter (or the one running), else ``python -m telic``."""
    candidates = [Path(os.path.abspath(sys.argv[0])), Path(sys.executable).parent / "telic"]
    for candidate in candidates:
        if candidate.name == "telic" and candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    return [os.path.abspath(sys.executable), "-m", "telic"]


# ------------------------------------------------------------------------------------ pieces


RESIDENT_BY_DEFAULT: Final = os.name == "posix"
"""Whether ``telic init`` configures ``serve --resident`` unless told otherwise: the resident
server needs Unix sockets and ``flock``, so elsewhere a host gets a server per session."""


def _server_entry(command: Sequence[str], root: str, resident: bool) -> dict[str, Any]:
    serve = ["serve", "--resident"] if resident else ["serve"]
    return {"command": command[0], "args": [*command[1:], "--repository-root", root, *serve]}


def hook_command(command: Sequence[str], root: str, host: str = "claude-code") -> str:
    """The shell command line of ``host``'s hook (every host runs it through a shell)."""
    words = [*command, "--repository-root", root, "hook", host]
    return " ".join(shlex.quote(word) for word in words)


def _load_json(path: str, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"init.json: {path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(value, dict):
        raise UsageError(f"init.json: {path} does not hold a JSON object")
    return value


def _dump_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _with_server(
    path: str, text: str | None, entry: Mapping[str, Any], *, key: str = "mcpServers"
) -> str:
    document = _load_json(path, text)
    servers = document.setdefault(key, {})
    if not isinstance(servers, dict):
        raise UsageError(f"init.json: {key} in {path} is not an object")
    if servers.get(SERVER_NAME) == entry and text is not None:
        return text  # already there: leave the file byte for byte
    servers[SERVER_NAME] = dict(entry)
    return _dump_json(document)


def _runs_our_hook(entry: object) -> bool:
    """Whether a hook entry (``{command}``) runs ``telic … hook <host>``."""
    if not isinstance(entry, dict):
        return False
    words = str(entry.get("command", "")).split()
    return len(words) >= 2 and words[-2] == "hook" and words[-1] in HOOK_HOSTS


def _is_ours(group: object) -> bool:
    """Whether a hook group (``{matcher, hooks: [...]}``) or a flat entry is Telic's."""
    if _runs_our_hook(group):
        return True
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(_runs_our_hook(h) for h in hooks)


def _merge_hooks(
    path: str, document: dict[str, Any], wanted: Mapping[str, Mapping[str, Any]]
) -> None:
    """Put Telic's one group (or entry) per event into ``document["hooks"]``, replacing its own
    earlier ones and keeping every other."""
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"init.json: hooks in {path} is not an object")
    for event, group in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise UsageError(f"init.json: hooks.{event} in {path} is not a list")
        mine = [index for index, existing in enumerate(groups) if _is_ours(existing)]
        if mine:
            groups[mine[0]] = dict(group)
            for index in reversed(mine[1:]):
                del groups[index]
        else:
            groups.append(dict(group))


def _claude_groups(
    command: str,
    matcher: str,
    fail_closed: Mapping[str, Any] | None = None,
    *,
    children: bool = False,
) -> dict[str, dict[str, Any]]:
    """Claude Code's hook groups (VS Code and Codex read the same shape). ``fail_closed``: the
    host's option that makes a failed PreToolUse hook block the call, where it has one;
    ``children`` adds ``SubagentStart`` and ``SubagentStop`` for every agent type (no matcher),
    which bind a native child to its cast and check its return."""
    action = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
    groups: dict[str, dict[str, Any]] = {
        "PreToolUse": {"matcher": matcher, "hooks": [{**action, **(fail_closed or {})}]},
        "PostToolUse": {"matcher": TELIC_TOOL_PREFIX + ".*", "hooks": [action]},
    }
    if children:
        groups["SubagentStart"] = {"hooks": [action]}
        groups["SubagentStop"] = {"hooks": [action]}
    return groups


def _with_hooks(
    path: str,
    text: str | None,
    wanted: Mapping[str, Mapping[str, Any]],
    extra: Callable[[dict[str, Any]], None] = lambda _: None,
) -> str:
    """A JSON hooks file with Telic's groups merged in (and ``extra``'s own change)."""
    document = _load_json(path, text)
    before = json.dumps(document, sort_keys=True)
    _merge_hooks(path, document, wanted)
    extra(document)
    if text is not None and json.dumps(document, sort_keys=True) == before:
        return text
    return _dump_json(document)


def _with_settings(path: str, text: str | None, command: str) -> str:
    """Claude Code's settings with Telic's hooks and its pre-allowed MCP tools merged in."""

    def pre_allow(document: dict[str, Any]) -> None:
        permissions = document.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise UsageError(f"init.json: permissions in {path} is not an object")
        allowed = permissions.setdefault("allow", [])
        if not isinstance(allowed, list):
            raise UsageError(f"init.json: permissions.allow in {path} is not a list")
        if PRE_ALLOWED not in allowed:
            allowed.append(PRE_ALLOWED)

    groups = _claude_groups(command, CLAUDE_MATCHER, CLAUDE_FAIL_CLOSED, children=True)
    return _with_hooks(path, text, groups, pre_allow)


def _front_matter(fields: Sequence[tuple[str, str | int]]) -> str:
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields]
    return "---\n" + "\n".join(lines) + "\n---\n\n"


def _section(text: str | None, body: str) -> str:
    """``text`` with Telic's marked section replaced (or appended), every other byte kept."""
    block = f"{BEGIN}\n{body.rstrip()}\n{END}\n"
    if text is None or not text:
        return block
    start, end = text.find(BEGIN), text.find(END)
    if start == -1 and end == -1:
        return text + ("\n" if text.endswith("\n") else "\n\n") + block
    if start == -1 or end < start or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise UsageError(
            "init.markdown: the telic:begin/telic:end markers are unbalanced; fix them first"
        )
    return text[:start] + block + text[end + len(END) :].removeprefix("\n")


_TABLE: Final = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*telic\s*(\]|\.)", re.MULTILINE)
_ANY_TABLE: Final = re.compile(r"^\s*\[", re.MULTILINE)


def _toml(value: str | bool | Sequence[str]) -> str:
    # JSON's strings, booleans and arrays of strings are TOML's too (a string: a basic string).
    return json.dumps(value, ensure_ascii=False)


def _with_codex_server(path: str, text: str | None, entry: Mapping[str, Any]) -> str:
    original = text or ""
    try:
        parsed = tomllib.loads(original)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"init.toml: {path} is not valid TOML ({exc}); fix it first") from None
    if parsed.get("mcp_servers", {}).get(SERVER_NAME) == dict(entry):
        return original
    lines = [f"[mcp_servers.{SERVER_NAME}]", *(f"{k} = {_toml(v)}" for k, v in entry.items())]
    block = "\n".join(lines) + "\n"
    kept = original
    found = list(_TABLE.finditer(original))
    if found:
        start = found[0].start()
        tables = [m.start() for m in _ANY_TABLE.finditer(original) if m.start() > start]
        later = [t for t in tables if not _TABLE.match(original, t)]
        end = later[0] if later else len(original)
        if any(m.start() > end for m in found):
            raise UsageError(f"init.toml: [mcp_servers.telic] in {path} is split; merge by hand")
        merged = original[:start] + block + ("\n" + original[end:] if end < len(original) else "")
    else:
        separator = (
            "" if not kept or kept.endswith("\n\n") else ("\n" if kept.endswith("\n") else "\n\n")
        )
        merged = kept + separator + block
    try:
        reparsed = tomllib.loads(merged)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"init.toml: merging into {path} would break it ({exc})") from None
    servers = dict(reparsed.get("mcp_servers", {}))
    if servers.pop(SERVER_NAME, None) != dict(entry):
        raise UsageError(f"init.toml: mcp_servers.telic in {path} is defined inline; edit by hand")
    others = dict(parsed.get("mcp_servers", {}))
    others.pop(SERVER_NAME, None)
    rest_before = {k: v for k, v in parsed.items() if k != "mcp_servers"}
    rest_after = {k: v for k, v in reparsed.items() if k != "mcp_servers"}
    if servers != others or rest_before != rest_after:
        raise UsageError(f"init.toml: merging into {path} would change other settings; refused")
    return merged


# ------------------------------------------------------------------------------------ plans

_Files = dict[str, Callable[[str | None], str]]
"""A kit: each file's path, and how its new text is made from its text now (``None``: none)."""


def _claude_code(root: str, command: Sequence[str], resident: bool, cast_turns: int) -> _Files:
    from telic.hosts._texts import AGENT_TEXT, SKILL_DESCRIPTION, SKILL_TEXT  # the prompt: slow

    agent = _front_matter(
        [
            ("name", AGENT_NAME),
            ("description", AGENT_DESCRIPTION),
            ("tools", "Read, Grep, Glob"),
            ("maxTurns", cast_turns),
        ]
    )
    skill = _front_matter([("name", SKILL_NAME), ("description", SKILL_DESCRIPTION)])
    return {
        ".mcp.json": lambda t: _with_server(".mcp.json", t, _server_entry(command, root, resident)),
        ".claude/settings.json": lambda t: _with_settings(
            ".claude/settings.json", t, hook_command(command, root)
        ),
        f".claude/agents/{AGENT_NAME}.md": lambda _: agent + AGENT_TEXT,
        f".claude/skills/{SKILL_NAME}/SKILL.md": lambda _: skill + SKILL_TEXT,
    }


def _codex(root: str, command: Sequence[str], resident: bool, cast_turns: int) -> _Files:
    from telic.hosts._texts import AGENT_TEXT, SKILL_TEXT  # the prompt: slow

    # required: Codex waits for the server before the first turn (and stops if it cannot
    # start), so `codex exec` offers Telic's tools from its first request.
    entry = {
        **_server_entry(command, root, resident),
        "env_vars": list(FORWARDED_ENV),
        "required": True,
    }
    config, hooks = ".codex/config.toml", ".codex/hooks.json"
    agent = f".codex/agents/{AGENT_NAME}.toml"
    section = SKILL_TEXT.replace("# Telic workflow", "## Telic workflow", 1)
    groups = _claude_groups(hook_command(command, root, "codex"), CODEX_MATCHER, children=True)
    wanted = {**groups, "PermissionRequest": {**groups["PreToolUse"]}}
    agent_text = (
        f"name = {_toml(AGENT_NAME)}\n"
        f"description = {_toml(AGENT_DESCRIPTION)}\n"
        'sandbox_mode = "read-only"\n'
        f"developer_instructions = {_toml(AGENT_TEXT)}\n"
    )
    return {
        config: lambda t: _with_codex_server(config, t, entry),
        hooks: lambda t: _with_hooks(hooks, t, wanted),
        agent: lambda _: agent_text,
        "AGENTS.md": lambda t: _section(t, section),
    }


def _cursor(root: str, command: Sequence[str], resident: bool, cast_turns: int) -> _Files:
    from telic.hosts._texts import SKILL_DESCRIPTION, SKILL_TEXT  # the prompt: slow

    rule = _front_matter([("description", SKILL_DESCRIPTION), ("globs", "")])
    rule = rule.replace('globs: ""\n', "globs:\nalwaysApply: false\n")
    mcp, hooks = ".cursor/mcp.json", ".cursor/hooks.json"
    rules = f".cursor/rules/{SKILL_NAME}.mdc"
    after = {"command": hook_command(command, root, "cursor"), "timeout": HOOK_TIMEOUT_SECONDS}
    hook = {**after, **CURSOR_FAIL_CLOSED}  # every event that decides: a failure blocks
    wanted = {
        "preToolUse": {**hook, "matcher": CURSOR_WRITE_MATCHER},
        "beforeShellExecution": hook,
        "beforeMCPExecution": hook,
        "beforeReadFile": hook,
        "subagentStart": hook,
        "afterMCPExecution": after,
    }

    def versioned(document: dict[str, Any]) -> None:
        document.setdefault("version", 1)

    return {
        mcp: lambda t: _with_server(mcp, t, _server_entry(command, root, resident)),
        hooks: lambda t: _with_hooks(hooks, t, wanted, versioned),
        rules: lambda _: rule + SKILL_TEXT,
    }


def _vscode(root: str, command: Sequence[str], resident: bool, cast_turns: int) -> _Files:
    mcp, hooks = ".vscode/mcp.json", f".github/hooks/{SERVER_NAME}.json"
    entry = {"type": "stdio", **_server_entry(command, root, resident)}
    wanted = _claude_groups(hook_command(command, root, "vscode"), CLAUDE_MATCHER)
    return {
        mcp: lambda t: _with_server(mcp, t, entry, key="servers"),
        hooks: lambda t: _with_hooks(hooks, t, wanted),
    }


_PLANS: Final = {
    "claude-code": _claude_code,
    "codex": _codex,
    "cursor": _cursor,
    "vscode": _vscode,
}
HOSTS: Final = tuple(_PLANS)
"""The hosts ``telic init`` writes a kit for."""


def _read(root: Path, relative: str) -> str | None:
    path = root / relative
    if path.is_symlink():
        raise UsageError(f"init.path: {relative} is a symlink; Telic writes no symlinked file")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"init.path: cannot read {relative}: {exc}") from None


def plan_kit(
    host: str,
    root: Path,
    command: Sequence[str] | None = None,
    *,
    resident: bool = RESIDENT_BY_DEFAULT,
    cast_turns: int = DEFAULT_CAST_TURNS,
) -> list[FileChange]:
    """Return the kit of ``host`` for the repository ``root`` (absolute), merged with what is
    there. Writes nothing. ``resident``: the MCP server command is ``serve --resident`` (by
    default where the resident server runs, ``RESIDENT_BY_DEFAULT``: POSIX); ``False`` keeps a
    server per host session (docs/hosts.md weighs the two). ``cast_turns``: the cast
    subagent's turn cap, where the host has one (``cast_turn_ceiling``).

    Raises:
        UsageError: an unknown host (``init.host``), a relative root (``init.root``), or a file
            that cannot be merged safely (``init.json``, ``init.toml``, ``init.markdown``,
            ``init.path``).
    """
    plan = _PLANS.get(host)
    if plan is None:
        raise UsageError(f"init.host: unknown host {host!r}; choose one of {', '.join(HOSTS)}")
    if not root.is_absolute() or not root.is_dir():
        raise UsageError(f"init.root: {root} is not an existing absolute directory")
    if cast_turns < 1:
        raise UsageError(f"init.cast_turns: {cast_turns} is not a positive number of turns")
    files = plan(str(root), list(command or telic_command()), resident, cast_turns)
    return [FileChange(path, (now := _read(root, path)), make(now)) for path, make in files.items()]


def write_kit(root: Path, changes: Sequence[FileChange]) -> None:
    """Write the changed files of a planned kit (each atomically, folders created 0755)."""
    for change in changes:
        if not change.changed:
            continue
        path = root / change.path
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.telic-init.tmp")
        temporary.write_text(change.after, encoding="utf-8")
        os.replace(temporary, path)


def diff(changes: Sequence[FileChange]) -> str:
    """The unified diff of a planned kit (empty when nothing would change)."""
    out: list[str] = []
    for change in changes:
        if change.changed:
            before = (change.before or "").splitlines(keepends=True)
            after = change.after.splitlines(keepends=True)
            old = f"a/{change.path}" if change.before is not None else "/dev/null"
            out.extend(difflib.unified_diff(before, after, old, f"b/{change.path}"))
    return "".join(out)


def cast_turn_ceiling(state_dir: Path, root: Path) -> int:
    """The cast subagent's turn cap: the largest ``ceilingTurns`` of the cast types the server's
    configuration file (``telic.toml`` / ``telic.json`` in ``state_dir``) enables, else
    ``DEFAULT_CAST_TURNS``.

    Raises:
        UsageError, SchemaViolation, ContextSecurityError: the configuration cannot be read,
            is malformed, or lies inside the repository (as ``telic serve`` would refuse it).
    """
    from telic.casting import find_config, load_cast_types  # pydantic: only init and doctor

    configured = find_config(state_dir, root)
    types = load_cast_types(configured) if configured is not None else ()
    ceilings = [entry.ceiling_turns for entry in types if entry.enabled]
    return max(ceilings, default=DEFAULT_CAST_TURNS)


def check_kits(
    root: Path, command: Sequence[str] | None = None, *, cast_turns: int = DEFAULT_CAST_TURNS
) -> list[KitCheck]:
    """Check every kit installed in ``root``: a host counts as installed when any of its files
    exists; each such file must be what ``telic init`` would write now, and the commands it
    runs must exist. A server entry with or without ``--resident`` is current."""
    checks: list[KitCheck] = []
    for host in HOSTS:
        try:
            changes = plan_kit(host, root, command, resident=False, cast_turns=cast_turns)
            resident = plan_kit(host, root, command, resident=True, cast_turns=cast_turns)
        except UsageError as exc:
            checks.append(KitCheck(f"kit {host}", False, exc.message))
            continue
        if all(change.before is None for change in changes):
            continue
        pairs = list(zip(changes, resident, strict=True))
        missing = [c.path for c, _ in pairs if c.before is None]
        stale = [c.path for c, r in pairs if c.changed and r.changed and c.before is not None]
        executable = (command or telic_command())[0]
        runs = os.access(executable, os.X_OK)
        if missing or stale:
            parts = [f"missing: {', '.join(missing)}"] if missing else []
            parts += [f"differs from this telic's kit: {', '.join(stale)}"] if stale else []
            detail = f"{'; '.join(parts)} (run telic init {host})"
        elif not runs:
            detail = f"{executable} is not executable"
        else:
            detail = f"{len(changes)} files current; commands run {executable}"
        checks.append(KitCheck(f"kit {host}", not (missing or stale) and runs, detail))
    return checks
