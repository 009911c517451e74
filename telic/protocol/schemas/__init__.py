"""The committed JSON Schema files, one per artifact type, generated from the models.

``python -m telic.protocol.schemas --write`` regenerates them; ``--check`` exits 1 when a file
has drifted from the models (the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import typing
from importlib import resources

from telic.protocol import _registry

if typing.TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["expected_files", "schema_dir", "sync"]


def schema_dir() -> pathlib.Path:
    """Return the directory holding the committed schema files."""
    return pathlib.Path(str(resources.files(__name__)))


def expected_files() -> dict[str, str]:
    """Return file name → the exact text each committed schema file should hold."""
    return {
        f"{artifact_type}.schema.json": json.dumps(
            _registry.json_schema(artifact_type), indent=2, sort_keys=True, ensure_ascii=False
        )
        + "\n"
        for artifact_type in sorted(_registry.ARTIFACT_MODELS)
    }


def sync(
    prog: str,
    expected: dict[pathlib.Path, str],
    argv: list[str] | None,
    *,
    stale: Iterable[pathlib.Path] = (),
    fix: str,
) -> int:
    """Command line over generated files: ``--write`` regenerates, ``--check`` exits 1 on drift.

    ``expected`` maps each file to its exact text; ``stale`` files should not exist.
    """
    parser = argparse.ArgumentParser(prog=prog)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate every file")
    action.add_argument("--check", action="store_true", help="exit 1 if any file has drifted")
    args = parser.parse_args(argv)
    drifted = [
        path
        for path, text in expected.items()
        if (path.read_text(encoding="utf-8") if path.exists() else None) != text
    ]
    drifted.extend(stale)
    for path in drifted:
        if args.write and path in expected:
            path.write_text(expected[path], encoding="utf-8")
        elif args.write:
            path.unlink()
        print(f"{'wrote' if args.write else 'drifted'}: {path.name}")
    if args.check and drifted:
        print(f"generated files are stale; run `{fix}`", file=sys.stderr)
        return 1
    return 0
