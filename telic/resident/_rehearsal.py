"""The rehearsal: one report_only run played once on a scratch service as the server warms up.

A resident server started cold has imported its modules by the time its backend is open, but the
first run a host starts still pays for everything a first call does once: the lazily imported
modules of each tool, pydantic's first validation of each model, the drafts' rule statements,
the schema emitter's tables, the envelope. A host's model thinks for seconds before its first
``telic_start_run``; the server spends part of that time playing one complete report_only run
(start, ground, the four phase artifacts, the report) through its own MCP tools against a
throwaway in-memory ledger in a scratch directory, so that the host's first run goes as a run on
a warm server does (``benchmarks/startup.py --think 2000``; the row is in docs/performance.md).

Nothing of the rehearsal reaches the server's ledger, repository or telemetry: its service is
its own, opened over ``memory://`` with a scratch repository and state directory, and it is gone
when the rehearsal ends. A rehearsal that fails costs nothing but its line on stderr.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from telic._errors import UsageError
from telic.server import ServerConfig, build_server, say

if TYPE_CHECKING:
    from telic.demo import Change


_REQUEST = "Summarise what this repository is for"
_GOAL = "A short summary"


class _NoWorkspace:
    """report_only does no native work: a rehearsal that asks for any is a bug."""

    def diagnose(self) -> str:
        raise UsageError("a report_only rehearsal does no native work")

    def apply_fix(self) -> Change:
        raise UsageError("a report_only rehearsal does no native work")

    def verify(self) -> str:
        raise UsageError("a report_only rehearsal does no native work")


def _places(scratch: Path) -> tuple[Path, Path]:
    """A repository and a state directory beside it, as the service requires."""
    repository, state = scratch / "repository", scratch / "state"
    repository.mkdir()
    state.mkdir()
    return repository, state


async def rehearse(config: ServerConfig) -> str:
    """Play one report_only run on a scratch service, its tools as ``config`` serves them (the
    schema mode); return how the run ended ("completed")."""
    # Imported here, once the backend is open: the server's own start-up does not wait for them.
    from mcp import Client

    from telic.demo import TelicTools, drive_mode
    from telic.roles import open_service

    with tempfile.TemporaryDirectory(prefix="telic-rehearsal-") as scratch:
        repository, state = _places(Path(scratch))
        async with (
            open_service(
                database_url="memory://", repository_root=repository, state_dir=state
            ) as service,
            Client(build_server(service, schemas=config.schemas)) as client,
        ):
            driver = await drive_mode(
                TelicTools(client), "report_only", _NoWorkspace(), request=_REQUEST, goal=_GOAL
            )
            return str(driver.action.get("status", ""))


async def rehearse_quietly(config: ServerConfig) -> None:
    """``rehearse``, saying a failure on stderr instead of raising it (it is only tuning)."""
    try:
        await rehearse(config)
    except Exception as exc:
        say(f"telic: the resident server's rehearsal failed: {type(exc).__name__}: {exc}")
