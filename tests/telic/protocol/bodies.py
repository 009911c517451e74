"""Helpers shared by the protocol tests: golden bodies and precise mutations of them."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

GOLDEN_DIR = Path(__file__).parent / "golden"
DELETE = object()
"""A change value that removes the key instead of setting it."""


def load_golden(name: str) -> dict[str, Any]:
    """Return a fresh copy of ``golden/<name>.json``."""
    body: dict[str, Any] = json.loads((GOLDEN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return body


def changed(body: Mapping[str, Any], changes: Mapping[str, object]) -> dict[str, Any]:
    """Return a deep copy of ``body`` with each dotted path set to its value (or deleted)."""
    result: dict[str, Any] = copy.deepcopy(dict(body))
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node: Any = result
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is DELETE:
            del node[int(leaf) if isinstance(node, list) else leaf]
        elif isinstance(node, list):
            node[int(leaf)] = value
        else:
            node[leaf] = value
    return result


def with_change(body: Mapping[str, Any], path: str, value: object) -> dict[str, Any]:
    """Return a deep copy of ``body`` with the one dotted ``path`` set to ``value``."""
    return changed(body, {path: value})


def error_type(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    """Return the type of the first validation error."""
    return str(exc.value.errors()[0]["type"])


def first_error_type(model: type[BaseModel], body: Mapping[str, Any]) -> str:
    """Validate ``body`` by wire names, expecting a failure; return its first error type."""
    with pytest.raises(ValidationError) as exc:
        model.model_validate(body, by_alias=True, by_name=False)
    return error_type(exc)
