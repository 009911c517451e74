"""Lazy package facades: a facade's names are imported from their modules on first use.

A facade such as ``telic.protocol`` exports hundreds of names from a dozen modules; importing
all of them builds every pydantic model (most of a second). Code that needs one pure module —
the ``telic hook`` command reads the ledger and decides a permission in a fresh process per tool
call — would pay that price only because Python runs a package's ``__init__`` before any of its
modules. A lazy facade keeps the names (``from telic.protocol import Evidence`` still works, and
``dir()`` lists them all) but loads each one's module only when it is first asked for
(docs/design.md names the lazy facades).

Each facade lists its names once, as ordinary re-exports under ``typing.TYPE_CHECKING``::

    if typing.TYPE_CHECKING:
        from telic.ledger._locate import (
            resolve_url as resolve_url,
            sqlite_paths as sqlite_paths,
        )
        from telic.ledger._plans import Ledger as Ledger

    __getattr__, __dir__ = lazy_facade(globals())

Type checkers read those lines; at run time ``lazy_facade`` reads the same lines from the
facade's source (a regular-expression scan, far cheaper than parsing the file) and derives the
lazy table and ``__all__`` from them. ``tests/telic/test_lazy.py`` checks that the scan agrees
with Python's own parser for every lazy facade, so the one list cannot drift from what is loaded.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, MutableMapping
    from typing import NoReturn

_PATTERNS: list[re.Pattern[str]] = []


def _patterns() -> list[re.Pattern[str]]:
    """The block, statement and alias patterns, compiled on first use: importing ``re`` is a
    tenth of the resident shim's start, and the shim never reads a facade."""
    if not _PATTERNS:
        import re

        _PATTERNS.extend(
            (
                # The block: from ``if …TYPE_CHECKING:`` to the first line not indented.
                re.compile(r"^if (?:typing\.)?TYPE_CHECKING:\n((?:[ \t]+.*\n|\n)+)", re.M),
                # One statement: ``from M import A as A`` or ``from M import (A as A, …)``.
                re.compile(r"^[ \t]+from ([\w.]+) import (?:\(([^)]*)\)|(.*))$", re.M),
                re.compile(r"^(\w+) as (\w+)$"),
            )
        )
    return _PATTERNS


def _refuse(message: str) -> NoReturn:
    # Imported here: ``telic`` itself is a lazy facade, and the error tree is not loaded until
    # something needs it (the hook's shim never does).
    from telic._errors import UsageError

    raise UsageError(message)


def read_exports(package: str, source: str) -> dict[str, str]:
    """Return name → module for each ``from M import N as N`` in the facade's TYPE_CHECKING block.

    Raises:
        UsageError: rule ``facade.reexport`` — the block is missing, imports a name without
            re-exporting it under the same name, or exports one name twice.
    """
    block_pattern, statement_pattern, alias_pattern = _patterns()
    block = block_pattern.search(source)
    if block is None:
        _refuse(f"facade.reexport: {package} has no `if typing.TYPE_CHECKING:` block")
    where: dict[str, str] = {}
    for statement in statement_pattern.finditer(block.group(1)):
        module, grouped, single = statement.groups()
        listed = grouped if grouped is not None else single
        for entry in (part.strip() for part in listed.split(",")):
            if not entry:
                continue
            alias = alias_pattern.match(entry)
            if alias is None or alias.group(1) != alias.group(2):
                _refuse(
                    f"facade.reexport: {package} imports {entry!r} from {module}; "
                    "a facade re-exports each name as itself (`N as N`)"
                )
            name = alias.group(1)
            if name in where:
                _refuse(f"facade.reexport: {package} exports {name!r} twice")
            where[name] = module
    return where


def lazy_facade(
    namespace: MutableMapping[str, object],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return the facade's ``__getattr__`` and ``__dir__``; ``__all__`` is one of its names.

    The facade's source is read and scanned on the first use of any name (``__all__``
    included), not at import: the resident shim imports three facades and uses none of them.

    Args:
        namespace: the facade's ``globals()``; ``__name__`` and ``__file__`` locate its source,
            and a loaded name (and ``__all__``) is cached there.

    Raises:
        UsageError: rule ``facade.reexport`` (see ``read_exports``), on first use.
    """
    package = str(namespace["__name__"])
    table: dict[str, str] = {}

    def where() -> dict[str, str]:
        if not table:
            with open(str(namespace["__file__"]), encoding="utf-8") as file:
                table.update(read_exports(package, file.read()))
            namespace["__all__"] = sorted(table)
        return table

    def get(name: str) -> object:
        if name == "__all__":
            where()
            return namespace["__all__"]
        module = where().get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(where()) | {"__all__"})

    return get, names
