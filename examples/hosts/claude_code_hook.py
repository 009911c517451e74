#!/usr/bin/env python3
"""Claude Code PreToolUse hook: ask Telic before a native tool runs, block it on deny.

Claude Code runs this before each tool call with a JSON event on stdin. The hook maps the tool to
a Telic capability and target, calls ``telic_check_tool_action`` on a short-lived ``telic serve``
(stdio, official MCP client), and exits 2 with the reason on stderr when Telic denies it — which
makes Claude Code block the call and show the reason to the model. It allows the call (exit 0)
when no run is active. Set ``TELIC_RUN_ID`` to the run the session is driving; with
``TELIC_HOOK_STRICT=1`` a failure to reach Telic blocks too (fail closed).

Configure in ``.claude/settings.json``::

    {"hooks": {"PreToolUse": [{"matcher": "Edit|Write|MultiEdit|Bash|Read|WebFetch",
      "hooks": [{"type": "command", "command": "python3 examples/hosts/claude_code_hook.py"}]}]}}
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

BLOCK = 2
READ_ONLY_COMMANDS = {"git status": "git.status", "git diff": "git.diff", "git log": "git.log"}


def classify(tool: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """Map a Claude Code tool call to (capability, target); ``None`` when Telic has no say."""
    root = os.environ.get("CLAUDE_PROJECT_DIR", os.getcwd())
    path = str(arguments.get("file_path") or arguments.get("path") or "")
    if path.startswith(root):
        path = os.path.relpath(path, root)
    if tool in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
        return "repository.write", path or "."
    if tool in ("Read", "Glob", "Grep"):
        return "repository.read", path or "."
    if tool == "Bash":
        command = str(arguments.get("command", "")).strip()
        if command in READ_ONLY_COMMANDS:
            return "shell.inspect", READ_ONLY_COMMANDS[command]
        return "shell.execute", command or "-"
    if tool in ("WebFetch", "WebSearch"):
        return "network.read", str(arguments.get("url") or "https://search.invalid/")
    if tool == "Task":
        return "subagent.spawn", "task"
    return None


async def check(run_id: str, capability: str, target: str) -> dict[str, Any]:
    """Ask a short-lived ``telic serve`` for the decision."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("TELIC_", "PATH", "HOME"))}
    server = StdioServerParameters(command=sys.executable, args=["-m", "telic", "serve"], env=env)
    async with Client(server) as client:
        result = await client.call_tool(
            "telic_check_tool_action",
            {"run_id": run_id, "capability": capability, "target": target[:2048]},
        )
    envelope = result.structured_content
    return envelope if isinstance(envelope, dict) else {"ok": False, "error": "no envelope"}


def main() -> int:
    event = json.load(sys.stdin)
    run_id = os.environ.get("TELIC_RUN_ID")
    mapped = classify(str(event.get("tool_name", "")), dict(event.get("tool_input") or {}))
    if not run_id or mapped is None:
        return 0
    strict = os.environ.get("TELIC_HOOK_STRICT") == "1"
    try:
        envelope = anyio.run(check, run_id, *mapped)
    except Exception as exc:  # the hook boundary: never crash the host
        print(f"Telic check failed: {exc}", file=sys.stderr)
        return BLOCK if strict else 0
    if not envelope.get("ok"):
        print(f"Telic refused the check: {envelope.get('error')}", file=sys.stderr)
        # Past the run's cap of check records the action counts as denied, strict or not.
        return BLOCK if strict or envelope.get("code") == "limit_exceeded" else 0
    decision = envelope.get("decision") or {}
    if decision.get("allowed"):
        return 0
    layer = decision.get("decidingLayer") or "policy"
    reasons = f"{decision.get('reason') or 'outside the run authority'} (layer: {layer})"
    print(f"Telic denies {mapped[0]} on {mapped[1]!r}: {reasons}", file=sys.stderr)
    return BLOCK


if __name__ == "__main__":
    sys.exit(main())
