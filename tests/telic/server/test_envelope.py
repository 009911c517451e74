"""The JSON form of what tools return: the fast ``to_wire`` writes what a plain walk writes.

``_reference`` is the straightforward walk ``to_wire`` was before it learnt its shortcuts (exact
JSON scalars first, cached field names per record type, exact containers before the ABCs). Every
value below must come out equal and dump to the same bytes both ways.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, strategies as st
from mcp import Client
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from telic.demo import DemoRepository, TelicTools, drive_mode
from telic.protocol import PermissionSet, PhaseAction
from telic.roles import open_service
from telic.server import build_server, to_wire
from telic.server._envelope import _phase_action
from telic.server._schemas import SchemaFn, emitted_schema

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"


def _reference(value: object, schema: SchemaFn = emitted_schema) -> Any:
    if isinstance(value, PhaseAction):
        return _phase_action(value, schema)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    own = getattr(value, "to_wire", None)
    if callable(own) and not isinstance(value, type):
        return _reference(own(), schema)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            to_camel(f.name): _reference(getattr(value, f.name), schema)
            for f in dataclasses.fields(value)
            if f.name not in ("controller_state", "quota_key")
        }
    if isinstance(value, Mapping):
        return {str(k): _reference(v, schema) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_reference(v, schema) for v in value]
    return value


def _dumps(value: object) -> str:
    # What the envelope writes; ``repr`` stands in for what JSON cannot hold (a plain enum).
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=repr
    )


def _assert_same_wire(value: object, schema: SchemaFn = emitted_schema) -> None:
    fast, plain = to_wire(value, schema), _reference(value, schema)
    assert fast == plain
    assert _dumps(fast) == _dumps(plain)


def _by_reference(kind: str) -> dict[str, str]:
    return {"$ref": f"telic://schemas/{kind}"}


@pytest.mark.anyio
async def test_a_real_runs_records_come_out_byte_for_byte_as_before(
    repo: DemoRepository, state: Path
) -> None:
    async with (
        open_service(database_url="memory://", repository_root=repo.root, state_dir=state) as svc,
        Client(build_server(svc)) as client,
    ):
        tools = TelicTools(client)
        finished = await drive_mode(tools, "analyze_and_fix", repo, request=REQUEST, goal="Fix it")
        started = await tools.call("telic_start_run", original_request=REQUEST, mode="plan_only")
        active = started["run"]["runId"]
        details = await svc.get_run(finished.run_id)
        last = details.artifacts[-1]
        values: list[object] = [
            details,
            details.run,
            details.artifacts,
            (await svc.get_trace(finished.run_id, 0, 100)).events,
            await svc.list_runs(10),
            await svc.get_artifact(finished.run_id, last.artifact_id),
            await svc.verify_run(finished.run_id),
            await svc.get_run(active),
            await svc.get_next_action(active),
        ]
    assert len(details.artifacts) >= 16
    assert isinstance(values[-1], PhaseAction)
    for value in values:
        _assert_same_wire(value)
        _assert_same_wire(value, _by_reference)
    assert "controllerState" not in to_wire(details.run)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Word(enum.StrEnum):
    YES = "yes"


class Name(str):
    pass


class Wired:
    def to_wire(self) -> object:
        return {"own": (1, b"\xff")}


@dataclasses.dataclass(frozen=True, slots=True)
class Hidden:
    snake_case_name: tuple[tuple[int, ...], ...]
    quota_key: str
    controller_state: dict[str, int]
    note: bytes = b"caf\xc3\xa9"


@dataclasses.dataclass
class WiredRecord:
    """A dataclass with its own ``to_wire``: its own form wins over its fields."""

    secret: str = "kept out"

    def to_wire(self) -> object:
        return {"shown": True}


class Pairs(Mapping[int, object]):
    def __init__(self, items: dict[int, object]) -> None:
        self._items = items

    def __getitem__(self, key: int) -> object:
        return self._items[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Stack(list[object]):
    pass


ODD_VALUES: dict[str, object] = {
    "nested tuples": ((1, (2, (3, ()))), [(), [b"x"]]),
    "bytes that are not UTF-8": b"\xfe not utf-8 \xff",
    "keys that are not strings": {1: b"one", None: (True, 2.5), (1, 2): "tuple key"},
    "a mapping proxy": MappingProxyType({"proxy": (1,)}),
    "an ordered dict": OrderedDict(b=1, a=(2,)),
    "a mapping of its own": Pairs({2: {"x": (b"y",)}, 1: MappingProxyType({})}),
    "enums and a str subclass": [Colour.RED, Level.HIGH, Word.YES, Name("plain"), True, -0.0],
    "enums in a dict": {"enums": (Level.HIGH, Word.YES), "none": None},
    "a record with storage fields": Hidden(((1, 2), ()), "k", {"a": 1}),
    "own forms and a list subclass": [Wired(), WiredRecord(), Stack([1, (2,)])],
    "models inside": {"permissions": PermissionSet.empty(), "in": [PermissionSet.empty()]},
    "a record class": Hidden,
    "a string": "a string is not a sequence of characters",
}


@pytest.mark.parametrize("value", ODD_VALUES.values(), ids=ODD_VALUES.keys())
def test_odd_values_come_out_as_the_plain_walk_writes_them(value: object) -> None:
    fast, plain = to_wire(value), _reference(value)
    assert fast == plain
    assert repr(fast) == repr(plain)  # the same types too: an enum stays an enum
    assert _dumps(fast) == _dumps(plain)


_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.binary(max_size=5)
    | st.sampled_from([Colour.RED, Level.HIGH, Word.YES])
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=4).map(MappingProxyType)
    ),
    max_leaves=20,
)


@given(_values)
def test_nested_plain_values_come_out_as_the_plain_walk_writes_them(value: object) -> None:
    fast, plain = to_wire(value), _reference(value)
    assert repr(fast) == repr(plain)
    assert _dumps(fast) == _dumps(plain)


_ENVELOPES = st.dictionaries(
    st.text(max_size=8),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=5), children, max_size=3)
        ),
        max_leaves=12,
    ),
    max_size=5,
)


@given(_ENVELOPES, st.booleans())
def test_a_tool_result_is_on_the_wire_what_the_sdk_model_would_put_there(
    envelope: dict[str, Any], is_error: bool
) -> None:
    from mcp_types import CallToolResult, TextContent
    from mcp_types.methods import SERVER_RESULTS, serialize_server_result

    from telic.server._envelope import _dumps, error_result, success

    built = error_result(envelope) if is_error else success(envelope)
    text = _dumps(built["structuredContent"])
    model = CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=built["structuredContent"],
        is_error=is_error,
    )
    assert built == model.model_dump(by_alias=True, mode="json", exclude_none=True)
    for method, version in SERVER_RESULTS:
        if method == "tools/call":
            ours = serialize_server_result(method, version, built)
            theirs = serialize_server_result(
                method, version, model.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
            assert json.dumps(ours) == json.dumps(theirs)
