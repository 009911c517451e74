"""What a parent sends when it casts a child, and the pure checks that admit or refuse a cast.

A cast carries a ``RoutingReason`` (why, by evidence need), a ``CastBudget`` (how much) and a
``Handoff`` (what the child sees: a brief and pointers, never the parent's transcript). The cast
type must be registered and enabled in a ``CastTypeRegistry``; new types are off by default and
only the user's authority (run start or server configuration) turns one on.
"""

from __future__ import annotations

from typing import Annotated, Final, Self, get_args

from pydantic import AfterValidator, Field, StringConstraints, ValidationError, model_validator

from telic_packets._base import (
    EvidenceKind,
    Identifier,
    NeedCode,
    PacketId,
    PacketModel,
    Ref,
    first_issue,
    unique,
)
from telic_packets._bounds import (
    MAX_ACCEPTANCE_CHARS,
    MAX_ACCEPTANCE_ITEMS,
    MAX_EXPECTED_EVIDENCE,
    MAX_HANDOFF_BRIEF_CHARS,
    MAX_PACKET_REFS,
    MAX_POINTERS,
    MAX_ROUTING_TEXT_CHARS,
)
from telic_packets._errors import CastRefusal

__all__ = [
    "CastBudget",
    "CastContext",
    "CastGrant",
    "CastType",
    "CastTypeRegistry",
    "Handoff",
    "RoutingReason",
    "check_cast",
]

NEED_CODES: Final[tuple[NeedCode, ...]] = get_args(NeedCode)

CastTypeName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")]
Acceptance = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_ACCEPTANCE_CHARS, pattern=r"\S")
]


class RoutingReason(PacketModel):
    """Why a parent casts a child, written at cast time and copied into the packet."""

    need_code: NeedCode
    """The evidence need that justifies spending on a child."""

    text: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_ROUTING_TEXT_CHARS, pattern=r"\S")
    ]
    """The human-readable why: 1–200 characters, not blank."""

    expected_evidence: Annotated[
        list[EvidenceKind],
        Field(min_length=1, max_length=MAX_EXPECTED_EVIDENCE),
        AfterValidator(unique),
    ]
    """1–4 distinct evidence kinds the packet must contain to be ``verified``."""

    acceptance: Annotated[list[Acceptance], Field(max_length=MAX_ACCEPTANCE_ITEMS)] = Field(
        default_factory=list
    )
    """0–6 short, mechanically checkable criteria (≤ 120 characters each)."""


class CastBudget(PacketModel):
    """The turns, tokens and wall time one child may spend; each within its type's ceilings."""

    max_turns: Annotated[int, Field(ge=1)]
    """Turns the child may take (at least 1)."""

    max_total_tokens: Annotated[int, Field(ge=1)]
    """Input plus output tokens the child may spend (at least 1)."""

    max_wall_ms: Annotated[int, Field(ge=1)] | None = None
    """Wall-clock milliseconds the child may run, when capped."""


class CastType(PacketModel):
    """One entry of the cast-type registry."""

    cast_type: CastTypeName
    """The registry key, e.g. ``explore`` or ``test_runner``."""

    enabled: bool = False
    """Whether casts of this type are allowed; off until the user's authority enables it."""

    ceiling_turns: Annotated[int, Field(ge=1)]
    """The largest ``maxTurns`` a cast of this type may ask for."""

    ceiling_tokens: Annotated[int, Field(ge=1)]
    """The largest ``maxTotalTokens`` a cast of this type may ask for."""

    read_only: bool = True
    """Whether children of this type run without write permissions."""

    allowed_need_codes: Annotated[
        list[NeedCode], Field(min_length=1, max_length=len(NEED_CODES)), AfterValidator(unique)
    ]
    """The evidence needs this type may be routed by."""

    def check_budget(self, budget: CastBudget) -> None:
        """Raise ``budget_exceeds_ceiling`` unless ``budget`` is within this type's ceilings."""
        if budget.max_turns > self.ceiling_turns:
            raise CastRefusal(
                "budget_exceeds_ceiling",
                f"maxTurns is above the ceiling of {self.ceiling_turns} for {self.cast_type!r}",
            )
        if budget.max_total_tokens > self.ceiling_tokens:
            raise CastRefusal(
                "budget_exceeds_ceiling",
                f"maxTotalTokens is above the ceiling of {self.ceiling_tokens} "
                f"for {self.cast_type!r}",
            )


class CastContext(PacketModel):
    """Facts about the casting parent and its work node, supplied by the controller."""

    node_executing: bool
    """Whether the work node the parent casts for is in its executing state."""

    may_spawn: bool
    """Whether the caller's effective permissions include casting children."""

    children: Annotated[int, Field(ge=0)]
    """Casts already started for this work node."""

    max_children: Annotated[int, Field(ge=0)]
    """Casts allowed per work node."""

    depth: Annotated[int, Field(ge=0)]
    """Cast depth of the caller (0 for the top-level parent)."""

    max_depth: Annotated[int, Field(ge=0)]
    """Deepest cast depth a child may have."""

    in_flight: Annotated[int, Field(ge=0)] = 0
    """Casts of the whole run open at once (admitted, not yet sealed), at every depth."""

    max_in_flight: Annotated[int, Field(ge=0)] | None = None
    """Casts the run allows open at once (its ``maximumParallelWorkers``); ``None``: unbounded."""


class CastGrant(PacketModel):
    """An admitted cast: the registry entry, routing reason and budget that passed the checks."""

    cast_type: CastType
    """The enabled registry entry."""

    routing: RoutingReason
    """The validated routing reason."""

    budget: CastBudget
    """The validated budget, within the type's ceilings."""


class CastTypeRegistry(PacketModel):
    """The cast types a server or run allows; pure lookups, no I/O."""

    cast_types: list[CastType] = Field(default_factory=list)
    """The registered entries, one per distinct ``castType``."""

    @model_validator(mode="after")
    def _names_are_unique(self) -> Self:
        names = [entry.cast_type for entry in self.cast_types]
        if len(set(names)) != len(names):
            raise ValueError("castType names must be unique in a registry")
        return self

    def get(self, cast_type: str) -> CastType | None:
        """Return the entry named ``cast_type``, or ``None`` when it is not registered."""
        return next((entry for entry in self.cast_types if entry.cast_type == cast_type), None)

    def with_enabled(self, cast_type: str, enabled: bool = True) -> CastTypeRegistry:
        """Return a copy with ``cast_type`` switched on (or off); the user's act, never a model's.

        Raises:
            KeyError: when ``cast_type`` is not registered.
        """
        if self.get(cast_type) is None:
            raise KeyError(cast_type)
        entries = [
            entry.model_copy(update={"enabled": enabled}) if entry.cast_type == cast_type else entry
            for entry in self.cast_types
        ]
        return CastTypeRegistry(cast_types=entries)

    def admit(self, cast_type: str, need_code: str) -> CastType:
        """Return the enabled entry named ``cast_type`` if it may serve ``need_code``.

        Raises:
            CastRefusal: ``cast_type_disabled`` (absent or not enabled) or ``unknown_need_code``
                (the need is not among the type's ``allowedNeedCodes``).
        """
        entry = self.get(cast_type)
        if entry is None or not entry.enabled:
            state = "is not registered" if entry is None else "is not enabled"
            raise CastRefusal("cast_type_disabled", f"cast type {cast_type!r} {state}")
        if need_code not in entry.allowed_need_codes:
            raise CastRefusal(
                "unknown_need_code",
                f"need code {need_code!r} is not allowed for cast type {cast_type!r}",
            )
        return entry

    def check(self, cast_type: str, routing: RoutingReason, budget: CastBudget | None) -> CastType:
        """Return the entry a cast may use, or raise the refusal that applies.

        Raises:
            CastRefusal: ``cast_type_disabled``, ``unknown_need_code``, ``budget_missing`` or
                ``budget_exceeds_ceiling``.
        """
        entry = self.admit(cast_type, routing.need_code)
        entry.check_budget(_require_budget(budget))
        return entry


class Handoff(PacketModel):
    """What a child receives: a brief, pointers and packet refs — never the parent transcript.

    There is no history, messages or transcript field, and because unknown fields are rejected,
    sending one is a validation error.
    """

    cast_id: Identifier
    """The cast this handoff starts."""

    brief: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_HANDOFF_BRIEF_CHARS, pattern=r"\S")
    ]
    """What to do, in at most 1000 characters; it points at things and never pastes them."""

    pointers: Annotated[list[Ref], Field(max_length=MAX_POINTERS), AfterValidator(unique)] = Field(
        default_factory=list
    )
    """Up to 8 ``artifact://`` or ``repo://`` refs the child may read."""

    packet_refs: Annotated[
        list[PacketId], Field(max_length=MAX_PACKET_REFS), AfterValidator(unique)
    ] = Field(default_factory=list)
    """Ids of earlier packets the child may build on."""


def _routing(raw: object) -> RoutingReason:
    if raw is None:
        raise CastRefusal("missing_routing_reason", "a cast needs a routing reason")
    if isinstance(raw, dict):
        need = raw.get("needCode")
        if isinstance(need, str) and need not in NEED_CODES:
            raise CastRefusal(
                "unknown_need_code", f"needCode must be one of: {', '.join(NEED_CODES)}"
            )
    try:
        return RoutingReason.from_wire(raw)
    except ValidationError as exc:
        raise CastRefusal(
            "missing_routing_reason", "the routing reason is not valid: " + first_issue(exc)
        ) from None


def _require_budget(budget: CastBudget | None) -> CastBudget:
    if budget is None:
        raise CastRefusal("budget_missing", "a cast needs a budget {maxTurns, maxTotalTokens}")
    return budget


def _budget(raw: object) -> CastBudget:
    if raw is None:
        raise CastRefusal("budget_missing", "a cast needs a budget {maxTurns, maxTotalTokens}")
    try:
        return CastBudget.from_wire(raw)
    except ValidationError as exc:
        message = "the budget is not valid: " + first_issue(exc)
        raise CastRefusal("budget_missing", message) from None


def check_cast(
    *,
    cast_type: str,
    routing: object,
    budget: object,
    registry: CastTypeRegistry,
    context: CastContext,
) -> CastGrant:
    """Admit a cast or raise the refusal that applies, testing in the contract's precedence.

    ``routing`` and ``budget`` are the decoded JSON values the parent sent (``None`` when
    absent). When a request has several faults every implementation reports the same code,
    the first of:

    1. the request itself, which the caller can repair: routing reason (missing or invalid →
       ``missing_routing_reason``; need outside the closed set → ``unknown_need_code``), cast
       type (absent or disabled → ``cast_type_disabled``; need not allowed for the type →
       ``unknown_need_code``), budget (``budget_missing``, ``budget_exceeds_ceiling``);
    2. ``node_not_executing``: with no work node executing there is no caller to judge;
    3. ``spawn_not_permitted``: a caller that may not cast at all is told so, never that it
       has no room left;
    4. the bounds, innermost first: ``children_limit`` (the node's, or the calling cast's,
       ``maxChildren`` casts, sealed ones included), ``depth_limit``, then ``children_limit``
       again for the run's casts open at once (``maxInFlight``).

    Raises:
        CastRefusal: carrying one of the cast refusal codes.
    """
    reason = _routing(routing)
    entry = registry.admit(cast_type, reason.need_code)
    granted = _budget(budget)
    entry.check_budget(granted)
    if not context.node_executing:
        raise CastRefusal("node_not_executing", "casts start only while the work node executes")
    if not context.may_spawn:
        raise CastRefusal(
            "spawn_not_permitted",
            "the caller's permissions do not include casting (subagent.spawn)",
        )
    if context.children >= context.max_children:
        raise CastRefusal(
            "children_limit",
            f"this caller already started {context.children} of its {context.max_children} casts",
        )
    if context.depth + 1 > context.max_depth:
        raise CastRefusal("depth_limit", f"a child here would be deeper than {context.max_depth}")
    if context.max_in_flight is not None and context.in_flight >= context.max_in_flight:
        raise CastRefusal(
            "children_limit",
            f"{context.in_flight} casts are open; the run allows {context.max_in_flight} at once "
            "(one frees its place when its packet is sealed)",
        )
    return CastGrant(cast_type=entry, routing=reason, budget=granted)
