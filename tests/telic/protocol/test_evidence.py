"""Evidence: the golden body, round trips, schema negatives and canonical content decoding."""

from __future__ import annotations

import base64
from typing import Any, get_args

import pytest

from telic.protocol._canonical import canonical_sha256
from telic.protocol._evidence import (
    MAX_EVIDENCE_CONTENT_BYTES,
    Evidence,
    EvidenceKind,
    decode_evidence_content,
)
from tests.telic.protocol.bodies import DELETE, changed, first_error_type, load_golden


def golden() -> dict[str, Any]:
    return load_golden("Evidence")


def rejection(body: dict[str, Any]) -> str:
    return first_error_type(Evidence, body)


def base64_evidence(content: str) -> Evidence:
    return Evidence.from_wire(changed(golden(), {"encoding": "base64", "content": content}))


# --------------------------------------------------------------------------------- golden


def test_golden_evidence_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    evidence = Evidence.from_wire(body)
    assert evidence.to_wire() == body
    assert Evidence.from_wire(evidence.to_wire()) == evidence
    assert canonical_sha256(evidence.to_wire()) == canonical_sha256(body)


def test_evidence_dumps_camel_case_names() -> None:
    wire = Evidence.from_wire(golden()).to_wire()
    assert {"capturedAt", "contentType", "sourceRefs", "rationaleSummary"} <= wire.keys()


@pytest.mark.parametrize("kind", get_args(EvidenceKind))
def test_every_evidence_kind_is_accepted(kind: str) -> None:
    assert Evidence.from_wire(changed(golden(), {"kind": kind})).kind == kind


# --------------------------------------------------------------------------------- shape


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"hiddenChainOfThought": "…"}, "extra_forbidden"),
        ({"sha256": "sha256:" + "0" * 64}, "extra_forbidden"),
        ({"schemaVersion": "2.0"}, "literal_error"),
        ({"kind": "screenshot"}, "literal_error"),
        ({"encoding": "hex"}, "literal_error"),
        ({"encoding": "utf-8"}, "literal_error"),
        ({"capturedAt": "2026-07-15T10:04:12"}, "timestamp_format"),
        ({"capturedAt": "2026-02-30T10:04:12Z"}, "timestamp_value"),
        ({"contentType": ""}, "string_too_short"),
        ({"contentType": "t" * 256}, "string_too_long"),
        ({"content": ""}, "string_too_short"),
        ({"content": "x" * 32_769}, "string_too_long"),
        ({"content": "日" * 10_923}, "string_too_many_bytes"),
        ({"summary": "é" * 4_096}, "string_too_many_bytes"),
        ({"summary": "x" * 4_097}, "string_too_long"),
        ({"redactions": [""]}, "string_too_short"),
        ({"sourceRefs": ["https://example.com/log"]}, "string_pattern_mismatch"),
        ({"sourceRefs": ["repo://a"] * 257}, "too_long"),
        ({"rationaleSummary": DELETE}, "missing"),
    ],
)
def test_malformed_evidence_is_rejected(changes: dict[str, object], code: str) -> None:
    assert rejection(changed(golden(), changes)) == code


def test_a_summary_of_4096_multibyte_chars_is_over_4096_bytes_and_rejected() -> None:
    summary = "€" * 4_096
    assert len(summary) == 4_096 < len(summary.encode("utf-8"))
    assert rejection(changed(golden(), {"summary": summary})) == "string_too_many_bytes"


def test_content_of_32768_bytes_is_accepted() -> None:
    evidence = Evidence.from_wire(changed(golden(), {"content": "x" * 32_768}))
    assert len(decode_evidence_content(evidence)) == 32_768


# --------------------------------------------------------------------------------- decoding


def test_utf8_content_decodes_to_its_utf8_bytes() -> None:
    evidence = Evidence.from_wire(golden())
    assert decode_evidence_content(evidence) == golden()["content"].encode("utf-8")


@pytest.mark.parametrize("raw", [b"\x00", b"\xff\xfe", b"PNG\r\n\x1a\n", bytes(range(256))])
def test_canonical_base64_decodes_to_the_original_bytes(raw: bytes) -> None:
    evidence = base64_evidence(base64.b64encode(raw).decode("ascii"))
    assert decode_evidence_content(evidence) == raw


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("QQ", "not valid base64"),  # missing padding
        ("QQ=", "not valid base64"),
        ("QUJD\n", "not valid base64"),  # white space
        ("QU JD", "not valid base64"),
        ("QUJD!", "not valid base64"),
        ("QUJD-_==", "not valid base64"),  # the URL-safe alphabet
        ("é", "not valid base64"),
        ("QR==", "not canonical base64"),  # stray bits in the last character
        ("QUI=" + "QUI=", "not valid base64"),  # padding in the middle
    ],
)
def test_non_canonical_base64_is_refused_with_a_clear_message(content: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as exc:
        decode_evidence_content(base64_evidence(content))
    assert content not in str(exc.value)


def test_content_over_two_mebibytes_is_refused() -> None:
    # The schema's 32,768-byte cap keeps real bodies far below the limit; an unvalidated
    # instance shows that the helper enforces the limit itself.
    oversized = Evidence.model_construct(
        **{
            **Evidence.from_wire(golden()).__dict__,
            "content": "x" * (MAX_EVIDENCE_CONTENT_BYTES + 1),
        }
    )
    with pytest.raises(ValueError, match="limit is 2097152"):
        decode_evidence_content(oversized)


def test_base64_content_decoding_over_two_mebibytes_is_refused() -> None:
    raw = b"\x00" * (MAX_EVIDENCE_CONTENT_BYTES + 3)
    oversized = Evidence.model_construct(
        **{
            **Evidence.from_wire(golden()).__dict__,
            "encoding": "base64",
            "content": base64.b64encode(raw).decode("ascii"),
        }
    )
    with pytest.raises(ValueError, match="2097155 bytes"):
        decode_evidence_content(oversized)


def test_content_with_a_lone_surrogate_is_rejected_by_the_schema() -> None:
    assert rejection(changed(golden(), {"content": "log \ud800 tail"})) == "string_unicode"


def test_decoding_refuses_a_lone_surrogate_in_an_unvalidated_instance() -> None:
    evidence = Evidence.model_construct(
        **{**Evidence.from_wire(golden()).__dict__, "content": "log \ud800 tail"}
    )
    with pytest.raises(ValueError, match="lone surrogate"):
        decode_evidence_content(evidence)
