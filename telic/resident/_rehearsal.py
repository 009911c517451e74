"""The rehearsal: one report_only run played once on a scratch service as the server warms up.

So that a host's first run meets code that has all run once (lazy imports, pydantic's first
validations, the emitter's tables) while its model still thinks. Nothing of it reaches the
server's ledger, repository or telemetry: its service is its own, over ``memory://`` in a
temporary directory. A failure is one line on stderr (docs/design.md, "Rehearsal").
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
