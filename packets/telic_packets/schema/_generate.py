"""Generate, write and check the committed JSON Schema of the packet contract."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from telic_packets._cast import CastBudget, CastType, Handoff, RoutingReason
from telic_packets._consumption import ConsumptionRecord
from telic_packets._packet import Packet
from telic_packets._report import ReportArtifact

SCHEMA_PATH: Final = Path(__file__).with_name("evidence-packet-1.schema.json")
"""Where the committed schema lives (package data of ``telic-packets``)."""

_MODELS: Final[tuple[type[BaseModel], ...]] = (
    Packet,
    Handoff,
    RoutingReason,
    CastBudget,
    CastType,
    ConsumptionRecord,
    ReportArtifact,
)


def generate_schema() -> dict[str, Any]:
    """Return the ``$defs`` JSON Schema document of the contract's wire objects."""
    _, document = models_json_schema(
        [(model, "validation") for model in _MODELS], ref_template="#/$defs/{model}"
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:telic:evidence-packet:1",
        "title": "telic.evidence-packet/1",
        "description": (
            "Wire objects of the evidence-packet contract. Cross-field rules (partial packets, "
            "verdict derivation, report status fields, the 8192-byte bound) are enforced by the "
            "implementations and pinned by the conformance table, not by this schema."
        ),
        "$defs": document["$defs"],
    }


def render_schema() -> str:
    """Return the schema document as the exact text committed to ``SCHEMA_PATH``."""
    return json.dumps(generate_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m telic_packets.schema --write|--check``; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m telic_packets.schema", description="The packet contract's JSON Schema."
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the committed file")
    action.add_argument("--check", action="store_true", help="exit 1 when the file has drifted")
    args = parser.parse_args(argv)
    text = render_schema()
    if args.write:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH.name}")
        return 0
    current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
    if current != text:
        print(
            f"{SCHEMA_PATH.name} is out of date; run python -m telic_packets.schema --write",
            file=sys.stderr,
        )
        return 1
    print(f"{SCHEMA_PATH.name} is up to date")
    return 0
