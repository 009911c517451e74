"""What the benchmark scripts share: timing summaries, machine notes and the README tables.

The scripts drive runs with the test suite's body builders (``tests/telic/controller/builders.py``
and ``tests/telic/roles/kit.py``), so the bodies measured are the ones the tests keep valid.
"""

from __future__ import annotations

import datetime
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = Path(__file__).with_name("README.md")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the builders live in tests/, a namespace package


def summary(seconds: Sequence[float]) -> dict[str, Any]:
    """Median, p95, min and max of ``seconds``, in milliseconds."""
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered) * 1e3, 3),
        "p95_ms": round(p95 * 1e3, 3),
        "min_ms": round(ordered[0] * 1e3, 3),
        "max_ms": round(ordered[-1] * 1e3, 3),
    }


def commit() -> str:
    """The short HEAD commit, with ``+`` when the working tree holds uncommitted changes."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + ("+" if dirty else "")


def machine() -> str:
    """One line of machine notes."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} cores, {platform.machine()}, CPython {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, load {load:.1f}"
    )


def today() -> str:
    """The date of a results row."""
    return datetime.date.today().isoformat()


def append_rows(heading: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Append ``rows`` to the table under ``## heading`` in the README (creating both)."""
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    title = f"## {heading}"
    rendered = ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    header = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    if title not in lines:
        lines += ["", title, "", *header, *rendered]
    else:
        start = lines.index(title)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), None)
        section = range(start, len(lines) if end is None else end)
        table = [i for i in section if lines[i].startswith("|")]
        at = table[-1] + 1 if table else section.stop
        lines[at:at] = rendered if table else ["", *header, *rendered]
    README.write_text("\n".join(lines) + "\n", encoding="utf-8")


def row(measure: str, stats: dict[str, Any]) -> list[object]:
    """A results row: date, commit, machine, what, median, p95, min/max (ms)."""
    return [
        today(),
        commit(),
        machine(),
        measure,
        f"{stats['median_ms']:.3f} ms",
        f"{stats['p95_ms']:.3f} ms",
        f"{stats['min_ms']:.3f} / {stats['max_ms']:.3f} ms",
    ]


COLUMNS = ("date", "commit", "machine", "measure", "median", "p95", "min / max")
