"""Each tool is declared once, on its handler: its models are its handler's annotations."""

from __future__ import annotations

from telic.server._args import GroundArgs, RunArgs, SubmitArgs
from telic.server._results import GroundResultOut, StepResultOut, VerifyResultOut
from telic.server._tools import TOOL_NAMES, TOOLS, _leaf, list_tools, models


def test_every_tool_is_declared_once_and_listed_in_declaration_order() -> None:
    assert len(set(TOOL_NAMES)) == len(TOOLS) == 16
    assert [tool.name for tool in list_tools()] == list(TOOL_NAMES)


def test_a_tool_s_models_are_its_handler_s_argument_and_return_annotations() -> None:
    assert models("telic_submit_artifact") == (SubmitArgs, StepResultOut)
    assert models("telic_ground_context") == (GroundArgs, GroundResultOut)
    assert models("telic_verify_run") == (RunArgs, VerifyResultOut)


def test_only_cancelling_is_destructive() -> None:
    assert [t.name for t in TOOLS if t.destructive] == ["telic_cancel_run"]


def test_an_error_is_unwrapped_from_task_groups_only_when_it_is_alone() -> None:
    alone = ValueError("the one error")
    assert _leaf(ExceptionGroup("outer", [ExceptionGroup("inner", [alone])])) is alone
    two = ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    assert _leaf(two) is two
    assert _leaf(alone) is alone
