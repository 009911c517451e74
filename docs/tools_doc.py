"""Write the tool table of ``docs/tools.md`` from the tools' declarations.

Each tool is declared once, on its handler in ``telic/server/_tools.py``: its name, whether it
writes, and the one line the table shows (``summary``) come from there, in listing order. Run
from the repository root::

    python docs/tools_doc.py --write    # rewrite the table in docs/tools.md
    python docs/tools_doc.py --check    # exit 1 when the committed table is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from telic.server._tools import TOOLS

TARGET = Path(__file__).resolve().parent / "tools.md"
HEADER = "| Tool | Kind | What it does |\n|---|---|---|\n"
_TABLE = re.compile(re.escape(HEADER) + r"(?:\|.*\|\n)*")


def table() -> str:
    """The table: a header and one row per declared tool."""
    rows = (
        f"| `{t.name}` | {'read-only' if t.read_only else 'writes'} | {t.summary} |\n"
        for t in TOOLS
    )
    return HEADER + "".join(rows)


def written(text: str) -> str:
    """``text`` (the document) with its tool table replaced by ``table()``."""
    if _TABLE.search(text) is None:
        raise SystemExit(f"{TARGET.name} has no tool table (a line {HEADER.splitlines()[0]!r})")
    return _TABLE.sub(lambda _: table(), text, count=1)


def main(argv: list[str]) -> int:
    text = TARGET.read_text(encoding="utf-8")
    if argv == ["--write"]:
        TARGET.write_text(written(text), encoding="utf-8")
        return 0
    if argv == ["--check"]:
        if written(text) != text:
            print(f"{TARGET} is stale: run python docs/tools_doc.py --write", file=sys.stderr)
            return 1
        return 0
    print("usage: python docs/tools_doc.py --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
