"""Bodies of SQLite stores written before schema 2: files in ``blobs/sha256/<2 hex>/<62 hex>``.

Schema 2 keeps every new body in the database, in the transaction that refers to it. A store
created earlier still holds its older bodies as files; they are read from there (never written)
whenever a body is not in the ``blobs`` table. The blob root is opened once, refusing a symlink or
a non-directory at ``blobs`` and ``blobs/sha256``; every file is then opened relative to it, with
no symlink followed at the prefix directory or the file, and only a regular file is read.
Callers re-verify what comes back against the digest, as for any body.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from telic._errors import ContextSecurityError

from ._paths import DIR_MODE

__all__ = ["LegacyBlobs"]

_HEX_DIGEST: Final = re.compile(r"sha256:([0-9a-f]{64})")
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _open_directory(name: str, parent: int | None, what: str) -> int:
    """Open a directory without following a symlink; ``FileNotFoundError`` if it is absent."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ContextSecurityError(
                f"{what} in the Telic state directory is a symlink or not a directory"
            ) from exc
        raise


class LegacyBlobs:
    """Read-only access to the body files of a store created before schema 2."""

    def __init__(self, root: int) -> None:
        self._root = root

    @classmethod
    def open(cls, state_dir: Path) -> LegacyBlobs | None:
        """Open ``state_dir/blobs/sha256`` if the store has one; ``None`` if it has none.

        Raises:
            ContextSecurityError: ``blobs`` or ``blobs/sha256`` is a symlink or not a directory.
        """
        try:
            blobs = _open_directory(str(state_dir / "blobs"), None, "'blobs'")
        except FileNotFoundError:
            return None
        try:
            root = _open_directory("sha256", blobs, "'blobs/sha256'")
            try:
                for fd in (blobs, root):  # private, as the store made them
                    if stat.S_IMODE(os.fstat(fd).st_mode) != DIR_MODE:
                        os.fchmod(fd, DIR_MODE)
            except BaseException:
                os.close(root)
                raise
        except FileNotFoundError:
            return None
        finally:
            os.close(blobs)
        return cls(root)

    def read_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        """Return the bytes of the digests that have a file; a digest of any other form, or
        without a file, is absent (blocking: call it from a worker thread)."""
        found: dict[str, bytes] = {}
        for digest in digests:
            data = self._read(digest)
            if data is not None:
                found[digest] = data
        return found

    def _read(self, digest: str) -> bytes | None:
        match = _HEX_DIGEST.fullmatch(digest)
        if match is None:
            return None  # never build a path from anything but a well-formed digest
        hex_digest = match[1]
        try:
            prefix = _open_directory(hex_digest[:2], self._root, "a blob directory")
        except FileNotFoundError:
            return None
        try:
            fd = os.open(hex_digest[2:], _FILE_FLAGS, dir_fd=prefix)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ContextSecurityError(
                    "a blob in the Telic state directory is a symlink"
                ) from exc
            raise
        finally:
            os.close(prefix)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ContextSecurityError("a blob in the Telic state directory is not a file")
            return handle.read()

    def close(self) -> None:
        """Release the directory handle."""
        with contextlib.suppress(OSError):
            os.close(self._root)
