"""PostgreSQL going away is a typed ``LedgerError`` and never a traceback (issue 28, item 6).

The ledger reaches the real test server through a TCP relay of the test's own; closing the relay
cuts every connection and refuses new ones, as a server that went away does, without stopping
the server the other tests share. Every call then fails with ``ledger_error`` naming what
happened, and asyncpg's pool, which keeps trying to reconnect its floor, logs each attempt as
one line with its reason instead of a traceback.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from ledgerkit import event, start

from telic._errors import LedgerError
from telic.controller import StartRequest
from telic.ledger import open_ledger

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@contextmanager
def relay(url: str) -> Iterator[tuple[str, Callable[[], None]]]:
    """A URL reaching ``url``'s server through a relay, and the function that cuts the relay
    (every open connection and the listener) and returns once it is cut."""
    parts = urlsplit(url)
    target = (parts.hostname or "127.0.0.1", parts.port or 5432)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    port = listener.getsockname()[1]
    closing = threading.Event()
    open_sockets: list[socket.socket] = []

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while not closing.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            server = socket.create_connection(target)
            open_sockets.extend((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()
        listener.close()
        for end in open_sockets:
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{port}"
    relayed = urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))

    def cut() -> None:
        closing.set()
        thread.join(5)
        assert not thread.is_alive()

    try:
        yield relayed, cut
    finally:
        cut()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_postgres_going_away_is_a_ledger_error_and_no_traceback(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="asyncpg")
    with relay(postgres_url) as (url, cut):
        async with open_ledger(url) as ledger:
            await start(ledger)
            assert (await ledger.get_run("run-1")).version == 1
            cut()  # PostgreSQL goes away
            calls = {
                "get_run": lambda: ledger.get_run("run-1"),
                "list_runs": lambda: ledger.list_runs(),
                "record_events": lambda: ledger.record_events("run-1", [event("noted")]),
                "verify_run": lambda: ledger.verify_run("run-1"),
            }
            for name, call in calls.items():
                with pytest.raises(LedgerError) as caught:
                    await call()
                assert caught.value.code == "ledger_error", name
                assert "unreachable" in caught.value.message or "PostgreSQL" in caught.value.message
    assert not [r for r in caplog.records if r.exc_info or r.exc_text]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_through_the_service_every_call_gets_ledger_error(
    postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.telic.roles.kit import ServiceFlow, serving

    caplog.set_level(logging.WARNING)
    with relay(postgres_url) as (url, cut):
        async with open_ledger(url) as ledger, serving(tmp_path, ledger=ledger) as (service, _):
            flow = await ServiceFlow.start(service)
            cut()
            calls = {
                "get_run": lambda: service.get_run(flow.b.run_id),
                "list_runs": lambda: service.list_runs(),
                "ground": lambda: flow.ground(),
                "check_tool_action": lambda: service.check_tool_action(
                    flow.b.run_id, "repository.read", "src/app.py"
                ),
                "start_run": lambda: service.start_run(
                    StartRequest("Find the limit", "analyze_only")
                ),
            }
            for name, call in calls.items():
                with pytest.raises(LedgerError) as caught:
                    await call()
                assert caught.value.code == "ledger_error", name
    assert not [r for r in caplog.records if r.exc_info or r.exc_text]
