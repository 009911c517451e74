"""The resident per-repository server and the stdlib-only shim that attaches to it (rank 7).

``telic serve --resident`` and ``telic hook claude-code`` reach a long-lived server through a
Unix socket instead of paying Python's import floor on every start (docs/design.md, "Resident
server"). ``_places`` and ``_shim`` use the standard library only: they run in the fresh
process a host spawns, before anything heavy is imported. ``_server`` is the resident process
itself (``python -m telic.resident``).
"""

from __future__ import annotations

from telic.resident._shim import (
    Deadline as Deadline,
    ask_hook as ask_hook,
    run_hook as run_hook,
    serve_resident as serve_resident,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
