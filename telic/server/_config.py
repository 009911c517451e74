"""Where a server serves from: repository root, state, database and HTTP binding.

Read from the environment (``TELIC_REPOSITORY_ROOT``, ``TELIC_STATE_DIR``,
``TELIC_DATABASE_URL``, ``TELIC_HTTP_TOKEN``, ``TELIC_SCHEMAS``, ``TELIC_HTTP_READ_TIMEOUT``) and
overridden by command-line flags. A bearer token is required whenever the HTTP server binds to
anything but a loopback address.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from telic._errors import UsageError
from telic.ledger import DATABASE_URL_ENV, REPOSITORY_ROOT_ENV, STATE_DIR_ENV
from telic.server._schemas import SCHEMA_MODES, SchemaMode

HTTP_TOKEN_ENV: Final = "TELIC_HTTP_TOKEN"
ALLOWED_HOSTS_ENV: Final = "TELIC_HTTP_ALLOWED_HOSTS"
SCHEMAS_ENV: Final = "TELIC_SCHEMAS"
HTTP_READ_TIMEOUT_ENV: Final = "TELIC_HTTP_READ_TIMEOUT"
DEFAULT_READ_TIMEOUT: Final = 30.0
"""Seconds a request's headers, and then its body, may take to arrive over HTTP."""
MAX_READ_TIMEOUT: Final = 3600.0
"""The longest read deadline ``TELIC_HTTP_READ_TIMEOUT`` may set."""


def read_timeout(environ: Mapping[str, str]) -> float:
    """``TELIC_HTTP_READ_TIMEOUT`` in seconds (default 30): how long a request's headers, and
    then its body, may take to arrive over HTTP. ``UsageError`` unless a number in (0, 3600]."""
    text = environ.get(HTTP_READ_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_READ_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_READ_TIMEOUT:
        raise UsageError(
            f"{HTTP_READ_TIMEOUT_ENV}={text!r} must be a number of seconds in "
            f"(0, {MAX_READ_TIMEOUT:g}]"
        )
    return seconds


def schema_mode(environ: Mapping[str, str] | None = None, flag: str | None = None) -> SchemaMode:
    """The schema mode: ``flag`` if given, else ``TELIC_SCHEMAS`` in ``environ``, else ``once``.

    ``environ`` defaults to ``os.environ``. Raises ``UsageError`` for anything but ``full`` or
    ``once``.
    """
    text = flag or (os.environ if environ is None else environ).get(SCHEMAS_ENV) or "once"
    spelled = text.strip().lower()
    for mode in SCHEMA_MODES:
        if spelled == mode:
            return mode
    where = "--schemas" if flag else SCHEMAS_ENV
    raise UsageError(f"{where}: the schema mode is 'full' or 'once', not {spelled!r}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class HttpBinding:
    """A host and port to serve streamable HTTP on."""

    host: str
    port: int

    @property
    def url(self) -> str:
        """The MCP endpoint URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"


def parse_binding(text: str) -> HttpBinding:
    """Parse ``HOST:PORT`` (``[::1]:PORT`` for IPv6). Raises ``UsageError``."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError("--http takes HOST:PORT, for example 127.0.0.1:8765")
    return HttpBinding(host, int(port))


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``telic serve`` needs to know."""

    repository_root: Path
    state_dir: Path | None = None
    database_url: str | None = None
    http: HttpBinding | None = None
    token: str | None = None
    allowed_hosts: tuple[str, ...] = field(default=())
    schemas: SchemaMode = "once"
    """``once``: each MCP session gets each artifact schema once, in Telic type notation;
    ``full``: the JSON Schema every time."""
    reports_mirror: Path | None = None
    """A report mirror folder served read-only at ``/reports`` over HTTP."""
    read_timeout: float = DEFAULT_READ_TIMEOUT
    """Seconds a request's headers, and then its body, may take to arrive over HTTP."""

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        http: str | None = None,
        token: str | None = None,
        repository_root: str | None = None,
        schemas: str | None = None,
        reports_mirror: str | None = None,
    ) -> ServerConfig:
        """Build the configuration from ``environ`` (default ``os.environ``) and flags."""
        env = os.environ if environ is None else environ
        root = Path(repository_root or env.get(REPOSITORY_ROOT_ENV) or os.getcwd())
        state = env.get(STATE_DIR_ENV) or None
        binding = parse_binding(http) if http else None
        secret = token or env.get(HTTP_TOKEN_ENV) or None
        if binding is not None and not is_loopback(binding.host) and not secret:
            raise UsageError(
                f"serving on {binding.host} (not loopback) needs a bearer token: "
                f"pass --token or set {HTTP_TOKEN_ENV}"
            )
        extra = tuple(h for h in env.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip())
        mode = schema_mode(env, schemas)
        return cls(
            repository_root=root.resolve(),
            state_dir=Path(state) if state else None,
            database_url=env.get(DATABASE_URL_ENV) or None,
            http=binding,
            token=secret,
            allowed_hosts=extra,
            schemas=mode,
            reports_mirror=Path(reports_mirror).absolute() if reports_mirror else None,
            read_timeout=read_timeout(env),
        )
