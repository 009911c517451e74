"""Evaluate the conformance table against this implementation.

Each row's ``input`` names an operation (``op``) and carries everything it needs as plain JSON,
so a runner in another language can evaluate the same rows:

- ``hash {value}`` → ``canonicalSha256``, or invalid when the value cannot be hashed;
- ``parse_child_return {raw}`` → valid, or the refusal ``errorCode``;
- ``seal {cast, castOpen, packetId, now, outcome, stopReason, counters, harness, archive,
  returned}`` → ``verdict`` and ``canonicalSha256`` (the packet's ``packetSha256``), or the
  refusal ``errorCode``; quotes verify by byte-exact substring of ``archive[source]``;
- ``check_cast {registry, context, castType, routing, budget}`` → valid, or the refusal code;
- ``validate {model, value}`` → valid; ``errorCode`` is ``unknown_field`` when a key is unknown;
- ``verify_hash {packet}`` → valid when ``packetSha256`` matches the rest of the packet;
- ``cite {packetId, packetSha256, packetUri, text, refs}`` → ``citeKind``;
- ``digest {items}`` → ``digest``, ``digestLine`` (the first line), ``digestLastLine``,
  ``digestLines`` and ``digestChars``.

A row passes when every key of its ``expected`` equals the evaluated result.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from telic_packets._base import parse_timestamp
from telic_packets._canonical import canonical_sha256
from telic_packets._cast import (
    CastBudget,
    CastContext,
    CastType,
    CastTypeRegistry,
    Handoff,
    RoutingReason,
    check_cast,
)
from telic_packets._consumption import ConsumptionRecord, cite_kind
from telic_packets._digest import DigestItem, render_digest
from telic_packets._errors import CanonicalJsonError, PacketRefusal
from telic_packets._packet import Cast, Counters, EvidenceLine, Harness, Packet
from telic_packets._report import ReportArtifact
from telic_packets._returns import ChildReturn, parse_child_return
from telic_packets._seal import archive_verifier, seal_packet, verify_packet_hash

TABLE_NAME: Final = "table-1.json"
"""File name of the conformance table shipped as package data."""

Result = dict[str, Any]

_MODELS: Final[Mapping[str, type[BaseModel]]] = {
    model.__name__: model
    for model in (
        Packet,
        Handoff,
        RoutingReason,
        CastBudget,
        CastType,
        CastTypeRegistry,
        CastContext,
        ConsumptionRecord,
        ReportArtifact,
        EvidenceLine,
        Counters,
        Cast,
        ChildReturn,
        DigestItem,
    )
}


@dataclass(frozen=True, slots=True)
class RowResult:
    """The outcome of evaluating one row."""

    id: str
    """The row id."""

    passed: bool
    """Whether every expected key matched."""

    expected: Mapping[str, Any]
    """The row's ``expected`` object."""

    actual: Mapping[str, Any]
    """What this implementation produced."""


def load_table() -> dict[str, Any]:
    """Return the conformance table shipped with the package."""
    text = files("telic_packets.conformance").joinpath(TABLE_NAME).read_text(encoding="utf-8")
    table: dict[str, Any] = json.loads(text)
    return table


def _refused(exc: PacketRefusal) -> Result:
    return {"valid": False, "errorCode": exc.code}


def _hash(spec: Mapping[str, Any]) -> Result:
    try:
        return {"valid": True, "canonicalSha256": canonical_sha256(spec["value"])}
    except CanonicalJsonError:
        return {"valid": False}


def _parse(spec: Mapping[str, Any]) -> Result:
    try:
        parse_child_return(spec["raw"])
    except PacketRefusal as exc:
        return _refused(exc)
    return {"valid": True}


def _seal(spec: Mapping[str, Any]) -> Result:
    try:
        packet = seal_packet(
            spec["returned"],
            cast=Cast.from_wire(spec["cast"]),
            cast_open=spec["castOpen"],
            packet_id=spec["packetId"],
            outcome=spec["outcome"],
            stop_reason=spec["stopReason"],
            counters=Counters.from_wire(spec["counters"]),
            verifier=archive_verifier(spec["archive"]),
            now=parse_timestamp(spec["now"]),
            harness=Harness.from_wire(spec["harness"]),
        )
    except PacketRefusal as exc:
        return _refused(exc)
    return {"valid": True, "verdict": packet.verdict, "canonicalSha256": packet.packet_sha256}


def _check_cast(spec: Mapping[str, Any]) -> Result:
    try:
        check_cast(
            cast_type=spec["castType"],
            routing=spec["routing"],
            budget=spec["budget"],
            registry=CastTypeRegistry.from_wire(spec["registry"]),
            context=CastContext.from_wire(spec["context"]),
        )
    except PacketRefusal as exc:
        return _refused(exc)
    return {"valid": True}


def _validate(spec: Mapping[str, Any]) -> Result:
    try:
        _MODELS[spec["model"]].model_validate(spec["value"], by_alias=True, by_name=False)
    except ValidationError as exc:
        if any(error["type"] == "extra_forbidden" for error in exc.errors()):
            return {"valid": False, "errorCode": "unknown_field"}
        return {"valid": False}
    return {"valid": True}


def _verify_hash(spec: Mapping[str, Any]) -> Result:
    return {"valid": verify_packet_hash(spec["packet"])}


def _cite(spec: Mapping[str, Any]) -> Result:
    kind = cite_kind(
        packet_id=spec["packetId"],
        packet_sha256=spec["packetSha256"],
        packet_uri=spec["packetUri"],
        text=spec["text"],
        refs=spec["refs"],
    )
    return {"valid": True, "citeKind": kind}


def _digest(spec: Mapping[str, Any]) -> Result:
    text = render_digest(DigestItem.from_wire(item) for item in spec["items"])
    lines = text.split("\n") if text else []
    return {
        "valid": True,
        "digest": text,
        "digestLine": lines[0] if lines else "",
        "digestLastLine": lines[-1] if lines else "",
        "digestLines": len(lines),
        "digestChars": len(text),
    }


_OPS: Final[Mapping[str, Callable[[Mapping[str, Any]], Result]]] = {
    "hash": _hash,
    "parse_child_return": _parse,
    "seal": _seal,
    "check_cast": _check_cast,
    "validate": _validate,
    "verify_hash": _verify_hash,
    "cite": _cite,
    "digest": _digest,
}


def evaluate(row: Mapping[str, Any]) -> dict[str, Any]:
    """Evaluate one row's ``input`` and return every result key its operation produces."""
    spec: Mapping[str, Any] = row["input"]
    return _OPS[spec["op"]](spec)


def check_row(row: Mapping[str, Any]) -> RowResult:
    """Evaluate one row and compare each key of its ``expected`` object."""
    expected: Mapping[str, Any] = row["expected"]
    actual = evaluate(row)
    passed = all(actual.get(key, None) == value for key, value in expected.items())
    return RowResult(id=row["id"], passed=passed, expected=expected, actual=actual)


def run_table(table: Mapping[str, Any] | None = None) -> list[RowResult]:
    """Evaluate every row of ``table`` (the shipped table by default)."""
    rows: Sequence[Mapping[str, Any]] = (table or load_table())["rows"]
    return [check_row(row) for row in rows]


def _mismatch(result: RowResult) -> str:
    diffs = {
        key: result.actual.get(key)
        for key, value in result.expected.items()
        if result.actual.get(key) != value
    }
    return "expected " + json.dumps(dict(result.expected)) + " got " + json.dumps(diffs)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m telic_packets.conformance [--json]``; exit status 1 when a row fails."""
    parser = argparse.ArgumentParser(
        prog="python -m telic_packets.conformance",
        description="Evaluate the evidence-packet conformance table against this implementation.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")
    args = parser.parse_args(argv)
    table = load_table()
    results = run_table(table)
    passed = sum(result.passed for result in results)
    failed = len(results) - passed
    summary = f"{passed} passed, {failed} failed"
    if args.json:
        document = {
            "contract": table["contract"],
            "tableVersion": table["tableVersion"],
            "results": [
                {"id": result.id, "passed": result.passed, "actual": result.actual}
                for result in results
            ],
            "passed": passed,
            "failed": failed,
            "summary": summary,
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        rows = {row["id"]: row for row in table["rows"]}
        for result in results:
            if result.passed:
                print(f"PASS {result.id} {rows[result.id]['behavior']}")
            else:
                print(f"FAIL {result.id} {_mismatch(result)}")
        print(summary)
    return 1 if failed else 0
