"""Fixtures of the resident-server tests: a short private runtime directory, a repository, a
state directory and the environment a host would start the shim with."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from telic.demo import DemoRepository, find_demo_repo
from tests.telic.resident.kit import private_runtime


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A runtime directory short enough for socket paths; its servers are stopped afterwards."""
    with private_runtime() as path:
        yield path


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepository:
    """A fresh git copy of examples/demo-repo."""
    return DemoRepository.create(find_demo_repo(), tmp_path / "repo")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state directory outside the repository."""
    return tmp_path / "state"


@pytest.fixture
def env(runtime: Path, state: Path) -> dict[str, str]:
    """The shim's environment: this one, with the runtime and state directories set."""
    return {**os.environ, "TELIC_RUNTIME_DIR": str(runtime), "TELIC_STATE_DIR": str(state)}
