"""Where a command's repository and ledger are, found without creating anything.

Opening an SQLite ledger creates its state directory and database. A read-only command must not
leave state behind on a path someone mistyped, so it first checks that the repository exists
and that the ledger file is there (``find_ledger``); only then does it open it.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from telic.cli._errors import EXIT_USAGE, CliError, explain_os_error

if typing.TYPE_CHECKING:
    from telic.server import ServerConfig


@dataclass(frozen=True, slots=True)
class LedgerLocation:
    """The ledger a configuration opens: its URL and, for SQLite, the database file."""

    url: str
    database: Path | None
    """The SQLite file, or ``None`` for PostgreSQL and memory ledgers."""

    def describe(self) -> str:
        """How to name this ledger to a person (never a password)."""
        if self.database is not None:
            return str(self.database)
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.scheme}://{host}{parts.path}" if host else f"{parts.scheme}://"

    @property
    def exists(self) -> bool:
        """Whether there is anything to read (a server ledger always counts as present)."""
        return self.database is None or self.database.is_file()


def locate_ledger(config: ServerConfig) -> LedgerLocation:
    """The ledger ``config`` names, resolved as ``open_ledger`` resolves it."""
    # Imported here: `telic serve` must start without the ledger package (see test_inputs).
    from telic.ledger import resolve_url, sqlite_paths

    url = resolve_url(config.database_url, config.repository_root)
    if urlsplit(url).scheme != "sqlite":
        return LedgerLocation(url, None)
    return LedgerLocation(url, sqlite_paths(url)[1])


def check_repository(config: ServerConfig) -> Path:
    """Return the repository root; raise ``CliError`` (usage) when it is not a directory."""
    root = config.repository_root
    if not root.exists():
        raise CliError(
            EXIT_USAGE,
            "no_repository",
            f"repository {root} does not exist",
            "pass an existing folder with --repository-root or TELIC_REPOSITORY_ROOT",
        )
    if not root.is_dir():
        raise CliError(
            EXIT_USAGE,
            "no_repository",
            f"repository {root} is not a folder",
            "pass the repository's top folder with --repository-root",
        )
    return root


def find_ledger(config: ServerConfig) -> LedgerLocation:
    """Check the repository, then return where its ledger is (which may not exist yet)."""
    check_repository(config)
    return locate_ledger(config)


def check_port(host: str, port: int) -> None:
    """Raise ``CliError`` when ``host:port`` is already taken (a probe; the server binds later)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                raise explain_os_error(exc, f"serve HTTP on {shown}") from None
            raise CliError(
                EXIT_USAGE,
                "bad_address",
                f"cannot serve HTTP on {shown}: {(exc.strerror or 'cannot bind').lower()}",
                "pass an address of this machine, for example --http 127.0.0.1:8765",
            ) from None


def is_git_work_tree(root: Path) -> bool:
    """Whether ``root`` is inside a git work tree (``False`` when git itself is missing)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def command_name() -> str:
    """The command a person types to run this ``telic`` again.

    ``telic`` when that name on the PATH is this installation; else the path of the running
    script (``.venv/bin/telic`` from a checkout), relative when it is under the working folder.
    """
    on_path = shutil.which("telic")
    script = Path(sys.argv[0]).absolute() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "telic":
        if on_path is not None and Path(on_path).resolve() == script.resolve():
            return "telic"
        try:
            return os.path.join(".", str(script.relative_to(Path.cwd())))
        except ValueError:
            return str(script)
    return "telic" if on_path is not None else f"{sys.executable} -m telic"
