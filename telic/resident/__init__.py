"""The resident per-repository server and the stdlib-only shim that attaches to it (rank 7).

``telic serve --resident`` and ``telic hook claude-code`` reach a long-lived server through a
Unix socket instead of paying Python's import floor on every start (docs/design.md, "Resident
server"). ``_places`` and ``_shim`` use the standard library only: they run in the fresh
process a host spawns, before anything heavy is imported. ``_server`` is the resident process
itself (``python -m telic.resident``).

The facade is lazy (``telic._lazy``), so importing it costs nothing until a name is used.
"""

from __future__ import annotations

from telic._lazy import lazy_facade as _lazy_facade

TYPE_CHECKING = False  # not ``typing``'s: the resident shim's path imports no ``typing``

if TYPE_CHECKING:
    from telic.resident._shim import ask_hook as ask_hook, serve_resident as serve_resident

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
del TYPE_CHECKING  # not an export
