"""The ``telic`` console script's first stop: route ``telic hook`` before anything heavy loads.

A host runs ``telic hook <host>`` (Claude Code, Codex, Cursor, VS Code) in a fresh process
before every matching tool call, so that command must not import the MCP server, the actor
system or the models (most of a second): it asks the repository's resident server, if one
listens, with the standard library only, and otherwise decides in-process. ``telic serve
--resident`` is the standard-library shim that attaches to (or starts) that resident server
(``telic.resident``). Every other command goes on to ``telic.cli._main``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not ``typing``'s: ``telic serve --resident`` imports no ``typing``
if TYPE_CHECKING:
    from collections.abc import Sequence


HOSTS_WITH_HOOKS = ("claude-code", "codex", "cursor", "vscode")
"""``telic.hosts.HOOK_HOSTS``, spelled out so that this module imports nothing (a test checks
that the two agree)."""


def _split(argv: Sequence[str]) -> tuple[str | None, str | None, list[str]]:
    """Return ``(repository root option, command, the command's arguments)``."""
    root: str | None = None
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--repository-root" and index + 1 < len(argv):
            root, index = argv[index + 1], index + 2
        elif word.startswith("--repository-root="):
            root, index = word.split("=", 1)[1], index + 1
        elif word.startswith("-"):
            return root, None, []
        else:
            return root, word, list(argv[index + 1 :])
    return root, None, []


def _hook_host(rest: Sequence[str]) -> str | None:
    """The host of ``telic hook [HOST | --host HOST]`` (Claude Code when none is named), or
    ``None`` for any other spelling, which the full command line then explains."""
    if not rest:
        return "claude-code"
    if len(rest) == 1 and not rest[0].startswith("-"):
        return rest[0]
    if len(rest) == 2 and rest[0] == "--host":
        return rest[1]
    if len(rest) == 1 and rest[0].startswith("--host="):
        return rest[0].split("=", 1)[1]
    return None


def _thread_wait_forever() -> None:
    import _thread

    lock = _thread.allocate_lock()
    lock.acquire()
    lock.acquire()


def hook_command(host: str, repository_root: str | None, watched: bool = False) -> int:
    """Run ``telic hook <host>``: read the event on stdin, print the answer, exit 0.

    Every failure is a deny in the host's format with exit 0 (``run_hook``); should even that
    fail, the reason goes to stderr with exit 2, which Claude Code, Codex and Cursor document as
    blocking. ``watched`` (the console script's own process only): a ``Deadline`` answers a
    deny itself should the decision take longer than ``HOOK_DEADLINE``. An unknown host is a
    usage error (exit 2, naming the rule ``hook.host``).
    """
    if host not in HOSTS_WITH_HOOKS:
        known = ", ".join(HOSTS_WITH_HOOKS)
        print(f"telic: hook.host: no hook for host {host!r} (known: {known})", file=sys.stderr)
        return 2
    import os

    from telic.resident import Deadline, run_hook

    raw = sys.stdin.buffer.read()
    deadline = Deadline(host, raw) if watched else None
    output: str | None = None
    failed: Exception | None = None
    try:
        output = run_hook(host, raw, repository_root, os.environ)
    except Exception as exc:  # not even a deny could be written: exit 2 blocks in every host
        failed = exc
    if deadline is not None and not deadline.claim():
        _thread_wait_forever()  # the watchdog is writing its deny and ends the process
    if failed is not None:
        print(f"telic: hook.failed: the tool call is denied: {failed!r}", file=sys.stderr)
        return 2
    if output is not None:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()
    return 0


def _exit_now(code: int) -> None:
    """End the console script's hook process without the interpreter's teardown.

    The answer is written and flushed and the ledger connection closed (the decision closes
    it), so what is left is freeing every imported module's objects, which costs a hook call
    tens of milliseconds while Claude Code waits. Only the console script exits this way;
    ``main(argv)`` called in a process returns.
    """
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``telic`` command; return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    root, command, rest = _split(args)
    host = _hook_host(rest) if command == "hook" else None
    if host is not None:
        code = hook_command(host, root, watched=argv is None)
        if argv is None:
            _exit_now(code)
        return code
    if command == "serve" and "--resident" in rest:
        from telic.resident import serve_resident

        return serve_resident(rest, root)
    from telic.cli._main import main as full

    return full(args)
