"""Write or check the committed input schema file."""

from __future__ import annotations

from telic.protocol.schemas import sync
from telic.server.inputs import expected_text, schema_file


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--write`` regenerates the file, ``--check`` reports drift."""
    prog = "python -m telic.server.inputs"
    return sync(prog, {schema_file(): expected_text()}, argv, fix=f"{prog} --write")


if __name__ == "__main__":
    raise SystemExit(main())
