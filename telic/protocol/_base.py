"""The one base model of every Telic 1.0 wire schema.

Bodies are strict (unknown keys rejected at every depth, no type coercion), frozen, and spelled
in camelCase on the wire. Python code constructs them by field name; the wire is validated by
alias only (``from_wire``), so ``run_id`` is as unknown to a host as ``hiddenChainOfThought``.
Inputs are hidden from validation errors, because a rejected body may hold a secret.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


def _drop_description(schema: dict[str, Any], cls: type[Any]) -> None:
    schema.pop("description", None)


UNDESCRIBED: Final = ConfigDict(json_schema_extra=_drop_description)
"""The ``model_config`` of a type whose name says all a schema reader needs: its docstring is
for people reading the code and stays out of its JSON Schema (and so out of a host's context)."""


class WireModel(BaseModel):
    """Frozen, strict, camelCase base of every protocol object."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        hide_input_in_errors=True,
        allow_inf_nan=False,
    )

    @classmethod
    def from_wire(cls, data: object) -> Self:
        """Validate a decoded JSON value by its camelCase wire names only."""
        return cls.model_validate(data, by_alias=True, by_name=False)

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-ready camelCase form (nulls and defaults included)."""
        return self.model_dump(mode="json", by_alias=True)


class ArtifactBody(WireModel):
    """Base of every artifact body: carries ``schemaVersion: "1.0"``."""

    schema_version: Literal["1.0"]
    """Protocol version of this body."""
