"""The conformance table: every row passes, every row is cited by a test, and the runner agrees.

Tests cite rows with ``@pytest.mark.covers("row-id", ...)`` (registered in ``conftest.py``), as a
decorator or as ``marks=`` of a parameter. The coverage test reads those citations from the
source of every test module here, so it holds whichever tests are selected.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from telic_packets import CAST_REFUSAL_CODES, RETURN_REFUSAL_CODES
from telic_packets.conformance import check_row, load_table, main, run_table

TABLE = load_table()
ROWS: list[dict[str, Any]] = TABLE["rows"]
ROW_IDS = [row["id"] for row in ROWS]
HERE = Path(__file__).parent
DIMENSIONS = {
    "schema",
    "bounds",
    "refusal",
    "partial",
    "verification",
    "consumption",
    "handoff",
    "report",
    "hashing",
    "opacity",
}


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_row(row: dict[str, Any]) -> None:
    result = check_row(row)
    assert result.passed, f"expected {row['expected']}, got {result.actual}"


def cited_row_ids() -> dict[str, set[str]]:
    """Map each row id cited by a ``covers`` mark to the test modules citing it."""
    cited: dict[str, set[str]] = {}
    for module in sorted(HERE.glob("test_*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "covers"
            ):
                for argument in node.args:
                    assert isinstance(argument, ast.Constant), f"{module.name}: cite rows literally"
                    cited.setdefault(str(argument.value), set()).add(module.name)
    return cited


def test_every_row_is_cited_by_a_test_and_every_citation_names_a_row() -> None:
    cited = cited_row_ids()
    uncited = sorted(set(ROW_IDS) - set(cited))
    unknown = sorted(set(cited) - set(ROW_IDS))
    assert not uncited, f"rows without a test: {uncited}"
    assert not unknown, f"tests cite unknown rows: {unknown}"


def test_the_table_is_versioned_and_well_formed() -> None:
    assert TABLE["contract"] == "telic.evidence-packet/1"
    assert TABLE["tableVersion"] == 1
    assert len(ROWS) >= 60
    assert len(set(ROW_IDS)) == len(ROW_IDS), "row ids repeat"
    for row in ROWS:
        assert set(row) == {"id", "dimension", "level", "source", "behavior", "input", "expected"}
        assert row["dimension"] in DIMENSIONS
        assert row["level"] in {"MUST", "SHOULD"}
        assert row["source"].startswith("evidence-packets-1 §")
        assert isinstance(row["expected"]["valid"], bool)
        assert row["input"]["op"] in {
            "hash",
            "parse_child_return",
            "seal",
            "check_cast",
            "validate",
            "verify_hash",
            "cite",
            "digest",
        }


def test_every_dimension_has_rows() -> None:
    assert set(Counter(row["dimension"] for row in ROWS)) == DIMENSIONS


def test_every_refusal_code_has_a_refusal_row() -> None:
    codes = {row["expected"].get("errorCode") for row in ROWS if row["dimension"] == "refusal"}
    assert set(CAST_REFUSAL_CODES) | set(RETURN_REFUSAL_CODES) <= codes


def test_every_bound_row_comes_in_a_pair_at_and_past_the_limit() -> None:
    bounds = [row["id"] for row in ROWS if row["dimension"] == "bounds"]
    stems = Counter(row_id.rsplit(".", 1)[0] for row_id in bounds)
    assert all(count % 2 == 0 for count in stems.values()), stems
    assert len(stems) >= 17


def test_every_stop_reason_has_a_partial_row() -> None:
    ids = {row["id"] for row in ROWS if row["dimension"] == "partial"}
    assert {"partial.turn-capped", "partial.token-capped", "partial.wall-capped"} <= ids


def test_a_table_row_that_does_not_hold_fails() -> None:
    row = dict(ROWS[0])
    row["expected"] = {"valid": not ROWS[0]["expected"]["valid"]}
    assert not check_row(row).passed
    results = run_table({"rows": [row]})
    assert [result.passed for result in results] == [False]


def test_the_runner_prints_a_line_per_row_and_the_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"{len(ROWS)} passed, 0 failed"
    assert all(line.startswith("PASS ") for line in lines[:-1])
    assert len(lines) == len(ROWS) + 1


def test_the_runner_speaks_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["failed"] == 0
    assert document["summary"] == f"{len(ROWS)} passed, 0 failed"


def test_the_runner_module_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "telic_packets.conformance"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == f"{len(ROWS)} passed, 0 failed"
