"""Every public facade's ``__all__`` agrees with what it exports, and every export is documented."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

import telic
import telic_actors
import telic_packets


def _facades() -> list[str]:
    names: list[str] = []
    for root in (telic, telic_actors, telic_packets):
        names.append(root.__name__)
        for info in pkgutil.walk_packages(root.__path__, prefix=root.__name__ + "."):
            leaf = info.name.rsplit(".", 1)[-1]
            if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
                names.append(info.name)
            del leaf
    return names


FACADES = _facades()


def _public_names(module: types.ModuleType) -> set[str]:
    # dir(), not vars(): a lazy facade (telic._lazy) lists names it has not loaded yet.
    return {
        name
        for name in dir(module)
        if not name.startswith("_")
        and not isinstance(getattr(module, name), types.ModuleType)
        and name not in {"annotations"}
    }


@pytest.mark.parametrize("facade", FACADES)
def test_facade_all_matches_its_public_names(facade: str) -> None:
    module = importlib.import_module(facade)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{facade} has no __all__"
    assert len(set(exported)) == len(exported), f"{facade}.__all__ repeats a name"
    assert set(exported) == _public_names(module), (
        f"{facade}: __all__ and the public names differ: {set(exported) ^ _public_names(module)}"
    )


@pytest.mark.parametrize("facade", FACADES)
def test_every_exported_class_and_function_has_its_own_docstring(facade: str) -> None:
    module = importlib.import_module(facade)
    assert module.__doc__, f"{facade} has no module docstring"
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            own = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
            assert own, f"{facade}.{name} has no docstring of its own"
            assert own.strip(), f"{facade}.{name} has a blank docstring"
