"""Running git and ripgrep: no shell, a hardened environment, streamed and capped output.

Commands run from an absolute executable found on ``PATH``, with a fresh environment: no user
or system git configuration, no optional locks, fsmonitor off, the C locale and no ripgrep
configuration. Nothing of the caller's environment leaks in (``GIT_DIR`` and friends included).
Output is streamed to a sink and capped at 16 MiB; a command that fails, exceeds the cap or is
missing counts as unavailable, and its error output is never read, since it may name files.

Everything here blocks, for a worker thread started by anyio: starting a process from an asyncio
event loop costs more than the process itself on a busy machine (the fork happens in the loop's
thread, and a thread is started per child to wait for it), and grounding a small repository is
mostly starting git. Where selectors cannot wait on pipes (not POSIX), the outputs are drained
one command after the other, which cannot deadlock since the commands do not wait for each other.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Self

import anyio.from_thread

from telic.grounding._batch import PathCollector

MAX_OUTPUT_BYTES: Final = 16 * 1024 * 1024
"""Most output one inventory or fingerprint command may produce."""

_READ_BYTES: Final = 1 << 16  # a pipe holds 64 KiB by default; larger reads only allocate more
_CANCEL_CHECK_SECONDS: Final = 0.05
_SELECT_PIPES: Final = os.name == "posix"


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


@dataclass(frozen=True, slots=True)
class Tool:
    """One command to run: its argument list, where its output goes, and how to judge it."""

    command: Sequence[str]
    """The program name (looked up on ``PATH``) and its arguments."""
    sink: Callable[[bytes], None]
    """Receives the standard output, chunk by chunk, as it arrives."""
    check: bool = True
    """Whether a non-zero exit status counts as unavailable (None)."""


def _finish(process: subprocess.Popen[bytes], *, kill: bool) -> int:
    """Reap a process whose output ended, killing it first if told; return its exit status."""
    if kill:
        process.kill()
    status = process.wait()
    assert process.stdout is not None
    process.stdout.close()
    return status


class Processes:
    """Commands started together in one directory, their outputs streamed to their sinks.

    The commands start when this is created; ``collect`` streams their outputs and returns
    their statuses. Leaving the ``with`` block kills and reaps whatever still runs, so a
    failure or a cancellation in between leaves no process behind.
    """

    def __init__(self, tools: Sequence[Tool], *, cwd: str) -> None:
        self._tools = tuple(tools)
        self._statuses: list[int | None] = [None] * len(self._tools)
        self._produced = [0] * len(self._tools)
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        search_path = os.environ.get("PATH", os.defpath)
        environment = _environment(search_path)
        found: dict[str, str | None] = {}  # each program is looked up once
        try:
            for index, tool in enumerate(self._tools):
                name = tool.command[0]
                if name not in found:
                    found[name] = shutil.which(name, path=search_path)
                executable = found[name]
                if executable is None:
                    continue
                try:
                    self._running[index] = subprocess.Popen(
                        [executable, *tool.command[1:]],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        cwd=cwd,
                        env=environment,
                    )
                except OSError:
                    continue
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill and reap every command still running."""
        while self._running:
            _, process = self._running.popitem()
            _finish(process, kill=True)

    def collect(self) -> list[int | None]:
        """Stream every output to its sink until all commands end; return their statuses.

        A status is None when the executable is missing, cannot start or writes more than
        16 MiB (it is then killed), and, for a checked tool, when it exits non-zero. Raises
        anyio's cancellation exception when the calling task is cancelled.
        """
        if _SELECT_PIPES:
            self._collect_selected()
        else:
            for index in list(self._running):
                stdout = self._running[index].stdout
                assert stdout is not None
                while self._pump(index, stdout.fileno()):
                    anyio.from_thread.check_cancelled()
        return list(self._statuses)

    def _collect_selected(self) -> None:
        with selectors.DefaultSelector() as selector:
            for index, process in self._running.items():
                assert process.stdout is not None
                selector.register(process.stdout, selectors.EVENT_READ, index)
            while selector.get_map():
                for key, _ in selector.select(_CANCEL_CHECK_SECONDS):
                    if not self._pump(key.data, key.fd):
                        selector.unregister(key.fileobj)
                anyio.from_thread.check_cancelled()

    def _pump(self, index: int, descriptor: int) -> bool:
        """Move one chunk of output to its sink; return False once the command has ended."""
        chunk = os.read(descriptor, _READ_BYTES)
        self._produced[index] += len(chunk)
        overflow = self._produced[index] > MAX_OUTPUT_BYTES
        if chunk and not overflow:
            self._tools[index].sink(chunk)
            return True
        status = _finish(self._running.pop(index), kill=overflow)
        if not overflow and (status == 0 or not self._tools[index].check):
            self._statuses[index] = status
        return False


def run_tools(tools: Sequence[Tool], *, cwd: str) -> list[int | None]:
    """Run ``tools`` concurrently in ``cwd``; return their statuses (see ``Processes``)."""
    with Processes(tools, cwd=cwd) as processes:
        return processes.collect()


def run_tool(
    command: Sequence[str], *, cwd: str, sink: Callable[[bytes], None], check: bool = True
) -> int | None:
    """Run one command in ``cwd``, feeding its stdout to ``sink``; return its exit status, or
    None as ``Processes.collect`` says."""
    return run_tools([Tool(command, sink, check)], cwd=cwd)[0]


class NulSplitter:
    """Splits a NUL-separated byte stream into paths, handing each chunk's paths on at once.

    Only an incomplete last path is kept between chunks, so the output is never held whole,
    and the consumer (normally a ``PathCollector``) works while the command is still listing.
    """

    def __init__(self, consume: Callable[[list[str]], None]) -> None:
        self._consume = consume
        self._tail = b""

    def __call__(self, chunk: bytes) -> None:
        """Take the next chunk of output."""
        data = self._tail + chunk if self._tail else chunk
        end = data.rfind(b"\0")
        if end < 0:
            self._tail = data
            return
        self._tail = data[end + 1 :]
        self._consume(os.fsdecode(data[:end]).split("\0"))

    def finish(self) -> None:
        """Hand on an unterminated last path, if there is one."""
        if self._tail:
            tail, self._tail = self._tail, b""
            self._consume([os.fsdecode(tail)])


def list_paths(
    command: Sequence[str], *, cwd: str, check: bool = True
) -> tuple[int | None, PathCollector]:
    """Run a command that prints NUL-separated paths; return its status and the paths."""
    collected = PathCollector()
    splitter = NulSplitter(collected)
    code = run_tool(command, cwd=cwd, sink=splitter, check=check)
    splitter.finish()
    return code, collected
