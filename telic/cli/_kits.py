"""``telic init <host>`` and ``telic hook <host>`` as ``telic`` subcommands.

``telic hook`` normally never reaches here (``telic.cli._entry`` runs it before the full command
line loads); it is registered so that ``telic --help`` lists it and ``telic hook … --json``-style
mistakes get argparse's usage error.
"""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import anyio.to_thread

from telic.cli._console import print_json

if typing.TYPE_CHECKING:
    from telic.server import ServerConfig


_Add = Callable[..., argparse.ArgumentParser]


def add_host_commands(add: _Add) -> None:
    """Register ``init`` and ``hook`` with the ``add`` helper of ``telic._main._parser``."""
    from telic.hosts import HOOK_HOSTS, HOSTS, RESIDENT_BY_DEFAULT

    init = add("init", "write (or merge) a host's project files for Telic")
    init.add_argument("host", choices=HOSTS)
    init.add_argument("--repository", metavar="DIR", help="the project (default: the repository)")
    init.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    lifecycle = init.add_mutually_exclusive_group()
    lifecycle.add_argument(
        "--resident",
        dest="resident",
        action="store_const",
        const=True,
        help="configure the MCP server as serve --resident (the default on POSIX)",
    )
    lifecycle.add_argument(
        "--in-process",
        dest="resident",
        action="store_const",
        const=False,
        help="configure a server per host session instead (see docs/hosts.md)",
    )
    init.set_defaults(resident=RESIDENT_BY_DEFAULT)

    hook = add("hook", "decide a host's tool call (the host's hook event JSON on stdin)")
    hook.add_argument("host", nargs="?", choices=HOOK_HOSTS, help="default: claude-code")
    hook.add_argument("--host", dest="host_option", choices=HOOK_HOSTS, help="the same, named")
    hook.set_defaults(json=False)


def kit_cast_turns(config: ServerConfig, root: Path) -> int:
    """The cast subagent's turn cap for ``root``'s kit, from the server's cast-type ceilings."""
    from telic.hosts import cast_turn_ceiling
    from telic.ledger import default_state_dir

    state_dir = config.state_dir or default_state_dir(root)
    return cast_turn_ceiling(state_dir, root)


async def _init(config: ServerConfig, args: argparse.Namespace) -> int:
    return await anyio.to_thread.run_sync(_init_now, config, args)


def _init_now(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.hosts import diff, plan_kit, write_kit

    root = Path(args.repository).resolve() if args.repository else config.repository_root
    resident: bool = args.resident
    changes = plan_kit(args.host, root, resident=resident, cast_turns=kit_cast_turns(config, root))
    if not args.dry_run:
        write_kit(root, changes)
    written = [c.path for c in changes if c.changed]
    if args.json:
        print_json(
            {
                "host": args.host,
                "repository": str(root),
                "dryRun": bool(args.dry_run),
                "server": "resident" if resident else "per-session",
                "files": [{"path": c.path, "changed": c.changed} for c in changes],
                "diff": diff(changes) if args.dry_run else None,
            }
        )
    elif args.dry_run:
        sys.stdout.write(diff(changes) or f"{args.host} kit in {root} is already current\n")
    else:
        for change in changes:
            state = "unchanged" if not change.changed else ("updated" if change.before else "new")
            print(f"{state:>9}  {root / change.path}")
        if not written:
            print(f"{args.host} kit in {root} is already current")
        print(_SERVER_LINE[resident].format(host=args.host))
    return 0


_SERVER_LINE: Final = {
    True: "server: serve --resident, one warm server for this project's host sessions "
    "(it exits when idle, after 15 minutes unless TELIC_RESIDENT_IDLE says otherwise; telic init "
    "{host} --in-process gives each session its own)",
    False: "server: serve, a server per host session (telic init {host} --resident shares one "
    "warm server, on POSIX)",
}


async def _hook(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.cli._entry import hook_command

    host = args.host_option or args.host or "claude-code"
    return await anyio.to_thread.run_sync(hook_command, host, str(config.repository_root))


HOST_COMMANDS: Final[dict[str, Callable[[ServerConfig, argparse.Namespace], Awaitable[int]]]] = {
    "init": _init,
    "hook": _hook,
}
