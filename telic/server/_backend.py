"""The service and ledger a command or a server works on, opened without the MCP SDK.

``telic runs``, ``show``, ``report`` and the other commands that only read open the same
backend as ``telic serve``; keeping it apart from the transports means they never import the
MCP SDK (most of a second).
"""

from __future__ import annotations

import gc
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread

from telic._errors import LedgerError, TelicError
from telic.server._config import ServerConfig
from telic.server._schemas import prepare_schemas

if TYPE_CHECKING:
    from telic.ledger import Ledger
    from telic.roles import Service


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


def server_version() -> str:
    """The installed Telic's version, as the MCP handshake reports it ("" when not installed)."""
    try:
        return importlib.metadata.version("telic")
    except importlib.metadata.PackageNotFoundError:
        return ""


def say(message: str) -> None:
    """Print one line of the server's to stderr, at once."""
    print(message, file=sys.stderr, flush=True)


# What the first tool call needs beyond the start-up imports: loaded in a worker thread while
# the server already answers the handshake and the listing (``telic serve`` and the resident
# server alike).
_BACKEND_MODULES: Final = ("telic.ledger", "telic.roles", "telic.protocol", "telic.server._args")


def load_backend_modules() -> None:
    for name in _BACKEND_MODULES:
        importlib.import_module(name)


REPORTED: Final = "telic serve reported this error on stderr when it happened"
"""The note on an error ``serve`` raises after it already printed the error's one line."""


class OpeningBackend:
    """The backend, opened by a task of its own while the server already serves.

    Tools await ``service()``; the backend closes when ``close()`` is called, in the task that
    opened it (its task groups must be left where they were entered). ``opened`` is called once
    the backend is open (stdio announces readiness then). A Telic error while opening (a broken
    or read-only ledger, a state directory inside the repository) is printed as one line with
    its code, ``failure`` keeps it, ``failed`` is called with it, and every tool call raises it,
    so each gets an error envelope with that code instead of a closed connection; ``serve``
    raises it on the way out.
    """

    def __init__(
        self,
        config: ServerConfig,
        opened: Callable[[], None] = lambda: None,
        failed: Callable[[TelicError], None] = lambda _: None,
    ) -> None:
        self._config = config
        self._opened = opened
        self._failed = failed
        self._ready = anyio.Event()
        self._closing = anyio.Event()
        self._backend: Backend | None = None
        self.failure: TelicError | None = None

    async def run(self) -> None:
        """Open the backend, serve it until ``close()``, then close it."""
        await anyio.to_thread.run_sync(load_backend_modules)
        if self._closing.is_set():
            return
        async with AsyncExitStack() as stack:
            # Beside the open, not before it: what the first schema-carrying result would build.
            preparing = await stack.enter_async_context(anyio.create_task_group())
            preparing.start_soon(anyio.to_thread.run_sync, prepare_schemas, self._config.schemas)
            try:
                try:
                    backend = await stack.enter_async_context(open_backend(self._config))
                except OSError as exc:  # what no layer below named: still one typed line
                    reason = (exc.strerror or type(exc).__name__).lower()
                    where = f" {exc.filename}" if exc.filename else ""
                    raise LedgerError(f"the ledger cannot be opened:{where} {reason}") from None
            except TelicError as error:
                say(f"telic: {error.message} ({error.code})")
                error.add_note(REPORTED)
                self.failure = error
                self._ready.set()
                self._failed(error)
                return
            self._backend = backend
            gc.freeze()  # what is loaded and open now lives as long as the server: see serving_gc
            self._ready.set()
            self._opened()
            await self._closing.wait()

    def close(self) -> None:
        """Let ``run`` close the backend (or not open it at all)."""
        self._closing.set()

    async def backend(self) -> Backend:
        """The open backend, once it is open; raises the error that kept it from opening."""
        await self._ready.wait()
        if self.failure is not None:
            raise self.failure.with_traceback(None)
        assert self._backend is not None
        return self._backend

    async def service(self) -> Service:
        """The open service, once it is open."""
        return (await self.backend()).service

    async def ledger(self) -> Ledger:
        """The open ledger, once it is open."""
        return (await self.backend()).ledger


_YOUNG_COLLECTION: Final = 10_000
"""Net allocations between two young-generation collections while serving (CPython's is 700)."""


@contextmanager
def serving_gc() -> Iterator[None]:
    """The cyclic garbage collector tuned for a long-lived server, restored on the way out.

    With CPython's defaults a server under load (16 HTTP clients) spent 6-10 % of its time
    collecting, most of it in full collections that walk every object the imports and the open
    backend created, about 0.1 s each, several times a minute. Those objects are frozen once the
    backend is open, so full collections skip them, and young collections run every 10,000 net
    allocations instead of 700: a call allocates thousands of short-lived objects, nearly all
    freed by reference counting, so fewer of them survive into older generations.
    """
    previous = gc.get_threshold()
    gc.set_threshold(_YOUNG_COLLECTION, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
