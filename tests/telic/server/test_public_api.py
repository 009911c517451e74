"""The adapter uses the MCP SDK's public API only: no private module, name or attribute.

Every private name the installed ``mcp`` and ``mcp_types`` packages define (modules, functions,
methods, attributes starting with one underscore) is collected from their source; no module of
ours may import one, import from a private module, or read an attribute by one of those names
that our own code does not define itself.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OURS = [ROOT / "telic", ROOT / "actors" / "telic_actors", ROOT / "packets" / "telic_packets"]
_PRIVATE = re.compile(r"^_[A-Za-z0-9]\w*$")
WIRE_KEYS = frozenset({"_meta"})
"""Field names of the MCP wire itself (the specification's, not the SDK's): the resident shim
reads JSON-RPC with the standard library only and must spell them; no getattr reads them."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None
    assert spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def _trees(*roots: Path) -> Iterator[tuple[Path, ast.Module]]:
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _PRIVATE.match(name)}


def _sdk_private_names() -> set[str]:
    roots = [_package_dir("mcp"), _package_dir("mcp_types")]
    names: set[str] = set()
    for path, tree in _trees(*roots):
        names |= _defined(tree)
        names |= {part for part in path.with_suffix("").parts if _PRIVATE.match(part)}
    return names


def _is_sdk(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in ("mcp", "mcp_types")


def _violations() -> Iterator[str]:
    sdk = _sdk_private_names()
    ours: set[str] = set()
    parsed = list(_trees(*OURS))
    for _, tree in parsed:
        ours |= _defined(tree)
    for path, tree in parsed:
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _is_sdk(node.module):
                assert node.module is not None
                if any(_PRIVATE.match(part) for part in node.module.split(".")):
                    yield f"{where}:{node.lineno} imports from private module {node.module}"
                for alias in node.names:
                    if _PRIVATE.match(alias.name):
                        yield f"{where}:{node.lineno} imports private {alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if _is_sdk(alias.name) and any(_PRIVATE.match(p) for p in parts):
                        yield f"{where}:{node.lineno} imports private module {alias.name}"
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                if node.attr in sdk and node.attr not in ours:
                    yield f"{where}:{node.lineno} reads the SDK's private {node.attr}"
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in sdk
                and node.value not in ours
                and node.value not in WIRE_KEYS
            ):
                yield f"{where}:{node.lineno} names the SDK's private {node.value} (getattr?)"


def test_no_module_of_ours_touches_a_private_name_of_the_mcp_sdk() -> None:
    assert list(_violations()) == []


def test_the_check_sees_a_private_read_when_there_is_one() -> None:
    sdk = _sdk_private_names()
    assert "_lowlevel_server" in sdk  # what the adapter once read, and must not again
    assert "_connection" in sdk
