"""The committed JSON Schema files, one per artifact type, generated from the models.

``python -m telic.protocol.schemas --write`` regenerates them; ``--check`` exits 1 when a file
has drifted from the models (the test suite runs the same comparison).
"""

from __future__ import annotations

import json
import pathlib
from importlib import resources

from telic.protocol import _registry

__all__ = ["expected_files", "schema_dir"]


def schema_dir() -> pathlib.Path:
    """Return the directory holding the committed schema files."""
    return pathlib.Path(str(resources.files(__name__)))


def expected_files() -> dict[str, str]:
    """Return file name → the exact text each committed schema file should hold."""
    return {
        f"{artifact_type}.schema.json": json.dumps(
            _registry.json_schema(artifact_type), indent=2, sort_keys=True, ensure_ascii=False
        )
        + "\n"
        for artifact_type in sorted(_registry.ARTIFACT_MODELS)
    }
