"""How a host reaches a Telic server: spawn it over stdio or HTTP, and connect the official client.

``telic demo``, the examples and the benchmarks use these to talk to ``telic serve`` as a
subprocess, exactly as an MCP host would.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from telic.ledger import DATABASE_URL_ENV, REPOSITORY_ROOT_ENV, STATE_DIR_ENV

_PASSED_ENV = (
    "PATH",
    "PYTHONPATH",
    "HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "TELIC_RUNTIME_DIR",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "SYSTEMROOT",
)


def stdio_parameters(
    repository_root: Path,
    state_dir: Path | None = None,
    *,
    database_url: str | None = None,
    env: Mapping[str, str] | None = None,
    serve_args: Sequence[str] = (),
) -> StdioServerParameters:
    """How to start ``python -m telic serve`` over stdio for ``repository_root``.

    ``serve_args`` follow ``serve`` (``["--resident"]`` attaches to the resident server).
    """
    server_env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
    server_env[REPOSITORY_ROOT_ENV] = str(repository_root)
    server_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if state_dir is not None:
        server_env[STATE_DIR_ENV] = str(state_dir)
    if database_url is not None:
        server_env[DATABASE_URL_ENV] = database_url
    server_env.update(env or {})
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "telic", "serve", *serve_args],
        env=server_env,
        cwd=str(repository_root),
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def http_server(
    repository_root: Path,
    state_dir: Path | None = None,
    *,
    port: int | None = None,
    token: str | None = None,
    database_url: str | None = None,
    host: str = "127.0.0.1",
    extra_args: Sequence[str] = (),
) -> AsyncIterator[str]:
    """Run ``telic serve --http`` as a subprocess; yield its MCP URL; stop it with SIGTERM.

    ``extra_args`` are appended to the command (for example ``--reports-mirror DIR``).
    """
    params = stdio_parameters(repository_root, state_dir, database_url=database_url)
    env = dict(params.env or {})
    if token:
        env["TELIC_HTTP_TOKEN"] = token
    bind = f"{host}:{port or free_port()}"
    command = [sys.executable, "-m", "telic", "serve", "--http", bind, *extra_args]
    process = await anyio.open_process(command, env=env, cwd=params.cwd, stdin=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        stderr = process.stderr
        seen = b""
        with anyio.fail_after(30):
            async for chunk in stderr:
                seen += chunk
                if b"Telic MCP ready" in seen:
                    break
            else:
                raise RuntimeError(f"telic serve --http exited: {seen.decode(errors='replace')}")

        async def drain() -> None:
            # Keep the server's diagnostics flowing, or a full pipe would stall it.
            async for chunk in stderr:
                sys.stderr.write(chunk.decode(errors="replace"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            try:
                yield f"http://{bind}/mcp"
            finally:
                await _stop(process)
                tg.cancel_scope.cancel()
    finally:
        await _stop(process)
        await process.aclose()


async def _stop(process: anyio.abc.Process) -> None:
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


def http_client(url: str, token: str | None = None) -> Client:
    """An MCP client for a ``telic serve --http`` endpoint, sending ``token`` as a bearer."""

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    return Client(transport())
