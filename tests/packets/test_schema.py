"""The committed JSON Schema is generated from the models and never drifts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from telic_packets.schema import SCHEMA_PATH, generate_schema, main, render_schema


def test_the_committed_schema_matches_the_models() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "run: python -m telic_packets.schema --write"
    )


def test_the_schema_defines_every_wire_object() -> None:
    defs = generate_schema()["$defs"]
    for name in (
        "Packet",
        "Handoff",
        "RoutingReason",
        "CastBudget",
        "CastType",
        "ConsumptionRecord",
        "ReportArtifact",
    ):
        assert defs[name]["additionalProperties"] is False, name
    assert defs["Packet"]["properties"]["schema"]["const"] == "telic.evidence-packet/1"
    assert "schema" in defs["Packet"]["required"]
    handoff = set(defs["Handoff"]["properties"])
    assert handoff == {"castId", "brief", "pointers", "packetRefs"}


def test_the_schema_file_is_valid_json_with_descriptions() -> None:
    document = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    packet = document["$defs"]["Packet"]["properties"]
    assert all("description" in field for field in packet.values())


def test_check_passes_and_reports_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["--check"]) == 0
    monkeypatch.setattr("telic_packets.schema._generate.render_schema", lambda: "{}\n")
    assert main(["--check"]) == 1


def test_write_then_check_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("telic_packets.schema._generate.SCHEMA_PATH", tmp_path / "schema.json")
    assert main(["--check"]) == 1
    assert main(["--write"]) == 0
    assert main(["--check"]) == 0


def test_the_module_runs_as_a_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "telic_packets.schema", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
