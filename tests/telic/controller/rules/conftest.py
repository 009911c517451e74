"""Registers the ``rule`` marker: a test marked ``@pytest.mark.rule("WR-…")`` proves that rule.

``harness.refuse`` reads the marker of the running test, so a marked test can only pass by
showing a rejection that names its rule.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.telic.controller.rules import harness


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker (the suite runs with --strict-markers)."""
    config.addinivalue_line("markers", "rule(*ids): the rule ids a negative test proves")


@pytest.fixture(autouse=True)
def _marked_rules(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("rule")
    token = harness.MARKED.set(tuple(marker.args) if marker is not None else ())
    yield
    harness.MARKED.reset(token)
