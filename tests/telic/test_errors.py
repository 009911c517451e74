"""One error tree: everything Telic raises on purpose is told apart by type and carries a code."""

from __future__ import annotations

import pytest

import telic_packets
from telic import SchemaViolation, TelicError
from telic.demo import TelicCallError
from telic.protocol import CanonicalJsonError, canonical_json
from telic.server._envelope import error_envelope
from telic_packets import CastRefusal


def test_a_canonical_json_failure_is_a_schema_violation_of_telics_tree() -> None:
    with pytest.raises(SchemaViolation) as caught:
        canonical_json({"n": float("nan")})
    assert isinstance(caught.value, CanonicalJsonError)
    assert caught.value.code == "schema_violation"


def test_one_except_of_the_packet_error_catches_telics_canonical_json_failure() -> None:
    with pytest.raises(telic_packets.CanonicalJsonError):
        canonical_json({1: "a key that is not a string"})
    with pytest.raises(ValueError, match="not a string"):
        canonical_json({1: "still a ValueError for older callers"})


def test_a_tool_call_error_is_a_telic_error_with_the_envelopes_code() -> None:
    error = TelicCallError("telic_submit", {"ok": False, "code": "stale_token", "error": "old"})
    assert isinstance(error, TelicError)
    assert error.code == "stale_token"
    assert error.message == "telic_submit: [stale_token] old"


def test_a_tool_call_error_without_a_code_says_tool_error() -> None:
    assert TelicCallError("telic_cast", {"error": "no envelope"}).code == "tool_error"


def test_a_packet_canonical_json_failure_without_a_code_is_internal() -> None:
    envelope = error_envelope(telic_packets.CanonicalJsonError("a float"), "telic_return_packet")
    assert envelope["code"] == "internal_error"


def test_a_packet_refusal_becomes_an_envelope_with_its_contract_code() -> None:
    envelope = error_envelope(CastRefusal("cast_type_disabled", "enable it first"), "telic_cast")
    assert envelope["code"] == "cast_type_disabled"
    assert envelope["error"] == "cast_type_disabled: enable it first"


def test_an_error_with_a_code_from_elsewhere_is_internal_not_relayed() -> None:
    class Foreign(Exception):
        code = "cast_type_disabled"

    Foreign.__module__ = "telic_packets.lookalike"
    envelope = error_envelope(Foreign("from a module named like the packets"), "telic_cast")
    assert envelope["code"] == "internal_error"
