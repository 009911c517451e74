"""The ``telic_packets`` facade: curated exports, documented names, pydantic as sole dependency."""

from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import telic_packets
import telic_packets.conformance
import telic_packets.schema

PACKAGE_DIR = Path(telic_packets.__file__).parent
ALLOWED_THIRD_PARTY = {"pydantic", "pydantic_core", "annotated_types", "typing_extensions"}
FACADES = [telic_packets, telic_packets.schema, telic_packets.conformance]


@pytest.mark.parametrize("facade", FACADES, ids=lambda module: module.__name__)
def test_all_lists_exactly_the_public_names(facade: types.ModuleType) -> None:
    # dir(), not vars(): the facade is lazy and lists names it has not loaded yet.
    public = {
        name
        for name in dir(facade)
        if not name.startswith("_")
        and not isinstance(getattr(facade, name), types.ModuleType)
        and name != "annotations"
    }
    assert len(set(facade.__all__)) == len(facade.__all__)
    assert set(facade.__all__) == public


@pytest.mark.parametrize("facade", FACADES, ids=lambda module: module.__name__)
def test_every_exported_class_and_function_is_documented(facade: types.ModuleType) -> None:
    assert facade.__doc__
    for name in facade.__all__:
        value = getattr(facade, name)
        if inspect.isclass(value):
            assert value.__dict__.get("__doc__"), name
        elif inspect.isfunction(value):
            assert value.__doc__, name


def test_every_model_field_is_documented() -> None:
    from pydantic import BaseModel

    for name in telic_packets.__all__:
        value = getattr(telic_packets, name)
        if inspect.isclass(value) and issubclass(value, BaseModel):
            for field_name, field in value.model_fields.items():
                assert field.description, f"{name}.{field_name}"


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_module_imports_anything_but_the_standard_library_and_pydantic() -> None:
    modules = sorted(PACKAGE_DIR.rglob("*.py"))
    assert len(modules) > 10
    for module in modules:
        roots = imported_roots(module) - {"telic_packets"}
        assert "telic" not in roots, module.name
        assert "telic_actors" not in roots, module.name
        foreign = roots - ALLOWED_THIRD_PARTY - set(sys.stdlib_module_names)
        assert not foreign, f"{module.relative_to(PACKAGE_DIR)} imports {foreign}"


_BLOCK_TELIC = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"telic", "telic_actors"}:
            raise ImportError("telic_packets must import alone: " + name)
        return None

sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[1])
import telic_packets, telic_packets.schema, telic_packets.conformance
assert telic_packets.__file__.startswith(sys.argv[1]), telic_packets.__file__
assert not {m for m in sys.modules if m.split(".")[0] in {"telic", "telic_actors"}}
print("alone")
"""


def test_the_package_imports_in_an_isolated_interpreter_without_telic() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", _BLOCK_TELIC, str(PACKAGE_DIR.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alone"


@pytest.mark.slow
def test_the_distribution_installs_and_imports_in_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(PACKAGE_DIR.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    probe = (
        "import importlib.metadata as m, importlib.resources as r, sys, telic_packets;"
        "from telic_packets.conformance import main;"
        "schema = r.files('telic_packets.schema').joinpath('evidence-packet-1.schema.json');"
        "assert schema.is_file();"
        "assert r.files('telic_packets').joinpath('py.typed').is_file();"
        "names = {d.metadata['Name'].lower().replace('_', '-') for d in m.distributions()};"
        "assert 'pydantic' in names and not names & {'telic', 'telic-actors'}, names;"
        "sys.argv=['conformance']; raise SystemExit(main([]))"
    )
    done = subprocess.run(
        [str(python), "-I", "-c", probe], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[-1].endswith("passed, 0 failed")
