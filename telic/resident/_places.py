"""Where a resident server lives: its private directory, its key, its socket, lock and log.

Standard library only: the shim and the hook client import this in the fresh process a host
spawns. The key covers everything that changes what a server serves, so a shim never attaches
to one that would behave differently from a fresh ``telic serve``; the directory is the access
control, refused unless private to this user (docs/design.md, "Key" and "Permissions").
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # not ``typing``'s: this module imports no Python-source module
if TYPE_CHECKING:
    from _hashlib import HASH
    from collections.abc import Mapping
    from hashlib import sha256
    from os import PathLike
    from typing import Final
else:
    try:  # the builtin module, not OpenSSL's binding, whose import is a tenth of a shim's start
        from _sha256 import sha256
    except ImportError:  # other Pythons (3.12 names it _sha2)
        from hashlib import sha256


RUNTIME_DIR_ENV: Final = "TELIC_RUNTIME_DIR"
IDLE_ENV: Final = "TELIC_RESIDENT_IDLE"
"""Seconds a resident server waits with no attached session before it exits."""
DEFAULT_IDLE_SECONDS: Final = 900.0
_SOCKET_PATH_LIMIT: Final = 100
_HERE: Final = os.path.dirname(os.path.realpath(__file__))
_KEYED_ENV: Final = ("TELIC_DATABASE_URL", "TELIC_STATE_DIR", "XDG_STATE_HOME", "HOME")
"""The environment that decides which ledger a server opens (the state directory's defaults)."""


class ResidentError(Exception):
    """A resident server cannot be reached or started; the message names the rule that failed."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule


def runtime_dir(environ: Mapping[str, str], *, uid: int | None = None) -> str:
    """The per-user directory of sockets, locks and logs (not created here).

    ``$TELIC_RUNTIME_DIR`` when set; else the default, ``$XDG_RUNTIME_DIR/telic`` or
    ``/tmp/telic-<uid>``, unless it exists and is not private to user ``uid`` (this process's
    by default): someone else made it, or made it a symlink, or opened it to others. Then the
    fallback in the user's home (``home_runtime_dir``) is used, when there is a home to hold it.
    """
    chosen = environ.get(RUNTIME_DIR_ENV)
    if chosen:
        return chosen
    uid = os.getuid() if uid is None else uid
    xdg = environ.get("XDG_RUNTIME_DIR")
    default = os.path.join(xdg, "telic") if xdg else f"/tmp/telic-{uid}"
    fallback = home_runtime_dir(environ)
    if fallback is None:
        return default
    try:
        check_private(default, uid=uid)  # a missing directory is fine: it is created private
    except ResidentError:
        return fallback
    return default


def home_runtime_dir(environ: Mapping[str, str]) -> str | None:
    """The runtime directory used when the default one is taken: ``$XDG_CACHE_HOME/telic/run``,
    else ``$HOME/.cache/telic/run``; ``None`` without an absolute home or cache directory."""
    cache = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        cache = os.path.join(home, ".cache")
    return os.path.join(cache, "telic", "run")


def private_dir(path: str | PathLike[str]) -> str:
    """Create ``path`` (mode 0700) if missing; refuse it unless only this user can use it.

    Raises ``ResidentError`` (rule ``resident.runtime_dir``) for a symlink, a non-directory, a
    directory owned by someone else, or one with any group or world permission bit.
    """
    path = os.fspath(path)
    try:  # contextlib is a Python-source import the shim avoids
        os.makedirs(path, mode=0o700)
    except FileExistsError:  # whatever is there is checked below
        pass
    except OSError as exc:
        raise ResidentError("resident.runtime_dir", f"cannot create {path}: {exc}") from None
    if not check_private(path):
        raise ResidentError("resident.runtime_dir", f"cannot create {path}: it vanished")
    return path


def check_private(path: str, *, uid: int | None = None) -> bool:
    """Whether ``path`` exists, after refusing it unless only user ``uid`` (this process's by
    default) can use it.

    ``False``: nothing is there (so no server can listen in it). Raises ``ResidentError`` as
    ``private_dir`` does. A shim checks before it connects to a socket in the directory: a
    socket in a directory someone else controls could be anyone's.
    """
    uid = os.getuid() if uid is None else uid
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ResidentError("resident.runtime_dir", f"cannot read {path}: {exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ResidentError("resident.runtime_dir", f"{path} is not a directory")
    if info.st_uid != uid:
        raise ResidentError("resident.runtime_dir", f"{path} is owned by uid {info.st_uid}")
    if info.st_mode & 0o077:
        mode = oct(stat.S_IMODE(info.st_mode))
        raise ResidentError(
            "resident.runtime_dir", f"{path} has mode {mode}; it must be 0700 (chmod 700 it)"
        )
    return True


def code_fingerprint(package: str | PathLike[str] | None = None) -> str:
    """A hash of the interpreter and of every Telic module's path, size and mtime.

    ``package`` defaults to the installed ``telic`` package. An upgrade, a reinstall or an edit
    of any module changes it, so a shim never attaches to a server running older code. It stats
    files; it reads none (about 250 of them).
    """
    package = os.fspath(package) if package is not None else os.path.dirname(_HERE)
    digest = sha256()
    digest.update(f"{sys.prefix}\0{sys.version}\0{package}\0".encode())
    _digest_tree(digest, package, "")
    return digest.hexdigest()


def _digest_tree(digest: HASH, folder: str, relative: str) -> None:
    """Add each module under ``folder`` (its path relative to the package, size and mtime),
    in sorted order, skipping ``__pycache__``; one ``scandir`` per folder."""
    with os.scandir(folder) as entries:
        found = sorted(entries, key=lambda entry: entry.name)
    for entry in found:
        where = relative + entry.name
        if entry.name.endswith(".py") and entry.is_file():
            info = entry.stat()
            digest.update(f"{where}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    for entry in found:
        if entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
            _digest_tree(digest, entry.path, relative + entry.name + os.sep)


class Places:
    """The files of one resident server, all in its private directory: ``socket``, where MCP
    sessions attach; ``hook_socket``, where ``telic hook`` asks for decisions (keyed without the
    schema mode); ``lock``, held (``flock``) while a server is being started, so two shims start
    one; ``log``, the server's stderr. (A plain class: ``typing.NamedTuple`` would import
    ``typing``, a fifth of the shim's start.)"""

    __slots__ = ("directory", "hook_socket", "key", "lock", "log", "socket")

    def __init__(
        self, directory: str, key: str, socket: str, hook_socket: str, lock: str, log: str
    ) -> None:
        self.directory = directory
        self.key = key
        self.socket = socket
        self.hook_socket = hook_socket
        self.lock = lock
        self.log = log

    def _fields(self) -> tuple[str, ...]:
        return (self.directory, self.key, self.socket, self.hook_socket, self.lock, self.log)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Places) and self._fields() == other._fields()

    def __repr__(self) -> str:
        return f"Places(directory={self.directory!r}, key={self.key!r}, socket={self.socket!r})"


def _hash(*parts: str) -> str:
    return sha256("\0".join(parts).encode("utf-8")).hexdigest()[:20]


def places_for(
    root: str, schemas: str, environ: Mapping[str, str], fingerprint: str | None = None
) -> Places:
    """The places of the server for ``root`` under these settings (nothing is created).

    Raises ``ResidentError`` (rule ``resident.socket_path``) if the directory is so deep that
    a socket path would pass the operating system's limit.
    """
    directory = runtime_dir(environ)
    code = code_fingerprint() if fingerprint is None else fingerprint
    ledger = [f"{name}={environ.get(name, '')}" for name in _KEYED_ENV]
    key = _hash(root, schemas, code, *ledger)
    hook = _hash("hook", root, code, *ledger)
    socket = os.path.join(directory, f"{key}.sock")
    if len(os.fsencode(socket)) > _SOCKET_PATH_LIMIT:
        raise ResidentError(
            "resident.socket_path",
            f"{socket} is longer than {_SOCKET_PATH_LIMIT} bytes; set {RUNTIME_DIR_ENV} to a "
            "shorter directory",
        )
    return Places(
        directory=directory,
        key=key,
        socket=socket,
        hook_socket=os.path.join(directory, f"h{hook}.sock"),
        lock=os.path.join(directory, f"{key}.lock"),
        log=os.path.join(directory, f"{key}.log"),
    )


def env_seconds(
    environ: Mapping[str, str], name: str, default: float, most: float, rule: str
) -> float:
    """``environ[name]`` as seconds in (0, ``most``], else ``default`` when unset or blank.

    Raises ``ResidentError`` (``rule``) for anything else.
    """
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= most:
        raise ResidentError(rule, f"{name}={text!r} is not a number of seconds in (0, {most:g}]")
    return value


def idle_seconds(environ: Mapping[str, str]) -> float:
    """``TELIC_RESIDENT_IDLE`` in seconds (default 900). Raises ``ResidentError`` when bad."""
    return env_seconds(environ, IDLE_ENV, DEFAULT_IDLE_SECONDS, 86_400, "resident.idle")
