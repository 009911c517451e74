"""The ``telic`` command line (rank 7): serve, demo, inspect runs, verify, doctor.

``main`` is the console script. The scripted host that ``telic demo`` plays lives in
``telic.demo``.
"""

from __future__ import annotations

from telic.cli._entry import main as main

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
