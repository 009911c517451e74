"""The tools' input schemas, generated from the argument models and committed as JSON.

Building the schemas needs the argument models, and they need the protocol's models: slow to
import and to build. ``telic serve`` lists its tools from the committed ``tools.json`` instead
and loads the models on the first call. ``python -m telic.server.inputs --write`` regenerates
the file; ``--check`` exits 1 when it has drifted (the test suite runs the same comparison).
"""

from __future__ import annotations

import json
import pathlib
import typing
from importlib import resources

__all__ = ["expected_text", "input_schemas", "schema_file"]


def schema_file() -> pathlib.Path:
    """Return the committed file: tool name → input schema, in listing order."""
    return pathlib.Path(str(resources.files(__name__))) / "tools.json"


def input_schemas() -> dict[str, dict[str, typing.Any]]:
    """Return a fresh copy of every tool's committed input schema, by tool name."""
    schemas: dict[str, dict[str, typing.Any]] = json.loads(
        schema_file().read_text(encoding="utf-8")
    )
    return schemas


def expected_text() -> str:
    """Return the exact text the committed file should hold, generated from the models."""
    from telic.server._args import input_schema
    from telic.server._tools import TOOL_ARGS, _args_model

    schemas = {name: input_schema(_args_model(args)) for name, args in TOOL_ARGS.items()}
    return json.dumps(schemas, indent=2, ensure_ascii=False) + "\n"
