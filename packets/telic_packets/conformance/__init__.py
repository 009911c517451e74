"""The conformance table of ``telic.evidence-packet/1`` and its runner.

``table-1.json`` (package data) holds versioned rows of ``{id, dimension, level, source,
behavior, input, expected}``; any implementation proves parity by producing the same ``valid``,
``errorCode`` and ``canonicalSha256`` for every row. ``python -m telic_packets.conformance``
evaluates every row against this implementation and ends with ``N passed, M failed``.
"""

from __future__ import annotations

from telic_packets.conformance._runner import TABLE_NAME as TABLE_NAME
from telic_packets.conformance._runner import RowResult as RowResult
from telic_packets.conformance._runner import check_row as check_row
from telic_packets.conformance._runner import evaluate as evaluate
from telic_packets.conformance._runner import load_table as load_table
from telic_packets.conformance._runner import main as main
from telic_packets.conformance._runner import run_table as run_table

__all__ = ["TABLE_NAME", "RowResult", "check_row", "evaluate", "load_table", "main", "run_table"]
