"""What git says about a work tree: its files, its status digest and its ``HEAD``.

The inventory is the file set of ``git ls-files -z --cached --others --exclude-standard``
(reference §4 item 5), and the fingerprint needs ``git status --porcelain=v1 -z
--untracked-files=all`` (item 11). Both would walk the whole work tree for untracked files, so
the untracked part of the inventory is read from the status output instead: status lists as
``??`` exactly the untracked files that the standard excludes let through, which is what
``ls-files --others --exclude-standard`` lists. ``ls-files --cached`` (index only, no walk) and
status run concurrently; their paths stream into one ``PathCollector``, and the status bytes are
hashed as they stream, never held. Should status fail, the full ``ls-files`` command lists the
inventory on its own and the fingerprint falls back to its no-git form.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import anyio

from telic.grounding._batch import PathCollector
from telic.grounding._process import NulSplitter, git_command, run_tool

__all__ = ["GitState", "StatusReader", "read_git", "top_level"]

_LS_FILES_CACHED: Final = git_command("ls-files", "-z", "--cached")
_LS_FILES_ALL: Final = git_command("ls-files", "-z", "--cached", "--others", "--exclude-standard")
_STATUS: Final = git_command("status", "--porcelain=v1", "-z", "--untracked-files=all")
_HEAD: Final = git_command("rev-parse", "--verify", "--quiet", "HEAD")
_TOP_LEVEL: Final = git_command("rev-parse", "--show-toplevel")


class StatusReader:
    """Digests ``status --porcelain=v1 -z`` output as it streams and hands on untracked paths.

    Entries are ``XY path``; a rename or copy entry is followed by one more field, the source
    path, which is skipped.
    """

    def __init__(self, consume: Callable[[list[str]], None]) -> None:
        self._hash = hashlib.sha256()
        self._consume = consume
        self._skip_next = False
        self._splitter = NulSplitter(self._fields)

    def __call__(self, chunk: bytes) -> None:
        """Take the next chunk of status output."""
        self._hash.update(chunk)
        self._splitter(chunk)

    def _fields(self, fields: list[str]) -> None:
        untracked: list[str] = []
        for entry in fields:
            if self._skip_next:
                self._skip_next = False
                continue
            code = entry[:2]
            if code == "??":
                untracked.append(entry[3:])
            elif "R" in code or "C" in code:
                self._skip_next = True
        if untracked:
            self._consume(untracked)

    def finish(self) -> None:
        """Hand on an unterminated last entry, if there is one."""
        self._splitter.finish()

    def digest_with(self, tail: bytes) -> str:
        """Return ``sha256:`` of the status output followed by ``tail``."""
        digest = self._hash.copy()
        digest.update(tail)
        return "sha256:" + digest.hexdigest()


@dataclass(slots=True)
class GitState:
    """The work tree as git lists it; each part is None when its command failed."""

    paths: PathCollector | None
    status: StatusReader | None
    head: str | None


async def top_level(root: str) -> str | None:
    """Return git's top level of the work tree holding ``root``, or None outside git."""
    output = bytearray()
    if await run_tool(_TOP_LEVEL, cwd=root, sink=output.extend) is None:
        return None
    return output.removesuffix(b"\n").decode("utf-8", "surrogateescape") or None


async def read_git(root: str) -> GitState:
    """List the work tree at ``root``, digest its status and read ``HEAD``, concurrently."""
    collected = PathCollector()
    tracked = NulSplitter(collected)
    status = StatusReader(collected)
    head = bytearray()
    codes: dict[str, int | None] = {}

    async def run(name: str, command: tuple[str, ...], sink: Callable[[bytes], None]) -> None:
        codes[name] = await run_tool(command, cwd=root, sink=sink)

    async with anyio.create_task_group() as group:
        group.start_soon(run, "tracked", _LS_FILES_CACHED, tracked)
        group.start_soon(run, "status", _STATUS, status)
        group.start_soon(run, "head", _HEAD, head.extend)
    head_text = head.decode("ascii", "replace").strip() if codes["head"] is not None else None
    if codes["tracked"] is not None and codes["status"] is not None:
        tracked.finish()
        status.finish()
        return GitState(collected, status, head_text)
    collected = PathCollector()
    everything = NulSplitter(collected)
    if codes["tracked"] is None or await run_tool(_LS_FILES_ALL, cwd=root, sink=everything) is None:
        return GitState(None, None, head_text)
    everything.finish()
    return GitState(collected, None, head_text)
