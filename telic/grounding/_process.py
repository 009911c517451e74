"""Running git and ripgrep: no shell, a hardened environment, streamed and capped output.

Commands run through anyio from an absolute executable found on ``PATH``, with a fresh
environment: no user or system git configuration, no optional locks, fsmonitor off, the C
locale and no ripgrep configuration. Nothing of the caller's environment leaks in (``GIT_DIR``
and friends included). Output is streamed to a sink and capped at 16 MiB; a command that fails,
exceeds the cap or is missing counts as unavailable, and its error output is never read, since
it may name files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from typing import Final

import anyio

__all__ = ["MAX_OUTPUT_BYTES", "NulSplitter", "git_command", "run_tool"]

MAX_OUTPUT_BYTES: Final = 16 * 1024 * 1024
"""Most output one inventory or fingerprint command may produce."""


def _environment(search_path: str) -> dict[str, str]:
    return {
        "PATH": search_path,
        "LC_ALL": "C",
        "LANG": "C",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "RIPGREP_CONFIG_PATH": os.devnull,
    }


def git_command(*arguments: str) -> tuple[str, ...]:
    """Return a git command line with the hardening options every git call gets."""
    return ("git", "-c", "core.fsmonitor=false", *arguments)


async def run_tool(
    command: Sequence[str], *, cwd: str, sink: Callable[[bytes], None], check: bool = True
) -> int | None:
    """Run ``command`` in ``cwd``, feeding its stdout to ``sink``; return its exit status.

    Returns None when the executable is missing, cannot start or writes more than 16 MiB (it
    is then killed). With ``check`` a non-zero status also returns None.
    """
    search_path = os.environ.get("PATH", os.defpath)
    executable = shutil.which(command[0], path=search_path)
    if executable is None:
        return None
    try:
        process = await anyio.open_process(
            [executable, *command[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=_environment(search_path),
        )
    except OSError:
        return None
    async with process:
        produced = 0
        assert process.stdout is not None
        async for chunk in process.stdout:
            produced += len(chunk)
            if produced > MAX_OUTPUT_BYTES:
                process.kill()
                await process.wait()
                return None
            sink(chunk)
        status = await process.wait()
    return None if check and status != 0 else status


class NulSplitter:
    """Splits a NUL-separated byte stream into paths, handing each chunk's paths on at once.

    Only an incomplete last path is kept between chunks, so the output is never held whole,
    and the consumer (normally a ``PathCollector``) works while the command is still listing.
    """

    def __init__(self, consume: Callable[[list[str]], None]) -> None:
        self._consume = consume
        self._tail = b""
        self.count = 0
        """Paths handed on so far."""

    def __call__(self, chunk: bytes) -> None:
        """Take the next chunk of output."""
        data = self._tail + chunk if self._tail else chunk
        end = data.rfind(b"\0")
        if end < 0:
            self._tail = data
            return
        self._tail = data[end + 1 :]
        self._hand_on(os.fsdecode(data[:end]).split("\0"))

    def _hand_on(self, paths: list[str]) -> None:
        self.count += len(paths)
        self._consume(paths)

    def finish(self) -> None:
        """Hand on an unterminated last path, if there is one."""
        if self._tail:
            tail, self._tail = self._tail, b""
            self._hand_on([os.fsdecode(tail)])
