"""Golden files for the report renderers: compare, or rewrite with ``TELIC_UPDATE_SNAPSHOTS=1``."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE_ENV = "TELIC_UPDATE_SNAPSHOTS"


def assert_snapshot(name: str, text: str) -> None:
    """Assert ``text`` equals the committed snapshot ``name`` (or rewrite it when asked)."""
    path = SNAPSHOTS / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"missing snapshot {name}; run with {UPDATE_ENV}=1 to create it"
    expected = path.read_bytes().decode("utf-8")
    assert text == expected, f"{name} differs from its snapshot; {UPDATE_ENV}=1 rewrites it"
