"""Each tool is declared once, on its handler: its models are its handler's annotations."""

from __future__ import annotations

import dataclasses

import pytest

from telic._errors import NotFound
from telic.controller import StartRequest
from telic.server._args import GroundArgs, RunArgs, StartRunArgs, SubmitArgs
from telic.server._results import GroundResultOut, StepResultOut, VerifyResultOut
from telic.server._schemas import SentSchemas
from telic.server._tools import TOOL_NAMES, TOOLS, call_tool, list_tools, models


def test_every_tool_is_declared_once_and_listed_in_declaration_order() -> None:
    assert len(set(TOOL_NAMES)) == len(TOOLS) == 16
    assert [tool.name for tool in list_tools()] == list(TOOL_NAMES)


def test_a_tool_s_models_are_its_handler_s_argument_and_return_annotations() -> None:
    assert models("telic_submit_artifact") == (SubmitArgs, StepResultOut)
    assert models("telic_ground_context") == (GroundArgs, GroundResultOut)
    assert models("telic_verify_run") == (RunArgs, VerifyResultOut)


def test_start_run_s_arguments_are_a_start_request_and_its_cast_types() -> None:
    """Every argument but cast_types is a StartRequest field, with the same default."""
    fields = dataclasses.fields(StartRequest)
    wire = {f.name: f.default for f in fields if f.name != "active_files"}  # Python API only
    arguments = StartRunArgs.model_fields
    assert set(arguments) == {*wire, "cast_types"}
    for name, default in wire.items():
        given = dataclasses.MISSING if arguments[name].is_required() else arguments[name].default
        assert (tuple(given) if isinstance(given, list) else given) == default, name


def test_only_cancelling_is_destructive() -> None:
    assert [t.name for t in TOOLS if t.destructive] == ["telic_cancel_run"]


async def _code_of(failure: BaseException) -> object:
    """The envelope code a tool call answers when its service raises ``failure``."""

    async def source() -> object:
        raise failure

    async def progress(done: float, total: float | None, message: str | None) -> None:
        return None

    result = await call_tool(
        source,  # type: ignore[arg-type]
        SentSchemas(),
        "telic_get_run",
        {"run_id": "run-1"},
        progress,
        None,
    )
    assert result["isError"] is True
    return result["structuredContent"]["code"]


@pytest.mark.anyio
async def test_an_error_is_unwrapped_from_task_groups_only_when_it_is_alone() -> None:
    alone = NotFound("Run not found")
    assert await _code_of(ExceptionGroup("outer", [ExceptionGroup("inner", [alone])])) == (
        "not_found"
    )
    assert await _code_of(alone) == "not_found"
    two = ExceptionGroup("two", [NotFound("a"), NotFound("b")])
    assert await _code_of(two) == "internal_error"
