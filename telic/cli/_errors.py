"""The CLI's errors: what was wrong, which run, ledger or repository, and what to do.

``CliError`` is raised by the commands themselves; ``leaf`` digs the real error out of
exception groups; ``explain_os_error`` turns an ``OSError`` into one plain line; ``EXIT_*`` are
the exit codes. Nothing here prints: ``_main`` decides the stream and the exit code.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Final

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NOT_FOUND: Final = 3
EXIT_INTERRUPTED: Final = 130


@dataclass(frozen=True)
class CliError(Exception):
    """A failure to report in one or two lines and exit with ``exit_code``."""

    exit_code: int
    kind: str
    """A stable snake_case code (the JSON ``code``)."""
    message: str
    """What was wrong, naming the id, ledger or repository."""
    hint: str = ""
    """What to do about it, when there is something to do."""

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  {self.hint}"


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def explain_os_error(exc: OSError, doing: str) -> CliError:
    """One line for an ``OSError`` met while ``doing`` something (no Python text)."""
    what = exc.strerror or "operating system error"
    where = f" {exc.filename}:" if exc.filename else ""
    if exc.errno == errno.EADDRINUSE:
        return CliError(
            EXIT_FAILURE,
            "address_in_use",
            f"cannot {doing}: the address is already in use",
            "stop the other server or pick another port with --http HOST:PORT",
        )
    return CliError(
        EXIT_FAILURE, "os_error", f"cannot {doing}:{where} {what[:1].lower()}{what[1:]}"
    )
