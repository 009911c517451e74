"""The committed input schemas are the argument models' schemas, one per declared tool."""

from __future__ import annotations

from pydantic import BaseModel

from telic.server._args import ToolArgs
from telic.server._tools import TOOL_NAMES, models
from telic.server.inputs import expected_text, schema_file, tool_schemas


def test_the_committed_input_schemas_have_not_drifted_from_the_models() -> None:
    assert schema_file().read_text(encoding="utf-8") == expected_text(), (
        "run `python -m telic.server.inputs --write`"
    )


def test_every_tool_has_an_argument_model_and_a_committed_schema() -> None:
    assert list(tool_schemas()) == list(TOOL_NAMES)
    for name in TOOL_NAMES:
        assert issubclass(models(name)[0], ToolArgs)
        assert issubclass(models(name)[1], BaseModel)
