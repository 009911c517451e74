"""Every tool's input and output schema, generated from its models and committed as JSON.

Building the schemas needs the argument and result models, and those need the protocol's
models: slow to import and to build. ``telic serve`` lists its tools from the committed
``tools.json`` instead and loads the models on the first call. ``python -m telic.server.inputs
--write`` regenerates the file; ``--check`` exits 1 when it has drifted (the test suite runs the
same comparison).
"""

from __future__ import annotations

import functools
import json
import pathlib
import typing
from importlib import resources

__all__ = ["expected_text", "schema_file", "tool_schemas"]


def schema_file() -> pathlib.Path:
    """Return the committed file: tool name → ``{input, output}`` schemas, in listing order."""
    return pathlib.Path(str(resources.files(__name__))) / "tools.json"


@functools.cache
def _loaded() -> str:
    return schema_file().read_text(encoding="utf-8")


def tool_schemas() -> dict[str, dict[str, typing.Any]]:
    """Return a fresh copy of every tool's committed ``{input, output}`` schemas, by tool name."""
    schemas: dict[str, dict[str, typing.Any]] = json.loads(_loaded())
    return schemas


def expected_text() -> str:
    """Return the exact text the committed file should hold, generated from the models."""
    from telic.server._args import input_schema, output_schema
    from telic.server._tools import TOOL_NAMES, models

    schemas = {
        name: {"input": input_schema(models(name)[0]), "output": output_schema(models(name)[1])}
        for name in TOOL_NAMES
    }
    return json.dumps(schemas, indent=2, ensure_ascii=False) + "\n"
