"""The resident server: one process per places key, serving every attached session.

It opens the backend once (``OpeningBackend``) while it already listens on two Unix sockets:
the MCP socket, one ``serve_lines`` session per connection (exactly ``telic serve``'s
behaviour), and the hook socket, one ``telic.hosts.host_hook`` decision per connection. It
writes the answers file (``write_answers``) and plays the rehearsal while it warms up, says
``listening``, then ``ready`` or ``error …``, on ``--ready-fd``, and exits when idle or
signalled (docs/design.md, "``telic.resident``: the resident server").
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import os
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import anyio.to_thread

from telic._errors import TelicError
from telic.hosts import HOOK_HOSTS
from telic.resident._rehearsal import rehearse_quietly
from telic.resident._shim import (
    ANSWERS_FORMAT,
    DISCOVER,
    LISTINGS,
    MAX_HOOK_EVENT,
    connect,
)
from telic.server import (
    OpeningBackend,
    PipeLines,
    PipeWriter,
    ServerConfig,
    assemble,
    has_reports,
    say,
    serve_lines,
    server_version,
    serving_gc,
)

if TYPE_CHECKING:
    from telic.roles import Service


_CHUNK: Final = 65_536
_MAX_HOOK_EVENT: Final = MAX_HOOK_EVENT + 65_536
"""Bytes of one hook connection, at most: the largest event a hook sends (``MAX_HOOK_EVENT``;
larger ones it decides in-process) and the header line naming the repository and the host."""


@dataclass(frozen=True, slots=True)
class Sockets:
    """Where the server listens, the lock its starters hold, and where it writes its answers
    to the listings (``None``: nowhere) for the places key ``answers_key``."""

    mcp: Path
    hook: Path
    lock: Path
    answers: Path | None = None
    answers_key: str = ""


def _listen(path: Path, *, required: bool) -> tuple[socket.socket, int] | None:
    """Listen at ``path``: the socket and its inode. A live server already there: ``None``
    (or, if ``required``, an error); a stale socket file is replaced."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            listener.bind(os.fspath(path))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            other = connect(path)
            if other is not None:
                other.close()
                if required:
                    raise OSError(errno.EADDRINUSE, f"another server listens at {path}") from None
                listener.close()
                return None
            os.unlink(path)
            listener.bind(os.fspath(path))
        os.chmod(path, 0o600)
        listener.listen(64)
        listener.setblocking(False)
    except BaseException:
        listener.close()
        raise
    return listener, os.stat(path).st_ino


def _unlink_if_ours(path: Path, inode: int) -> None:
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == inode:
            os.unlink(path)


class _Activity:
    """Attached sessions and a wake-up whenever anything happens."""

    def __init__(self) -> None:
        self.sessions = 0
        self._changed = anyio.Event()

    def touch(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    @contextlib.contextmanager
    def attached(self) -> Iterator[None]:
        """Count one session (or the answers' writing) as attached while the block runs."""
        self.sessions += 1
        self.touch()
        try:
            yield
        finally:
            self.sessions -= 1
            self.touch()

    async def changed(self) -> None:
        await self._changed.wait()


async def _idle(activity: _Activity, seconds: float) -> None:
    """Return once no session has been attached and nothing happened for ``seconds``."""
    while True:
        if activity.sessions:
            await activity.changed()
            continue
        with anyio.move_on_after(seconds) as waited:
            await activity.changed()
        if waited.cancelled_caught and not activity.sessions:
            return


async def _session(connection: socket.socket, make: Callable[[], Any], activity: _Activity) -> None:
    with activity.attached(), connection:
        connection.setblocking(False)
        fd = connection.fileno()
        try:
            await serve_lines(make(), PipeLines(fd), PipeWriter(fd))
        except Exception as exc:  # one session's failure (a reset peer) ends only that one
            say(f"telic: a resident session ended: {type(exc).__name__}: {exc}")


async def _receive_all(connection: socket.socket) -> bytes:
    received = bytearray()
    while True:
        try:
            chunk = connection.recv(_CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(connection)
            continue
        if not chunk:
            return bytes(received)
        received += chunk
        if len(received) > _MAX_HOOK_EVENT:
            raise ValueError(f"a hook event is larger than {_MAX_HOOK_EVENT} bytes")


async def _send_all(connection: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[connection.send(view) :]
        except BlockingIOError:
            await anyio.wait_writable(connection)


async def _hook(
    connection: socket.socket, root: str, activity: _Activity, opened: Callable[[], Any]
) -> None:
    """Answer one hook event: ``{"output": …}``, or ``{"error": …}`` (the client denies).

    It is decided once the backend is open (``opened``), as before the server listened early:
    the decision reads the ledger the backend opens (and may migrate)."""
    activity.touch()
    with connection:
        connection.setblocking(False)
        try:
            await opened()
            received = await _receive_all(connection)
            header, _, raw = received.partition(b"\n")
            fields = json.loads(header)
            asked, host = fields.get("root"), fields.get("host", "claude-code")
            if asked != root:
                raise ValueError(f"this server decides for {root}, not {asked}")
            if host not in HOOK_HOSTS:
                raise ValueError(f"no hook for host {host!r}")
            from telic.hosts import host_hook

            decide = functools.partial(host_hook, host, raw, repository_root=root)
            output = await anyio.to_thread.run_sync(decide)
            reply: dict[str, object] = {"output": output}
        except Exception as exc:  # the hook boundary: the client turns this into a deny
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(OSError):
            await _send_all(connection, json.dumps(reply, ensure_ascii=False).encode())


async def _accept(
    listener: socket.socket, handle: Callable[[socket.socket], Any], tg: anyio.abc.TaskGroup
) -> None:
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            await anyio.wait_readable(listener)
            continue
        tg.start_soon(handle, connection)


def _drain(listener: socket.socket, handle: Callable[[socket.socket], Any], tg: Any) -> None:
    """Start a session for every connection already queued (the socket file is gone)."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        tg.start_soon(handle, connection)


def _asked(version: str, modern: bool) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The requests ``_capture`` sends for ``version``, and their methods by id."""
    client = {"name": "telic-answers", "version": "0"}
    if modern:  # no handshake: each request carries its version (``_shim._PLAIN_META``)
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": client,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        methods = (DISCOVER, *LISTINGS)
        asked = [
            {"jsonrpc": "2.0", "id": index, "method": method, "params": {"_meta": meta}}
            for index, method in enumerate(methods)
        ]
        return asked, methods
    methods = ("initialize", *LISTINGS)
    handshake = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    asked = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": handshake},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i + 1, "method": m} for i, m in enumerate(LISTINGS)),
    ]
    return asked, methods


async def _capture(make: Callable[[], Any], version: str, modern: bool) -> dict[str, str]:
    """What a session of ``make()`` answers at ``version`` to ``initialize`` (or, ``modern``,
    ``server/discover``) and then to each listing: the JSON text of each result, exactly as the
    session wrote it."""
    asked, methods = _asked(version, modern)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.setblocking(False)
        theirs.setblocking(False)
        await _send_all(theirs, b"".join(json.dumps(m).encode() + b"\n" for m in asked))
        answers: dict[str, str] = {}
        async with anyio.create_task_group() as session:
            fd = ours.fileno()
            session.start_soon(serve_lines, make(), PipeLines(fd), PipeWriter(fd))
            received = b""
            while len(answers) < len(methods):
                try:
                    chunk = theirs.recv(_CHUNK)
                except BlockingIOError:
                    await anyio.wait_readable(theirs)
                    continue
                if not chunk:
                    raise ValueError("the session ended before it answered every listing")
                *lines, received = (received + chunk).split(b"\n")
                for line in lines:
                    answers.update(_result_text(line.decode("utf-8"), methods))
            session.cancel_scope.cancel()
    return answers


def _result_text(line: str, methods: tuple[str, ...]) -> dict[str, str]:
    """``{method: result text}`` for a session's answer to one of the ``_capture`` requests."""
    message = json.loads(line)
    index = message.get("id")
    if not isinstance(index, int) or not 0 <= index < len(methods) or "method" in message:
        return {}  # a notification (a log line): not an answer
    prefix = f'{{"jsonrpc":"2.0","id":{index},"result":'
    if not (line.startswith(prefix) and line.endswith("}")):
        raise ValueError(f"the answer to {methods[index]} is not a result: {line[:200]}")
    return {methods[index]: line[len(prefix) : -1]}


async def write_answers(make: Callable[[], Any], path: Path, key: str) -> None:
    """Write the answers of ``make()``'s sessions (``_capture``, for each protocol version the
    SDK serves) to ``path`` for the places key ``key``: to a private temporary file, then
    renamed over ``path``, so a shim reads a whole file or none."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    versions = {v: await _capture(make, v, False) for v in HANDSHAKE_PROTOCOL_VERSIONS}
    versions |= {v: await _capture(make, v, True) for v in MODERN_PROTOCOL_VERSIONS}
    document = {"format": ANSWERS_FORMAT, "key": key, "answers": versions}
    data = json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")
    await anyio.to_thread.run_sync(_replace, path, data)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a private temporary file beside ``path``, then rename it over ``path``."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


async def _answers(make: Callable[[], Any], sockets: Sockets, activity: _Activity) -> None:
    """Write the answers (``write_answers``), as a session would: the server does not go idle
    before they are written."""
    if sockets.answers is None:
        return
    with activity.attached():
        try:
            await write_answers(make, sockets.answers, sockets.answers_key)
        except Exception as exc:  # no answers: the next shim relays as it did before them
            error = f"{type(exc).__name__}: {exc}"
            say(f"telic: the resident server could not write its answers: {error}")


async def _rehearse(
    opening: OpeningBackend, config: ServerConfig, scope: anyio.CancelScope
) -> None:
    """Once the backend is open, play the rehearsal (``_rehearsal``) while the host thinks;
    ``scope`` is cancelled by the first tool call of a host, which never waits for it."""
    with scope:
        try:
            await opening.backend()
        except TelicError:
            return  # said already; no session can be served
        await rehearse_quietly(config)


def _tell(ready_fd: int | None, line: str, *, last: bool = True) -> None:
    if ready_fd is None:
        return
    with contextlib.suppress(OSError):
        os.write(ready_fd, line.encode("utf-8", "replace") + b"\n")
    if last:
        with contextlib.suppress(OSError):
            os.close(ready_fd)


async def run_resident(
    config: ServerConfig, sockets: Sockets, idle: float, ready_fd: int | None = None
) -> int:
    """Serve until idle for ``idle`` seconds or signalled; return the exit code (1: the
    sockets or the backend could not be opened)."""
    root = str(config.repository_root)
    try:
        mcp = _listen(sockets.mcp, required=True)
        assert mcp is not None
        hook = _listen(sockets.hook, required=False)
    except OSError as error:
        say(f"telic: resident server for {root}: {error}")
        _tell(ready_fd, f"error cannot listen: {error}")
        return 1
    failed = anyio.Event()

    def refused(error: TelicError) -> None:
        _tell(ready_fd, f"error {error.message} ({error.code})")
        failed.set()

    opening = OpeningBackend(config, opened=lambda: _tell(ready_fd, "ready"), failed=refused)
    say(f"Telic MCP resident for {root} at {sockets.mcp} (pid {os.getpid()})")
    _tell(ready_fd, "listening", last=False)
    code = 1
    # The collector as it was afterwards: a test (or an embedding process) goes on after it.
    with serving_gc():
        async with anyio.create_task_group() as backend_group:
            backend_group.start_soon(opening.run)
            try:
                code = await _serve(config, opening, sockets, idle, (mcp, hook), failed)
            finally:
                opening.close()
    return code


async def _serve(
    config: ServerConfig,
    opening: OpeningBackend,
    sockets: Sockets,
    idle: float,
    listening: tuple[tuple[socket.socket, int], tuple[socket.socket, int] | None],
    failed: anyio.Event,
) -> int:
    version = server_version()
    reports = opening.ledger if has_reports() else None

    rehearsal = anyio.CancelScope()

    async def service() -> Service:
        rehearsal.cancel()  # a host's call: the rehearsal has done what it could
        return await opening.service()

    def make() -> Any:
        return assemble(service, version=version, ledger=reports, schemas=config.schemas)

    root = str(config.repository_root)
    activity = _Activity()

    def start_session(connection: socket.socket) -> Any:
        return _session(connection, make, activity)

    def start_hook(connection: socket.socket) -> Any:
        return _hook(connection, root, activity, opening.ledger)

    mcp, hook = listening
    served = [(sockets.mcp, *mcp, start_session)]
    if hook is not None:
        served.append((sockets.hook, *hook, start_hook))
    try:
        async with anyio.create_task_group() as sessions:
            sessions.start_soon(_answers, make, sockets, activity)
            sessions.start_soon(_rehearse, opening, config, rehearsal)
            async with anyio.create_task_group() as accepting:
                for _, listener, _, handle in served:
                    accepting.start_soon(_accept, listener, handle, sessions)

                async def stop_when_idle() -> None:
                    await _idle(activity, idle)
                    accepting.cancel_scope.cancel()

                async def stop_on_failure() -> None:
                    await failed.wait()  # its one line is said; no session can be served
                    sessions.cancel_scope.cancel()

                async def stop_on_signal() -> None:
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for _ in signals:
                            sessions.cancel_scope.cancel()
                            return

                accepting.start_soon(stop_when_idle)
                accepting.start_soon(stop_on_signal)
                accepting.start_soon(stop_on_failure)
            # Idle: no new connection may find these sockets; serve what was already queued.
            with _locked(sockets.lock):
                for path, _, inode, _ in served:
                    _unlink_if_ours(path, inode)
            for _, listener, _, handle in served:
                _drain(listener, handle, sessions)
    finally:
        for path, listener, inode, _ in served:
            _unlink_if_ours(path, inode)
            listener.close()
    if failed.is_set():
        return 1
    say(f"Telic MCP resident for {root} stopped")
    return 0


@contextlib.contextmanager
def _locked(path: Path) -> Any:
    """Hold the start lock if it can be had at once; a shim holding it is starting a successor
    (it found no server), so the sockets are removed either way."""
    try:
        handle = open(path, "a+b")  # noqa: SIM115  # closed below, after the lock is released
    except OSError:
        yield
        return
    with handle:
        with contextlib.suppress(OSError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
