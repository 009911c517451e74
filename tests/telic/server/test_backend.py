"""The servers' backend: opened beside the transport, with what the first results need built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from telic.server._schemas import SCHEMA_TYPES

PROBE = """\
import sys
from pathlib import Path

import anyio

from telic.server import _schemas
from telic.server._backend import OpeningBackend
from telic.server._config import ServerConfig


async def main() -> None:
    config = ServerConfig(
        repository_root=Path(sys.argv[1]),
        state_dir=Path(sys.argv[2]),
        database_url="memory://",
        schemas=sys.argv[3],
    )
    opening = OpeningBackend(config)
    async with anyio.create_task_group() as group:
        group.start_soon(opening.run)
        await opening.service()
        opening.close()
    built = (_schemas._encoded, _schemas.notation_fields, _schemas.emitted_schema)
    print(*(cache.cache_info().currsize for cache in built))


anyio.run(main)
"""
"""Opens and closes a backend in a fresh process, with no tool call; prints how many entries
the notation texts', the notation fields' and the JSON Schemas' caches then hold."""


def _built_by_opening(tmp_path: Path, mode: str) -> list[int]:
    (tmp_path / "repo").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "repo"), str(tmp_path / "state"), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return [int(count) for count in done.stdout.split()]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # every type's notation but ContextManifest's (always a reference), and the fields table
        ("once", [len(SCHEMA_TYPES) - 1, 1, 0]),
        ("full", [0, 0, len(SCHEMA_TYPES)]),
    ],
)
def test_opening_the_backend_builds_every_schema_its_mode_sends(
    tmp_path: Path, mode: str, expected: list[int]
) -> None:
    assert _built_by_opening(tmp_path, mode) == expected
