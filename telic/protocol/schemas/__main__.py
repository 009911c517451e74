"""Write or check the committed JSON Schema files."""

from __future__ import annotations

from telic.protocol.schemas import expected_files, schema_dir, sync


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--write`` regenerates the files, ``--check`` reports drift."""
    directory = schema_dir()
    expected = {directory / name: text for name, text in expected_files().items()}
    stale = sorted(path for path in directory.glob("*.schema.json") if path not in expected)
    return sync("python -m telic.protocol.schemas", expected, argv, stale=stale, fix="make schemas")


if __name__ == "__main__":
    raise SystemExit(main())
