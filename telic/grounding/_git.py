"""What git says about a work tree: its top level, its ``HEAD``, its files and its status digest.

The inventory is the file set of ``git ls-files -z --cached --others --exclude-standard``
(docs/protocol.md §4 item 5), and the fingerprint needs ``git status --porcelain=v1 -z
--untracked-files=all`` (item 11). Both would walk the whole work tree for untracked files, so
the untracked part of the inventory is read from the status output instead: status lists as
``??`` exactly the untracked files that the standard excludes let through, which is what
``ls-files --others --exclude-standard`` lists. The top level and ``HEAD`` come from one
``rev-parse``. Their paths stream into one ``PathCollector``, and the status bytes are hashed as
they stream, never held. Should status fail, the full ``ls-files`` command lists the inventory
on its own and the fingerprint falls back to its no-git form.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from telic.grounding._batch import PathCollector
from telic.grounding._process import NulSplitter, Processes, Tool, git_command, list_paths
from telic.protocol import SHA256_PREFIX

_LS_FILES_CACHED: Final = git_command("ls-files", "-z", "--cached")
_LS_FILES_ALL: Final = git_command("ls-files", "-z", "--cached", "--others", "--exclude-standard")
_STATUS: Final = git_command("status", "--porcelain=v1", "-z", "--untracked-files=all")
# --show-toplevel prints as soon as it is parsed; --verify --quiet HEAD then prints the commit or
# exits 1 without a word (no commit yet). Outside a work tree git prints nothing and exits 128.
_REV_PARSE: Final = git_command("rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD")


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
        return SHA256_PREFIX + digest.hexdigest()


@dataclass(slots=True)
class GitState:
    """The work tree as git lists it; each part is None when its command failed."""

    top_level: str | None
    """The top level of the work tree holding the listed directory; None outside git."""
    paths: PathCollector | None
    status: StatusReader | None
    head: str | None


def parse_rev_parse(code: int | None, output: bytes) -> tuple[str | None, str | None]:
    """Return the top level and ``HEAD`` from ``_REV_PARSE``'s exit status and output.

    On exit 0 the last line is ``HEAD`` and everything before it the top level (which may
    itself hold a line break); on any other exit ``HEAD`` is None and the whole output, if
    any, is the top level (git prints it before it looks at ``HEAD``).
    """
    if code is None:
        return None, None
    text = output.removesuffix(b"\n")
    head = None
    if code == 0:
        text, _, commit = text.rpartition(b"\n")
        head = commit.decode("ascii", "replace").strip()
    return text.decode("utf-8", "surrogateescape") or None, head


class GitReader(Processes):
    """The three git commands for the work tree at ``root``, started as soon as this is made.

    Starting git costs a millisecond or more, most of the grounding of a small repository, so
    they start before anyone knows whether ``root`` is the top level; the caller lists again at
    the top level in the rare case that it is not (``GitState.top_level``). ``result`` waits for
    them; leaving the ``with`` block kills whatever still runs.
    """

    def __init__(self, root: str) -> None:
        self._root = root
        self._collected = PathCollector()
        self._tracked = NulSplitter(self._collected)
        self._status = StatusReader(self._collected)
        self._revision = bytearray()
        # status walks the work tree and takes longest, so it starts first
        tools = [
            Tool(_STATUS, self._status),
            Tool(_LS_FILES_CACHED, self._tracked),
            Tool(_REV_PARSE, self._revision.extend, check=False),
        ]
        super().__init__(tools, cwd=root)

    def result(self) -> GitState:
        """Wait for the commands and return what they said.

        The listing and the status are only meaningful when ``root`` is the top level;
        outside a work tree ``top_level`` is None and nothing else is kept.
        """
        status_code, tracked_code, revision_code = self.collect()
        top_level, head = parse_rev_parse(revision_code, bytes(self._revision))
        if top_level is None:
            return GitState(None, None, None, None)
        if tracked_code is not None and status_code is not None:
            self._tracked.finish()
            self._status.finish()
            return GitState(top_level, self._collected, self._status, head)
        if tracked_code is None:
            return GitState(top_level, None, None, head)
        code, collected = list_paths(_LS_FILES_ALL, cwd=self._root)
        return GitState(top_level, None if code is None else collected, None, head)


def read_git(root: str) -> GitState:
    """List the work tree at ``root``, digest its status, and read its top level and ``HEAD``."""
    with GitReader(root) as reader:
        return reader.result()
