"""A lazy facade lists its names once, and what it loads is exactly what type checkers read."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from telic._errors import UsageError
from telic._lazy import read_exports

ROOT = Path(__file__).resolve().parents[2] / "telic"
FACADES = sorted(
    path for path in ROOT.glob("*/__init__.py") if "lazy_facade" in path.read_text("utf-8")
)


def _parsed_exports(source: str) -> dict[str, str]:
    """What Python's parser reads in the TYPE_CHECKING block: name → module."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            if isinstance(node.test, ast.UnaryOp):
                continue
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    found[alias.asname or alias.name] = str(statement.module)
    return found


@pytest.mark.parametrize("path", FACADES, ids=[p.parent.name for p in FACADES])
def test_the_scan_reads_the_same_exports_as_the_python_parser(path: Path) -> None:
    source = path.read_text("utf-8")
    assert read_exports(path.parent.name, source) == _parsed_exports(source)


@pytest.mark.parametrize("path", FACADES, ids=[p.parent.name for p in FACADES])
def test_a_facade_exports_exactly_the_names_of_its_block(path: Path) -> None:
    facade = importlib.import_module(f"telic.{path.parent.name}")
    parsed = _parsed_exports(path.read_text("utf-8"))
    assert facade.__all__ == sorted(parsed)
    for name, module in parsed.items():
        assert getattr(facade, name) is getattr(importlib.import_module(module), name), name


def test_a_renamed_reexport_is_refused_by_rule() -> None:
    source = "if typing.TYPE_CHECKING:\n    from telic.x._a import (\n        A as B,\n    )\n"
    with pytest.raises(UsageError, match=r"facade\.reexport: telic\.x imports 'A as B'"):
        read_exports("telic.x", source)


def test_a_plain_import_without_as_is_refused_by_rule() -> None:
    source = "if typing.TYPE_CHECKING:\n    from telic.x._a import A\n"
    with pytest.raises(UsageError, match=r"facade\.reexport: telic\.x imports 'A'"):
        read_exports("telic.x", source)


def test_a_name_exported_twice_is_refused_by_rule() -> None:
    source = (
        "if typing.TYPE_CHECKING:\n"
        "    from telic.x._a import A as A\n"
        "    from telic.x._b import A as A\n"
    )
    with pytest.raises(UsageError, match=r"facade\.reexport: telic\.x exports 'A' twice"):
        read_exports("telic.x", source)


def test_a_facade_without_a_block_is_refused_by_rule() -> None:
    with pytest.raises(UsageError, match=r"facade\.reexport: telic\.x has no"):
        read_exports("telic.x", "from telic.x._a import A as A\n")


def test_an_unknown_name_is_an_attribute_error_naming_the_facade() -> None:
    facade = importlib.import_module("telic.ledger")
    with pytest.raises(AttributeError, match=r"module 'telic\.ledger' has no attribute 'Nope'"):
        _ = facade.Nope


def _defined_names(module: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None, module
    assert spec.origin is not None, module
    names: set[str] = set()
    for node in ast.parse(Path(spec.origin).read_text("utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize("path", FACADES, ids=[p.parent.name for p in FACADES])
def test_a_facade_loads_each_name_from_the_module_that_defines_it(path: Path) -> None:
    # Pointing at a module that only re-imports a name loads that module's other imports too
    # (telic.protocol.Mode through _types would build pydantic models for the light hook).
    wrong = [
        f"{name} from {module}"
        for name, module in _parsed_exports(path.read_text("utf-8")).items()
        if name not in _defined_names(module)
    ]
    assert not wrong, f"telic.{path.parent.name} re-exports names its module only imports: {wrong}"
