"""The dependency rules of docs/design.md, checked on the import graph of the source tree.

Dependencies point one way: ``telic_packets`` → pydantic only; ``telic_actors`` → anyio only;
``telic`` on top. Inside telic: adapters → roles/casting → controller →
permissions/grounding/ledger → protocol → errors. Library code never imports asyncio or trio.
A subpackage imports a sibling through its facade (``telic/<pkg>/__init__.py``), never a
sibling's private module, except where ``PRIVATE_IMPORTS_ALLOWED`` says why.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "telic": ROOT / "telic",
    "telic_actors": ROOT / "actors" / "telic_actors",
    "telic_packets": ROOT / "packets" / "telic_packets",
}
THIRD_PARTY_ALLOWED = {
    "telic_packets": {"pydantic", "pydantic_core", "annotated_types", "typing_extensions"},
    "telic_actors": {"anyio", "sniffio", "typing_extensions"},
}
# Rank of each telic subpackage: a module may import only from its own rank or lower ones.
TELIC_LAYERS = {
    "_errors": 0,
    "_secrets": 0,
    "_lazy": 0,
    "protocol": 1,
    "permissions": 2,
    "grounding": 2,
    "ledger": 2,
    "controller": 3,
    "roles": 4,
    "casting": 4,
    "reports": 5,
    "telemetry": 5,
    "server": 6,
    "hosts": 6,
    "demo": 6,
    "cli": 7,
    "resident": 7,
    "__main__": 8,
}
# Subpackages of one rank that must not import each other.
SIBLINGS_APART = {("permissions", "ledger"), ("grounding", "ledger"), ("permissions", "grounding")}
# (importing module, a sibling's private module) → why the facade is not the door here.
PRIVATE_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {}


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    base = SOURCES[package]
    for path in sorted(base.rglob("*.py")):
        relative = path.relative_to(base).with_suffix("")
        parts = [package, *relative.parts]
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _imports(module: str, path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = anchor[: len(anchor) - drop]
                yield ".".join([*base, node.module] if node.module else base)
            elif node.module:
                yield node.module


def _from_imports(module: str, path: Path) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """Each import of ``path`` as (line, absolute module, names), ``import m`` with no names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level:
                anchor = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = anchor[: len(anchor) - drop]
                yield node.lineno, ".".join([*base, node.module] if node.module else base), names
            elif node.module:
                yield node.lineno, node.module, names


def _sibling_private_imports(module: str, path: Path, root: Path = ROOT) -> Iterator[str]:
    """A message for each import of a sibling subpackage's private module by ``module``."""
    for line, imported, names in _from_imports(module, path):
        parts = imported.split(".")
        if parts[0] != "telic" or len(parts) < 3 or parts[1] == _layer(module):
            continue
        if not any(part.startswith("_") for part in parts[2:]):
            continue
        if (module, imported) in PRIVATE_IMPORTS_ALLOWED:
            continue
        facade = ".".join(parts[:2])
        exported = set(getattr(importlib.import_module(facade), "__all__", ()))
        missing = [name for name in names if name not in exported]
        where = f"{path.relative_to(root)}:{line}"
        if not names:
            yield f"{where}: imports {imported}; import the names it needs from {facade}"
        elif missing:
            yield (
                f"{where}: imports {', '.join(names)} from {imported}; export "
                f"{', '.join(missing)} from {facade} (its __init__.py) and import it from there"
            )
        else:
            yield f"{where}: imports from {imported}; use `from {facade} import {', '.join(names)}`"


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


ALL_MODULES = [(pkg, mod, path) for pkg in SOURCES for mod, path in _modules(pkg)]


def _layering_violations(package: str, module: str, path: Path) -> Iterator[str]:
    """A message for each import of ``module`` that breaks the layering."""
    for imported in _imports(module, path):
        top = imported.split(".")[0]
        if top in {"asyncio", "trio"}:
            yield f"{module} imports {top}; library code uses anyio"
            continue
        if top in sys.stdlib_module_names or top == "__future__":
            continue
        if package in THIRD_PARTY_ALLOWED:
            allowed = THIRD_PARTY_ALLOWED[package] | {package}
            if top not in allowed:
                yield f"{module} imports {imported}; {package} may use only {sorted(allowed)}"
            continue
        if top != "telic":
            continue
        source, target = _layer(module), _layer(imported)
        if source in {"__init__", target}:
            continue
        if target == "__init__":
            yield f"{module} imports the telic facade; import the module itself"
        elif target not in TELIC_LAYERS:
            yield f"{imported} is in no layer; add it to TELIC_LAYERS"
        elif source not in TELIC_LAYERS:
            yield f"{module} is in no layer; add it to TELIC_LAYERS"
        elif TELIC_LAYERS[target] > TELIC_LAYERS[source]:
            yield (
                f"{module} (layer {source}) imports {imported} (layer {target}), "
                "an upward dependency"
            )
        elif (source, target) in SIBLINGS_APART or (target, source) in SIBLINGS_APART:
            yield f"{module} imports sibling {target}"


def test_module_imports_respect_the_layering() -> None:
    """Every module of the three packages at once; the message lists every violation."""
    assert len(ALL_MODULES) > 100
    problems = [
        p
        for package, module, path in ALL_MODULES
        for p in _layering_violations(package, module, path)
    ]
    assert not problems, "\n".join(problems)


def test_the_layer_table_names_every_telic_subpackage() -> None:
    found = {
        path.stem
        for path in SOURCES["telic"].iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").exists())
    }
    unknown = found - set(TELIC_LAYERS) - {"__init__"}
    assert not unknown, f"add these to TELIC_LAYERS in docs/design.md and this test: {unknown}"


def test_the_checker_sees_a_violation_when_there_is_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from telic.controller import step\nimport asyncio\n", encoding="utf-8")
    assert list(_imports("telic.protocol.bad", bad)) == ["telic.controller", "asyncio"]
    assert list(_layering_violations("telic", "telic.protocol.bad", bad)) == [
        "telic.protocol.bad (layer protocol) imports telic.controller (layer controller), "
        "an upward dependency",
        "telic.protocol.bad imports asyncio; library code uses anyio",
    ]
    worse = tmp_path / "worse.py"
    worse.write_text(
        "import telic\nimport httpx\nfrom telic.ledger import Ledger\n", encoding="utf-8"
    )
    assert list(_layering_violations("telic", "telic.permissions.worse", worse)) == [
        "telic.permissions.worse imports the telic facade; import the module itself",
        "telic.permissions.worse imports sibling ledger",
    ]
    assert list(_layering_violations("telic_packets", "telic_packets.worse", worse)) == [
        f"telic_packets.worse imports {name}; telic_packets may use only "
        f"{sorted(THIRD_PARTY_ALLOWED['telic_packets'] | {'telic_packets'})}"
        for name in ("telic", "httpx", "telic.ledger")
    ]


TELIC_MODULES = [(mod, path) for pkg, mod, path in ALL_MODULES if pkg == "telic"]


def test_siblings_import_each_others_facades_not_private_modules() -> None:
    """Every telic module at once; the message lists every private sibling import."""
    problems = [p for module, path in TELIC_MODULES for p in _sibling_private_imports(module, path)]
    assert not problems, "\n".join(problems)


def test_every_allowed_private_import_is_still_made() -> None:
    made = {
        (module, imported)
        for module, path in TELIC_MODULES
        for _, imported, _ in _from_imports(module, path)
    }
    stale = set(PRIVATE_IMPORTS_ALLOWED) - made
    assert not stale, f"remove these from PRIVATE_IMPORTS_ALLOWED: {sorted(stale)}"


def test_a_private_sibling_import_is_named_with_its_line_and_public_name(tmp_path: Path) -> None:
    package = tmp_path / "telic" / "hosts"
    package.mkdir(parents=True)
    bad = package / "_bad.py"
    bad.write_text(
        "from telic.hosts._kits import HOSTS\n"
        "from telic.ledger._records import Limits, NewTraceEvent\n"
        "from telic.ledger._sql import SQL_SCHEMA\n"
        "from telic.ledger import Ledger\n",
        encoding="utf-8",
    )
    problems = list(_sibling_private_imports("telic.hosts._bad", bad, root=tmp_path))
    assert problems == [
        "telic/hosts/_bad.py:2: imports from telic.ledger._records; "
        "use `from telic.ledger import Limits, NewTraceEvent`",
        "telic/hosts/_bad.py:3: imports SQL_SCHEMA from telic.ledger._sql; "
        "export SQL_SCHEMA from telic.ledger (its __init__.py) and import it from there",
    ]
