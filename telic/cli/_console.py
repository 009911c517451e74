"""Human output: aligned tables and JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def print_json(value: Any) -> None:
    """Write ``value`` to stdout as indented JSON and a newline."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:59] + "…"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    """Return ``rows`` as an aligned plain-text table; ``columns`` are (key, heading) pairs."""
    cells = [[_cell(row.get(key)) for key, _ in columns] for row in rows]
    headings = [heading for _, heading in columns]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headings)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headings, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    )
    return "\n".join(lines)
