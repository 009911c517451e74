"""``telic serve --resident`` and the hook's client: attach to the resident server, or start it.

Standard library only (built-in and C modules on the warm path), imported by
``telic.cli._entry`` before anything heavy. It connects to the server of its places key, or
starts one under the start lock; answers a host's handshake and listings from the answers file
while that server warms up; then relays bytes both ways. A server that ends the session first
is one line on stderr and exit 1. The key, start, answers and hook rules are in docs/design.md,
"``telic.resident``: the resident server".
"""

from __future__ import annotations

import _json
import _socket
import errno
import os
import sys
import time

from telic.resident._places import (
    Places,
    ResidentError,
    check_private,
    code_fingerprint,
    env_seconds,
    idle_seconds,
    places_for,
    private_dir,
)

TYPE_CHECKING = False  # not ``typing``'s: the warm path imports no Python-source module
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Final


HOOK_WAIT: Final = 10.0
"""Seconds the hook waits for the resident server in all (connecting, sending, the answer): a
third of the ``timeout`` every kit gives the hook (``telic.hosts._kits.HOOK_TIMEOUT_SECONDS``,
30), so a hung server is a deny the hook writes, never a hook the host kills (which Claude Code
and Codex let through)."""
HOOK_DEADLINE: Final = 20.0
"""Seconds the whole hook may take (the in-process decision included: a locked SQLite ledger, a
PostgreSQL server that does not answer) before ``Deadline`` writes a deny itself and ends the
process: more than ``HOOK_WAIT``, two thirds of the kits' hook ``timeout``."""
MAX_HOOK_EVENT: Final = 4 * 1024 * 1024
"""Bytes of one hook event the resident server reads, at most (Claude Code's events are a few
kilobytes); a larger event is decided in-process, which reads any size."""
_CHUNK: Final = 65_536
_FAILURE_WAIT: Final = 2.0
"""Seconds a shim whose session ended waits for its server's ``error …`` line (it is written
before the sessions end, so only a server that ended a session while still opening waits)."""
_REFUSED: Final = (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK)
ANSWERS_FORMAT: Final = 1
"""The version of the answers file's layout; a file of another layout is not read."""
LISTINGS: Final = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
ANSWERED_METHODS: Final = ("initialize", *LISTINGS)
"""The requests a shim answers from the answers file while its server warms up, for a protocol
version with a handshake: their answers depend only on the server's code and settings (the
places key), never on the ledger or the caller. ``prompts/get`` is not among them: its text is
made from the caller's arguments. For a protocol version without one (2026-07-28 on), whose
every request carries its version in ``_meta``, ``server/discover`` stands for ``initialize``."""
DISCOVER: Final = "server/discover"
_VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"
_PLAIN_META: Final = frozenset(
    {
        _VERSION_META,
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
    }
)
"""The ``_meta`` keys a request answered from the answers may carry (a progress token, say,
is the server's to honour)."""


class ServeOptions:
    """What ``telic serve --resident`` was asked for (a plain class: no ``typing``)."""

    __slots__ = ("repository_root", "schemas")

    def __init__(self, repository_root: str, schemas: str) -> None:
        self.repository_root = repository_root
        self.schemas = schemas

    def __repr__(self) -> str:
        return f"ServeOptions({self.repository_root!r}, {self.schemas!r})"


class Connection(_socket.socket):
    """A Unix stream socket that closes at the end of a ``with`` block.

    ``socket.socket`` without the ``socket`` module, whose import (``selectors``, ``enum``)
    was a seventh of the shim's start; the C socket has every method the shim uses."""

    readiness: int | None = None
    """The read end of the server's readiness pipe, when this shim started the server."""

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the socket and the readiness pipe."""
        if self.readiness is not None:
            os.close(self.readiness)
            self.readiness = None
        super().close()

    def backend_failure(self) -> str | None:
        """After the server ended the session: the ``error …`` it said on the readiness pipe
        (the backend could not open), if this shim started it and it said one."""
        if self.readiness is None:
            return None
        said = _read_ready(self.readiness, _FAILURE_WAIT)
        return said.removeprefix("error ") if said.startswith("error ") else None


def parse_serve(
    words: Sequence[str], root_option: str | None, environ: Mapping[str, str]
) -> ServeOptions:
    """Parse the arguments after ``serve``. Raises ``ResidentError`` naming the rule.

    Only ``--resident``, ``--schemas full|once`` and ``--repository-root`` go with
    ``--resident``: HTTP is already a shared, long-lived server.
    """
    root, schemas = root_option, None
    index = 0
    while index < len(words):
        word, value = words[index], None
        if "=" in word and word.startswith("--"):
            word, value = word.split("=", 1)
        if word == "--resident" and value is None:
            index += 1
            continue
        if word in ("--schemas", "--repository-root"):
            if value is None:
                if index + 1 >= len(words):
                    raise ResidentError("serve.arguments", f"{word} needs a value")
                value, index = words[index + 1], index + 1
            if word == "--schemas":
                schemas = value
            else:
                root = value
            index += 1
            continue
        raise ResidentError("serve.resident", f"{words[index]} cannot be combined with --resident")
    chosen = (schemas or environ.get("TELIC_SCHEMAS") or "once").strip().lower()
    if chosen not in ("full", "once"):
        where = "--schemas" if schemas else "TELIC_SCHEMAS"
        raise ResidentError("serve.schemas", f"{where}: {chosen!r} is not one of full, once")
    path = os.path.realpath(root or environ.get("TELIC_REPOSITORY_ROOT") or os.getcwd())
    if not os.path.isdir(path):
        raise ResidentError("serve.repository_root", f"{path} is not a directory")
    return ServeOptions(path, chosen)


def connect(path: str | os.PathLike[str], timeout: float | None = None) -> Connection | None:
    """A connection to the server listening at ``path``; ``None`` when nothing listens there.

    ``timeout``: seconds a connection may take (a server whose backlog is full, never
    accepting) before ``ResidentError``; ``None`` waits."""
    client = Connection(_socket.AF_UNIX, _socket.SOCK_STREAM)
    client.settimeout(timeout)
    try:
        client.connect(os.fspath(path))
    except OSError as exc:
        client.close()
        if exc.errno in _REFUSED:
            return None
        raise ResidentError("resident.connect", f"cannot connect to {path}: {exc}") from None
    return client


def _last_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            lines = log.read().strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _spawn(places: Places, options: ServeOptions, environ: Mapping[str, str]) -> int:
    """Start the server and wait until it listens; raises ``ResidentError`` if it does not.

    Returns the read end of its readiness pipe, on which ``ready`` or ``error …`` follows once
    the backend opened or failed to (the caller closes it)."""
    import contextlib
    import subprocess  # only a shim that starts a server pays for these imports

    name = "TELIC_RESIDENT_START_TIMEOUT"
    timeout = env_seconds(environ, name, 30.0, 600, "resident.start_timeout")
    idle = idle_seconds(environ)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(places.socket)  # stale: nothing answered on it, and we hold the lock
    reading, writing = os.pipe()
    flags = {
        "--repository-root": options.repository_root,
        "--schemas": options.schemas,
        "--socket": places.socket,
        "--hook-socket": places.hook_socket,
        "--lock": places.lock,
        "--ready-fd": str(writing),
        "--idle": str(idle),
        "--answers": answers_path(places),
        "--answers-key": places.key,
    }
    command = [sys.executable, "-m", "telic.resident", *(w for f in flags.items() for w in f)]
    try:
        log = os.open(places.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            server = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                pass_fds=(writing,),
                start_new_session=True,
                cwd=options.repository_root,
                env=dict(environ),
            )
        finally:
            os.close(log)
            os.close(writing)
        # Reap it when it exits, should this process outlive it (a test, a benchmark); a shim
        # exits first, and the server is then adopted by init.
        import threading

        threading.Thread(target=server.wait, name="telic-reaper", daemon=True).start()
        said = _read_ready(reading, timeout)
    except BaseException:
        os.close(reading)
        raise
    if said == "listening":
        return reading
    os.close(reading)
    if said.startswith("error "):
        raise ResidentError("resident.start", said.removeprefix("error "))
    if said == "":
        detail = _last_line(places.log) or "it exited without a word"
        raise ResidentError(
            "resident.start", f"the resident server exited while starting: {detail}"
        )
    raise ResidentError(
        "resident.start_timeout",
        f"the resident server did not become ready within {timeout:g} s (log: {places.log})",
    )


def _read_ready(fd: int, timeout: float) -> str:
    """The server's next readiness line; ``""`` at end of file, ``"timeout"`` when it is late.

    Byte by byte, so that nothing of the line after it is consumed."""
    import select

    deadline = time.monotonic() + timeout
    said = b""
    while not said.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return "timeout"
        byte = os.read(fd, 1)
        if not byte:
            break
        said += byte
    return said.decode("utf-8", "replace").strip()


def ensure_server(
    options: ServeOptions, environ: Mapping[str, str], fingerprint: str | None = None
) -> Connection:
    """A connection to the resident server of ``options``, starting it if none listens.

    ``fingerprint`` stands for the installed code's (``code_fingerprint``) when given.
    """
    places = places_for(options.repository_root, options.schemas, environ, fingerprint)
    if check_private(places.directory):  # only a directory only we can use holds our server
        attached = connect(places.socket)
        if attached is not None:
            return attached
    import fcntl

    private_dir(places.directory)
    with open(places.lock, "a+b") as lock:
        os.chmod(places.lock, 0o600)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        attached = connect(places.socket)  # another shim may have started it meanwhile
        if attached is None:
            readiness = _spawn(places, options, environ)
            attached = connect(places.socket)
            if attached is None:
                os.close(readiness)
            else:
                attached.readiness = readiness
    if attached is None:
        raise ResidentError(
            "resident.connect", f"the new server is not listening at {places.socket}"
        )
    return attached


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def relay(connection: _socket.socket, stdin: int = 0, stdout: int = 1) -> bool:
    """Copy ``stdin`` to the server and the server to ``stdout`` until one side ends.

    Returns ``True`` when the host closed ``stdin`` first (a normal end), ``False`` when the
    server closed the session while the host was still attached. The upstream copy runs in a
    ``_thread`` thread (``threading`` is a Python-source module the shim need not import).
    """
    import _thread

    host_done: list[bool] = []

    def upstream() -> None:
        try:
            while chunk := os.read(stdin, _CHUNK):
                connection.sendall(chunk)
        except OSError:
            pass
        finally:
            host_done.append(True)
            _shut(connection)

    _thread.start_new_thread(upstream, ())
    return _downstream(connection, stdout) or bool(host_done)


def _downstream(connection: _socket.socket, stdout: int) -> bool:
    """Copy the server to ``stdout`` until it ends; ``True`` when the host stopped reading."""
    try:
        while chunk := connection.recv(_CHUNK):
            _write_all(stdout, chunk)
    except BrokenPipeError:
        return True  # the host is going away
    except OSError:
        pass
    return False


def answers_path(places: Places) -> str:
    """The file where the server of ``places`` writes its answers to the listings."""
    return os.path.join(places.directory, f"{places.key}.answers.json")


def read_answers(places: Places) -> dict[str, dict[str, str]] | None:
    """The answers the server of ``places`` wrote: for each protocol version, each method of
    ``ANSWERED_METHODS`` and the JSON text of its result; ``None`` when there are none to trust
    (no file, another layout, another key: another version of the code or other settings).
    """
    try:
        with open(answers_path(places), "rb") as file:
            data = file.read()
        document = loads(data)
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(document, dict) or document.get("format") != ANSWERS_FORMAT:
        return None
    versions = document.get("answers")
    if document.get("key") != places.key or not isinstance(versions, dict) or not versions:
        return None
    for answers in versions.values():
        if not isinstance(answers, dict):
            return None
        if sorted(answers) not in (sorted(ANSWERED_METHODS), sorted((DISCOVER, *LISTINGS))):
            return None
        if not all(isinstance(text, str) for text in answers.values()):
            return None
    return versions


def _id_text(value: object) -> bytes | None:
    """A request id as the server writes it back; ``None`` for an id the shim leaves to it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()
    if isinstance(value, str):
        return _json.encode_basestring(value).encode("utf-8", "surrogatepass")
    return None


class _Answering:
    """The host's side of a session whose server is not attached yet (``serve_resident``).

    The upstream thread hands it each line. Before the connection, a line it can answer from
    the answers file is answered on ``stdout``; the rest (and the answered ``initialize``) wait
    in ``pending``; once attached, every line goes to the server. ``lock`` orders the two: an
    answer is written whole before the relay of the server's bytes begins.
    """

    def __init__(self, versions: dict[str, dict[str, str]], stdout: int) -> None:
        import _thread

        self.lock = _thread.allocate_lock()
        self.versions = versions
        self.stdout = stdout
        self.answers: dict[str, str] | None = None
        self.initialize_id: object = None
        self.handshake = False  # an ``initialize`` came: a session of the handshake era
        self.first = True
        self.pending: list[bytes] = []
        self.awaited = False  # a pending request only the server can answer
        self.connection: _socket.socket | None = None
        self.ended = False
        self.host_done = False

    def answer(self, line: bytes) -> bytes | None:
        """The answer to ``line`` from the answers, if they hold one."""
        try:
            message = loads(line)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params = message.get("method"), message.get("params")
        ident = _id_text(message.get("id"))
        if ident is None or not isinstance(method, str):
            return None
        meta = params.get("_meta") if isinstance(params, dict) else None
        self.handshake = self.handshake or method == "initialize"
        if (
            isinstance(meta, dict)
            and isinstance(params, dict)
            and list(params) == ["_meta"]
            and not self.handshake
            and _PLAIN_META.issuperset(meta)
        ):
            answers = self.versions.get(str(meta.get(_VERSION_META)))  # a stateless request
        elif method == "initialize" and self.first and isinstance(params, dict):
            answers = self.versions.get(str(params.get("protocolVersion")))
            if answers is not None and method in answers:
                self.answers, self.initialize_id = answers, message["id"]
        else:  # a listing after an answered handshake; a cursor is the server's
            answers = self.answers if params in (None, {}) else None
        if answers is None or method not in answers or (method == "initialize" and meta):
            return None
        result = answers[method].encode("utf-8", "surrogatepass")
        return b'{"jsonrpc":"2.0","id":' + ident + b',"result":' + result + b"}\n"

    def take(self, line: bytes) -> None:
        """One line from the host (with its newline, unless the host ended without one)."""
        with self.lock:
            if self.connection is not None:
                self.connection.sendall(line)
                return
            first = self.first
            reply = self.answer(line)
            self.first = False
            if reply is not None:
                _write_all(self.stdout, reply)
                if self.initialize_id is not None and first:
                    self.pending.append(line)  # the server's session needs its handshake
                return
            self.pending.append(line)
            self.awaited = self.awaited or b'"id"' in line

    def end(self) -> bool:
        """The host closed stdin; ``True`` when nothing waits for the server (the shim may go)."""
        with self.lock:
            self.ended = True
            if self.connection is not None:
                _shut(self.connection)
                return False
            return not self.awaited

    def attach(self, connection: _socket.socket) -> None:
        """The server listens: send it what waited, then let every line through."""
        with self.lock:
            for line in self.pending:
                connection.sendall(line)
            self.pending.clear()
            self.connection = connection
            if self.ended:
                _shut(connection)


def _shut(connection: _socket.socket) -> None:
    try:  # noqa: SIM105  # contextlib is a Python-source import the warm path avoids
        connection.shutdown(_socket.SHUT_WR)
    except OSError:
        pass


def _drop_answer(connection: _socket.socket, ident: object, stdout: int) -> bool:
    """Relay the server's lines until its answer to request ``ident`` (dropped: the shim gave
    the host its own); ``False`` when the session ended first."""
    buffered = b""
    while True:
        newline = buffered.find(b"\n")
        if newline < 0:
            chunk = connection.recv(_CHUNK)
            if not chunk:
                _write_all(stdout, buffered)
                return False
            buffered += chunk
            continue
        line, buffered = buffered[: newline + 1], buffered[newline + 1 :]
        try:
            message = loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and "method" not in message and message.get("id") == ident:
            _write_all(stdout, buffered)
            return True
        _write_all(stdout, line)


def _answering(versions: dict[str, dict[str, str]], stdin: int = 0, stdout: int = 1) -> _Answering:
    """Start reading the host's lines, answering from ``versions`` until ``relay_answering``."""
    import _thread

    state = _Answering(versions, stdout)

    def upstream() -> None:
        buffered = b""
        try:
            while chunk := os.read(stdin, _CHUNK):
                buffered += chunk
                *lines, buffered = buffered.split(b"\n")
                for line in lines:
                    state.take(line + b"\n")
            if buffered:
                state.take(buffered)
        except OSError:
            pass
        finally:
            state.host_done = True
            if state.end():
                os._exit(0)  # all the host asked is answered; the server starts on its own

    _thread.start_new_thread(upstream, ())
    return state


def relay_answering(state: _Answering, connection: _socket.socket) -> bool:
    """``relay`` for a session that ``state`` began: send what waited, drop the server's answer
    to the ``initialize`` already answered, then copy the server to the host."""
    try:
        state.attach(connection)
        if state.initialize_id is not None and not _drop_answer(
            connection, state.initialize_id, state.stdout
        ):
            return state.host_done
    except BrokenPipeError:
        return True  # the host stopped reading: it is going away
    except OSError:
        return state.host_done
    return _downstream(connection, state.stdout) or state.host_done


def serve_resident(words: Sequence[str], root_option: str | None) -> int:
    """Run ``telic serve --resident``; return the exit code."""
    environ = os.environ
    try:
        options = parse_serve(words, root_option, environ)
    except ResidentError as exc:
        print(f"telic: {exc}", file=sys.stderr)
        return 2
    try:
        fingerprint = code_fingerprint()
        places = places_for(options.repository_root, options.schemas, environ, fingerprint)
        # A listening server answers at once; the answers are for a server still to start.
        attached = connect(places.socket) if check_private(places.directory) else None
        versions = None if attached is not None else read_answers(places)
        answering = None if versions is None else _answering(versions)
        connection = attached or ensure_server(options, environ, fingerprint)
    except ResidentError as exc:
        print(f"telic: {exc}", file=sys.stderr)
        return 1
    try:
        with connection:
            if relay(connection) if answering is None else relay_answering(answering, connection):
                return 0
            failure = connection.backend_failure()
    except KeyboardInterrupt:
        return 130
    if failure is not None:  # the server it started could not open the backend: one line
        print(f"telic: resident.start: {failure}", file=sys.stderr)
        return 1
    print(
        f"telic: resident.ended: the resident server for {options.repository_root} ended the "
        f"session (log: {places.log})",
        file=sys.stderr,
    )
    return 1


class HookReply:
    """What the resident server answered: the hook's stdout (``None``: say nothing)."""

    __slots__ = ("output",)

    def __init__(self, output: str | None) -> None:
        self.output = output

    def __repr__(self) -> str:
        return f"HookReply({self.output!r})"


def _deny(host: str, raw: bytes, reason: str) -> str | None:
    """A deny in ``host``'s format, for the event ``raw`` (only on a failure: it loads the
    dialects, and with them ``json``)."""
    from telic.hosts import DIALECTS, HookInputError, Verdict, read_event

    dialect = DIALECTS[host]
    try:
        reply = read_event(dialect, raw).reply
    except (HookInputError, RecursionError, MemoryError):
        reply = dialect.fallback_reply
    return dialect.write(reply, Verdict("deny", reason))


class _Decoding:
    """What ``_json.make_scanner`` reads: ``json.loads``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "NaN": float("nan"),
        "Infinity": float("inf"),
        "-Infinity": float("-inf"),
    }.__getitem__


# The stub names the context's type as the scanner's own (which has these attributes);
# ``json.decoder`` passes a ``JSONDecoder``: any object with them will do.
_SCAN = _json.make_scanner(_Decoding())  # type: ignore[arg-type]
_SPACE: Final = " \t\n\r"


def loads(data: bytes | bytearray) -> object:
    """``json.loads(data)``, by the C scanner ``json`` itself uses, without importing ``json``.

    ``json`` imports ``re`` (and with it ``enum`` and ``functools``): about 11 ms of every hook
    call through the resident server, for two small documents. UTF-8 (with or without its BOM)
    is decoded here; UTF-16 and UTF-32, which ``json.loads`` also detects, are left to it.

    Raises:
        ValueError: not one JSON document (``UnicodeDecodeError`` for bytes that are not UTF-8),
            or one nested deeper than the interpreter's recursion limit (``json.loads`` raises
            ``RecursionError`` there: a hook must read it as input it cannot read).
    """
    try:
        if 0 in data[:4]:  # UTF-16 or UTF-32: json.loads's own detection, never a hook's event
            import json

            return json.loads(data)
        text = bytes(data).decode("utf-8-sig", "surrogatepass")
        start = len(text) - len(text.lstrip(_SPACE))
        value, end = _SCAN(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def hook_root(raw: bytes, root_option: str | None, environ: Mapping[str, str]) -> str:
    """The repository the hook decides for, chosen as the in-process hook chooses it."""
    cwd = None
    try:
        event = loads(raw)
    except (ValueError, UnicodeDecodeError):
        event = None
    if isinstance(event, dict) and isinstance(event.get("cwd"), str):
        cwd = event["cwd"]
    chosen = root_option or environ.get("TELIC_REPOSITORY_ROOT") or cwd or os.getcwd()
    return os.path.realpath(chosen)


def ask_hook(
    raw: bytes,
    root_option: str | None,
    environ: Mapping[str, str],
    host: str = "claude-code",
    wait: float = HOOK_WAIT,
) -> HookReply | None:
    """The resident server's answer to ``host``'s hook event; ``None`` when no server listens
    (or it does not accept within ``wait`` seconds, or the event is larger than
    ``MAX_HOOK_EVENT``), so the caller decides in-process.

    Once a server accepted the event, anything short of its answer (a crash, a reset, a
    malformed reply, no answer within ``wait`` seconds in all) is a deny naming the failure:
    the hook fails closed.
    """
    if len(raw) > MAX_HOOK_EVENT:
        return None  # the server would refuse it; the in-process decision reads any size
    deadline = time.monotonic() + wait
    root = hook_root(raw, root_option, environ)
    try:
        places = places_for(root, "", environ)
        # A directory someone else controls could hold anyone's socket: decide in-process.
        private = check_private(places.directory)
        connection = connect(places.hook_socket, wait) if private else None
    except (ResidentError, OSError):
        return None
    if connection is None:
        return None
    failure = "the connection closed before an answer"
    with connection:
        try:
            header = (  # json.dumps's
                '{"root": '
                + _json.encode_basestring_ascii(root)
                + ', "host": '
                + _json.encode_basestring_ascii(host)
                + "}"
            )
            connection.settimeout(_left(deadline))
            connection.sendall(header.encode() + b"\n" + raw)
            connection.shutdown(_socket.SHUT_WR)
            received = bytearray()
            while True:
                connection.settimeout(_left(deadline))
                chunk = connection.recv(_CHUNK)
                if not chunk:
                    break
                received += chunk
            reply = loads(received) if received else None
            if isinstance(reply, dict) and "output" in reply:
                output = reply["output"]
                if output is None or isinstance(output, str):
                    return HookReply(output)
            if isinstance(reply, dict) and isinstance(reply.get("error"), str):
                failure = reply["error"]
            elif reply is not None:
                failure = "a malformed answer"
        except TimeoutError:
            failure = f"no answer within {wait:g} s"
        except Exception as exc:  # the hook boundary: an accepted event and no answer
            failure = f"{type(exc).__name__}: {exc}"
    return HookReply(
        _deny(
            host,
            raw,
            f"Telic could not decide this tool call, so it is denied: the resident server for "
            f"{root} failed ({failure})",
        )
    )


def _left(deadline: float) -> float:
    """Seconds left before ``deadline``; ``TimeoutError`` when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def run_hook(
    host: str,
    raw: bytes,
    root_option: str | None,
    environ: Mapping[str, str],
    wait: float = HOOK_WAIT,
) -> str | None:
    """``telic hook <host>``: the answer to print (``None``: say nothing), never a crash.

    The resident server's answer if one listens, else the in-process decision
    (``telic.hosts.host_hook``, which itself denies every failure while a run is live). Any
    exception outside those boundaries is a deny in ``host``'s format, live run or not: the hook
    cannot tell whether a run is live, and a hook that crashes (exit 1) lets the call through.

    Raises:
        Exception: only when even the deny cannot be written; ``telic hook`` then exits 2 with
            the reason on stderr, the exit code every host documents as blocking.
    """
    try:
        reply = ask_hook(raw, root_option, environ, host, wait)
        if reply is not None:
            return reply.output
        from telic.hosts import host_hook  # no resident server: decide here

        return host_hook(host, raw, repository_root=root_option, environ=environ)
    except Exception as exc:  # the hook boundary: no decision is a deny
        text = " ".join(str(exc).split())[:300]
        return _deny(
            host,
            raw,
            f"Telic could not decide this tool call, so it is denied: {type(exc).__name__}"
            + (f": {text}" if text else ""),
        )


class Deadline:
    """A watchdog for one ``telic hook`` process: after ``seconds`` without an answer it writes
    a deny in ``host``'s format to ``out`` and ends the process with exit 0 (``exit``), so the
    host reads a deny instead of killing a hook that hangs (which Claude Code and Codex treat as
    a failure that lets the call through).

    A ``_thread`` thread, so it runs while the main thread waits in C (a socket, SQLite's busy
    wait). ``claim`` decides who answers: the main thread when it claims first, else the
    watchdog, and then the main thread writes nothing.
    """

    __slots__ = ("_claimed", "_stopped")

    def __init__(
        self,
        host: str,
        raw: bytes,
        seconds: float = HOOK_DEADLINE,
        out: int = 1,
        exit: Callable[[int], object] = os._exit,
    ) -> None:
        import _thread

        self._claimed = _thread.allocate_lock()
        self._stopped = _thread.allocate_lock()
        self._stopped.acquire()

        def watch() -> None:
            if self._stopped.acquire(timeout=seconds) or not self._claimed.acquire(False):
                return  # the main thread answered
            try:
                text = _deny(
                    host,
                    raw,
                    f"Telic could not decide this tool call within {seconds:g} s, so it is denied",
                )
                if text is not None:
                    _write_all(out, (text + "\n").encode())
                code = 0
            except BaseException:  # not even a deny: exit 2 blocks in every host
                _write_all(2, b"telic: hook.deadline: no decision in time; the call is denied\n")
                code = 2
            exit(code)

        _thread.start_new_thread(watch, ())

    def claim(self) -> bool:
        """Whether the main thread may write its answer (``False``: the watchdog is writing
        the deny and ends the process)."""
        mine = self._claimed.acquire(False)
        self._stopped.release()
        return mine
