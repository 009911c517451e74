"""The conformance table of ``telic.evidence-packet/1`` and its runner.

``table-1.json`` (package data) holds versioned rows of ``{id, dimension, level, source,
behavior, input, expected}``; any implementation proves parity by producing the same ``valid``,
``errorCode`` and ``canonicalSha256`` for every row. ``python -m telic_packets.conformance``
evaluates every row against this implementation and ends with ``N passed, M failed``.
"""

from __future__ import annotations

from telic_packets.conformance._runner import (
    TABLE_NAME as TABLE_NAME,
    RowResult as RowResult,
    check_row as check_row,
    evaluate as evaluate,
    load_table as load_table,
    main as main,
    run_table as run_table,
)

__all__ = ["TABLE_NAME", "RowResult", "check_row", "evaluate", "load_table", "main", "run_table"]
