"""The service and ledger a command or a server works on, opened without the MCP SDK.

``telic runs``, ``show``, ``report`` and the other commands that only read open the same
backend as ``telic serve``; keeping it apart from the transports means they never import the
MCP SDK (most of a second).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from telic.server._config import ServerConfig
from telic.server._service import Service

if TYPE_CHECKING:
    from telic.ledger import Ledger

__all__ = ["Backend", "has_reports", "open_backend", "open_default_service", "reports_module"]


def reports_module() -> Any | None:
    """Return ``telic.reports`` when that package is installed, else ``None``."""
    try:
        return importlib.import_module("telic.reports")
    except ImportError:
        return None


def has_reports() -> bool:
    """Whether ``telic.reports`` is installed, without importing it (it is slow to import)."""
    return importlib.util.find_spec("telic.reports") is not None


@dataclass(frozen=True, slots=True)
class Backend:
    """An open service and the ledger under it (reports read the ledger directly)."""

    service: Service
    ledger: Ledger


@asynccontextmanager
async def open_backend(config: ServerConfig) -> AsyncIterator[Backend]:
    """Open the ledger for ``config`` and ``telic.roles.open_service`` over it."""
    from telic.ledger import open_ledger
    from telic.roles import open_service

    root = config.repository_root
    async with (
        open_ledger(config.database_url, repository_root=root) as ledger,
        open_service(
            ledger=ledger,
            repository_root=str(root),
            state_dir=None if config.state_dir is None else str(config.state_dir),
        ) as service,
    ):
        if not os.environ.get("TELIC_OTEL"):
            yield Backend(service, ledger)
            return
        # Only now pay for the telemetry imports: spans go to the configured tracer provider.
        from telic.server._observed import observed
        from telic.telemetry import telemetry_from_env

        observer = telemetry_from_env()
        try:
            yield Backend(observed(service, ledger, observer), ledger)
        finally:
            if observer is not None:
                observer.close()


@asynccontextmanager
async def open_default_service(config: ServerConfig) -> AsyncIterator[Service]:
    """Open ``telic.roles.open_service`` for ``config``."""
    async with open_backend(config) as backend:
        yield backend.service
