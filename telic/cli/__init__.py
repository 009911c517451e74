"""The ``telic`` command line (rank 7): serve, demo, inspect runs, verify, doctor.

``main`` is the console script. The scripted host that ``telic demo`` plays lives in
``telic.demo``.
"""

from __future__ import annotations

from telic._lazy import lazy_facade as _lazy_facade

TYPE_CHECKING = False  # not ``typing``'s: the resident shim's path imports no ``typing``

if TYPE_CHECKING:
    from telic.cli._entry import main as main

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
del TYPE_CHECKING  # not an export
