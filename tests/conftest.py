"""Shared test configuration: which async tests run on trio as well as on asyncio.

Telic itself always runs on asyncio (``anyio.run`` with its default backend); trio matters where
a library is written against anyio and promises both: the actor runtime, the packets, the
controller's core, the ledger's async backends, casting and the run actor (with their
cancellation). Async tests under those directories run once per backend. Everything else (the
rules, the MCP server and its transports, grounding, hosts, reports, the CLI) drives the same
code paths whatever the backend, so it runs on asyncio only. A test may still parametrize
``anyio_backend`` itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

TESTS: Final = Path(__file__).parent
BOTH_BACKENDS: Final = tuple(
    TESTS / part
    for part in (
        "actors",
        "packets",
        "telic/casting",
        "telic/controller",
        "telic/ledger",
        "telic/roles",
    )
)
"""Directories whose async tests run on asyncio and trio."""
ASYNCIO_ONLY: Final = (TESTS / "telic" / "controller" / "rules",)
"""Subdirectories of those that run on asyncio only: the rules judge data, not scheduling."""


def _on_both(path: Path) -> bool:
    return any(path.is_relative_to(d) for d in BOTH_BACKENDS) and not any(
        path.is_relative_to(d) for d in ASYNCIO_ONLY
    )


def _parametrized(metafunc: pytest.Metafunc, name: str) -> bool:
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0] if marker.args else marker.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run the async tests of ``BOTH_BACKENDS`` on trio too, unless they choose themselves."""
    if "anyio_backend" not in metafunc.fixturenames or _parametrized(metafunc, "anyio_backend"):
        return
    if _on_both(Path(str(metafunc.definition.path))):
        metafunc.parametrize("anyio_backend", ["asyncio", "trio"], indirect=True)


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """asyncio, or the backend ``pytest_generate_tests`` chose for this test."""
    return str(getattr(request, "param", "asyncio"))
