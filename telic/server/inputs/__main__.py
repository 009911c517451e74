"""Write or check the committed input schema file."""

from __future__ import annotations

import argparse
import sys

from telic.server.inputs import expected_text, schema_file


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--write`` regenerates the file, ``--check`` reports drift."""
    parser = argparse.ArgumentParser(prog="python -m telic.server.inputs")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the file")
    action.add_argument("--check", action="store_true", help="exit 1 if the file has drifted")
    args = parser.parse_args(argv)
    path = schema_file()
    expected = expected_text()
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if current == expected:
        return 0
    if args.write:
        path.write_text(expected, encoding="utf-8")
        print(f"wrote: {path.name}")
        return 0
    print(f"drifted: {path.name}; run `python -m telic.server.inputs --write`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
