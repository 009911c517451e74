"""``python -m telic.resident``: the resident server process a shim starts (not for users).

The shim (``_shim``) passes every place explicitly, so the server never recomputes a key that
could disagree with the one the shim connects to.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from telic._errors import TelicError
from telic.resident._server import Sockets, run_resident
from telic.server import ServerConfig


def main(argv: list[str] | None = None) -> int:
    """Parse the shim's arguments and serve; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m telic.resident")
    parser.add_argument("--repository-root", required=True)
    parser.add_argument("--schemas", choices=("full", "once"), required=True)
    parser.add_argument("--socket", required=True, type=Path)
    parser.add_argument("--hook-socket", required=True, type=Path)
    parser.add_argument("--lock", required=True, type=Path)
    parser.add_argument("--ready-fd", type=int, default=None)
    parser.add_argument("--idle", type=float, required=True)
    parser.add_argument("--answers", type=Path, default=None)
    parser.add_argument("--answers-key", default="")
    args = parser.parse_args(argv)
    try:
        config = ServerConfig.from_env(repository_root=args.repository_root, schemas=args.schemas)
    except TelicError as error:
        print(f"telic: {error.message} ({error.code})", file=sys.stderr)
        return 2
    sockets = Sockets(
        mcp=args.socket,
        hook=args.hook_socket,
        lock=args.lock,
        answers=args.answers,
        answers_key=args.answers_key,
    )
    return anyio.run(run_resident, config, sockets, args.idle, args.ready_fd)


if __name__ == "__main__":
    sys.exit(main())
