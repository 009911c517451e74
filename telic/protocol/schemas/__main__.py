"""Write or check the committed JSON Schema files."""

from __future__ import annotations

import argparse
import sys

from telic.protocol.schemas import expected_files, schema_dir


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--write`` regenerates the files, ``--check`` reports drift."""
    parser = argparse.ArgumentParser(prog="python -m telic.protocol.schemas")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate every schema file")
    action.add_argument("--check", action="store_true", help="exit 1 if any file has drifted")
    args = parser.parse_args(argv)
    directory = schema_dir()
    drifted: list[str] = []
    expected = expected_files()
    for name, text in expected.items():
        path = directory / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            drifted.append(name)
            if args.write:
                path.write_text(text, encoding="utf-8")
    stale = sorted(p.name for p in directory.glob("*.schema.json") if p.name not in expected)
    for name in stale:
        drifted.append(name)
        if args.write:
            (directory / name).unlink()
    verb = "wrote" if args.write else "drifted"
    for name in drifted:
        print(f"{verb}: {name}")
    if args.check and drifted:
        print("schema files are stale; run `make schemas`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
