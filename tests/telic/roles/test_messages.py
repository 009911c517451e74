"""Message sizes: what a mailbox measures is the canonical JSON the message would be."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from telic.roles import MAX_MESSAGE_BYTES, message_size
from telic.roles._messages import CastChild, Progress, Submit, Validate


def _wire(message: object) -> bytes:
    fields = asdict(message)  # type: ignore[call-overload]
    body = {"type": type(message).__name__, **fields}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_message_is_measured_as_its_canonical_json_with_its_type() -> None:
    messages = [
        Submit("run-1", "action-1", 3, "WorkResult", "sha256:" + "0" * 64),
        Validate("executor", "a", 2, "Evidence", "projection:run-1:2:3:4", "sha256:ab", "now"),
        Progress("run-1", "cast-é", 1, 2, 30_000, 4_000),
        CastChild('run-"quoted"\\', "sha256:cd"),
    ]
    for message in messages:
        assert message_size(message) == len(_wire(message))


def test_a_nested_field_is_measured_as_its_json_too() -> None:
    @dataclass(frozen=True, slots=True)
    class Nested:
        run_id: str
        counts: list[int]
        inner: Progress

    message = Nested("run-1", [1, 2, 3], Progress("run-1", "cast-1", 1, 2, 3, 4))
    assert message_size(message) == len(_wire(message))


def test_a_long_id_makes_a_message_too_large() -> None:
    assert message_size(Submit("r" * MAX_MESSAGE_BYTES, "a", 1, "WorkResult", "k")) > (
        MAX_MESSAGE_BYTES
    )
