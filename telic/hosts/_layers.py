"""The permission layers of a run, kept beside an SQLite ledger for the hook's fast path.

Deciding a native action needs what ``telic_check_tool_action`` decides with: three layers
(``telic.controller.tool_layers``: the mode, the run authorization and the current phase's
effective permissions) and the user's explicit protected-path grants (start_run's
``protected_paths_granted``; without one, no write or delete reaches ``.git/**``,
``.github/**`` or an ``.env`` file). Computing them means loading the
run through the controller, which costs most of a second to import; a hook that runs once per
tool call in a fresh process cannot pay that every time. So the layers are computed by the
controller itself (``compute_layers``, the slow path) and written next to the database, keyed by
the run's version and artifact count as read from the run row before and after computing them.
Every step that could change them raises one of the two, so a snapshot whose key still matches
the row is the controller's answer for the current state; one that does not is ignored and
recomputed. Files are written atomically (temporary file, ``fsync``, rename) with mode 0600.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple, TypeVar

from telic.ledger import BlockingLedger
from telic.permissions import Layer

if TYPE_CHECKING:
    from telic.ledger import Ledger


LAYERS_DIR: Final = "hook-layers"
SESSIONS_DIR: Final = "hook-sessions"
_T = TypeVar("_T")
_FORMAT: Final = "telic.hook-layers/2"
"""Version 2 added the protected-path grants; a version 1 snapshot is ignored and recomputed."""


class Key(NamedTuple):
    """What a snapshot was computed at: the run's version and artifact count."""

    run_id: str
    version: int
    artifact_count: int


class Store(NamedTuple):
    """Where one hook decision reads and keeps things."""

    ledger: BlockingLedger
    """The blocking handle the decision reads and appends through."""
    state_dir: Path
    """Where session bindings, layer snapshots and cast scopes are kept."""
    url: str
    """The ledger's URL."""
    root: str
    """The repository root."""

    def run(self, job: Callable[[Ledger], Awaitable[_T]]) -> _T:
        """Await ``job`` on the async ledger (a slow path): the one a ``PortalLedger`` holds,
        else one opened for the job (``DirectLedger`` holds none)."""
        import anyio

        from telic.ledger import PortalLedger, open_ledger

        if isinstance(self.ledger, PortalLedger):
            return self.ledger.run(job)

        async def opened() -> _T:
            async with open_ledger(self.url, repository_root=self.root) as ledger:
                return await job(ledger)

        return anyio.run(opened)


class Authority(NamedTuple):
    """Everything a decision of ``authorize_action`` needs beside the action itself."""

    layers: tuple[Layer, ...]
    """The mode, authorization and phase layers, outermost first."""
    protected_granted: tuple[str, ...] = ()
    """The user's explicit protected-path grants (``protected_paths_granted``)."""


def state_file(state_dir: Path, folder: str, key: str, suffix: str = ".json") -> Path:
    """The file that keeps ``key``'s state in ``folder`` of the state directory, named by the
    key's hash (a session id or run id is no file name)."""
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return state_dir / folder / f"{name}{suffix}"


def read_layers(state_dir: Path, key: Key) -> Authority | None:
    """Return the stored authority computed at ``key``; ``None`` when absent, stale or
    unreadable (the caller then computes it)."""
    try:
        stored = json.loads(state_file(state_dir, LAYERS_DIR, key.run_id).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("format") != _FORMAT:
        return None
    if stored.get("key") != [key.run_id, key.version, key.artifact_count]:
        return None
    layers = stored.get("layers")
    if not isinstance(layers, list) or len(layers) != 3:
        return None
    granted = stored.get("protectedGranted")
    if not isinstance(granted, list) or not all(isinstance(g, str) for g in granted):
        return None
    try:
        return Authority(tuple(Layer.from_json(layer) for layer in layers), tuple(granted))
    except ValueError:
        return None


def write_layers(state_dir: Path, key: Key, authority: Authority) -> None:
    """Store ``authority`` as computed at ``key`` (atomically; the last writer wins)."""
    path = state_file(state_dir, LAYERS_DIR, key.run_id)
    document = {
        "format": _FORMAT,
        "key": [key.run_id, key.version, key.artifact_count],
        "layers": [layer.to_json() for layer in authority.layers],
        "protectedGranted": list(authority.protected_granted),
    }
    write_private(path, document)


def write_private(path: Path, document: object) -> None:
    """Write ``document`` at ``path``, a text as it is and anything else as JSON: folder 0700,
    file 0600, atomically (temporary file, ``fsync``, rename; the last writer wins)."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            text = document if isinstance(document, str) else json.dumps(document, sort_keys=True)
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def compute_layers(store: Store, run_id: str) -> Authority:
    """Load the run through the controller and return its layers and protected-path grants (the
    slow path: imports the controller).

    Raises:
        TelicError: the run cannot be loaded, or its NextAction cannot be generated.
    """
    from telic.controller import Controller, tool_layers

    async def load(ledger: Ledger) -> Authority:
        state = await Controller(ledger).load(run_id)
        granted = state.envelope.authorization.protected_paths_granted
        return Authority(tool_layers(state), tuple(granted))

    return store.run(load)
