"""The resident per-repository server and the stdlib-only shim that attaches to it (rank 7).

``telic serve --resident`` and ``telic hook claude-code`` reach a long-lived server through a
Unix socket instead of paying Python's import floor on every start (docs/design.md, "Resident
server"). ``_places`` and ``_shim`` use the standard library only: they run in the fresh
process a host spawns, before anything heavy is imported. ``_server`` is the resident process
itself (``python -m telic.resident``).

Nothing is exported here, so that importing a module of this package stays cheap.
"""

from __future__ import annotations

__all__: list[str] = []
