"""Lazy package facades: a facade's names are imported from their modules on first use.

A facade such as ``telic.protocol`` exports hundreds of names from a dozen modules; importing
all of them builds every pydantic model (most of a second). Code that needs one pure module —
the ``telic hook`` command reads the ledger and decides a permission in a fresh process per tool
call — would pay that price only because Python runs a package's ``__init__`` before any of its
modules. A lazy facade keeps the names (``from telic.protocol import Evidence`` still works, and
``dir()`` lists them all) but loads each one's module only when it is first asked for.

Type checkers see the facade's ordinary ``from … import … as …`` lines (under
``typing.TYPE_CHECKING``); at run time the table passed here is the source of truth, and
``tests/test_exports.py`` checks that the two agree through ``__all__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_facade"]


def lazy_facade(
    package: str, exports: Mapping[str, tuple[str, ...]], namespace: MutableMapping[str, object]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return the ``__getattr__`` and ``__dir__`` of a facade exporting ``exports``.

    Args:
        package: the facade's ``__name__`` (for error messages).
        exports: module name → the names the facade exports from it.
        namespace: the facade's ``globals()``; a loaded name is cached there.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def get(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(where))

    return get, names
