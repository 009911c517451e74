"""Fixtures of the MCP adapter tests: a fresh copy of the demo repository and a state dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from telic.demo import DemoRepository, find_demo_repo


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepository:
    """A fresh git copy of examples/demo-repo."""
    return DemoRepository.create(find_demo_repo(), tmp_path / "repo")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state directory outside the repository."""
    return tmp_path / "state"
