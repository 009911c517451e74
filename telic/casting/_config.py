"""Where enabled cast types come from: the user's authority, never the model.

Two sources, both the user's: the ``cast_types`` a run is started with (stored with the run as a
``CastPolicy`` artifact) and the server configuration file (``telic.toml`` or ``telic.json``)
that ``open_service`` reads from the state directory, outside the repository the model may
write to. A run's entry overrides the server's entry of the same name.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import ValidationError

from telic._errors import ContextSecurityError, Issue, SchemaViolation, UsageError
from telic_packets import CastType, CastTypeRegistry

if TYPE_CHECKING:
    from telic.controller import RunState


CONFIG_NAMES: Final = ("telic.toml", "telic.json")
"""File names ``find_config`` looks for in the state directory, in this order."""


def parse_cast_types(entries: Iterable[CastType | Mapping[str, object]]) -> tuple[CastType, ...]:
    """Return registry entries from models or their camelCase wire objects.

    Raises:
        SchemaViolation: an entry breaks the ``CastType`` schema or two entries share a name.
    """
    parsed: list[CastType] = []
    for index, entry in enumerate(entries):
        if isinstance(entry, CastType):
            parsed.append(entry)
            continue
        try:
            parsed.append(CastType.from_wire(entry))
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            message = f"cast_types.{index} is not a cast-type entry: {where} {first['msg']}"
            raise SchemaViolation(
                message, issues=(Issue(f"cast_types.{index}.{where}", first["type"], message),)
            ) from None
    try:
        CastTypeRegistry(cast_types=parsed)
    except ValidationError:
        message = "cast_types names must be unique"
        raise SchemaViolation(
            message, issues=(Issue("cast_types", "duplicate", message),)
        ) from None
    return tuple(parsed)


def load_cast_types(path: str | Path) -> tuple[CastType, ...]:
    """Read the ``cast_types`` (or ``castTypes``) list of a TOML or JSON configuration file.

    A file without the key enables nothing.

    Raises:
        UsageError: the file cannot be read or parsed.
        SchemaViolation: an entry is malformed.
    """
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
        document: object = tomllib.loads(text) if target.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the configuration file {target.name}: {exc}") from None
    if not isinstance(document, Mapping):
        raise UsageError(f"the configuration file {target.name} must hold an object")
    entries = document.get("cast_types", document.get("castTypes", []))
    if not isinstance(entries, list):
        raise UsageError(f"cast_types in {target.name} must be a list of tables")
    return parse_cast_types(entries)


def find_config(state_dir: Path, repository_root: Path) -> Path | None:
    """Return the configuration file in ``state_dir``, or None.

    Raises:
        ContextSecurityError: the state directory lies inside the repository, where the model
            could edit the file and enable cast types itself.
    """
    state, root = state_dir.resolve(), repository_root.resolve()
    if state == root or root in state.parents:
        raise ContextSecurityError(
            "the server configuration must live outside the repository; "
            "a model that can write the repository must not be able to enable cast types"
        )
    for name in CONFIG_NAMES:
        candidate = state / name
        if candidate.is_file():
            return candidate
    return None


def effective_registry(server: Sequence[CastType], state: RunState) -> CastTypeRegistry:
    """Return the registry a run casts against: server entries, overridden by the entries of
    the run's ``CastPolicy`` (the ``cast_types`` it was started with)."""
    policy = state.latest("CastPolicy")
    run = () if policy is None else policy.body.cast_types
    entries = {entry.cast_type: entry for entry in (*server, *run)}
    return CastTypeRegistry(cast_types=[entries[name] for name in sorted(entries)])
