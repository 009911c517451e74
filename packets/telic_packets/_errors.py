"""The error tree of ``telic_packets`` and the contract's refusal codes.

::

    PacketContractError        root of every error this package raises on purpose
    ├── CanonicalJsonError     a value cannot be hashed (float, NaN, non-JSON type, unsafe int)
    └── PacketRefusal          a typed repair request: ``code`` is one of the contract's codes
        └── CastRefusal        a refused cast: ``code`` is one of the cast refusal codes

A refusal's ``code`` is the stable part; ``message`` is one short line saying what to repair and
never echoes the submitted value.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "CAST_REFUSAL_CODES",
    "RETURN_REFUSAL_CODES",
    "CanonicalJsonError",
    "CastRefusal",
    "CastRefusalCode",
    "PacketContractError",
    "PacketRefusal",
    "RefusalCode",
    "ReturnRefusalCode",
]

CastRefusalCode = Literal[
    "missing_routing_reason",
    "unknown_need_code",
    "cast_type_disabled",
    "budget_missing",
    "budget_exceeds_ceiling",
    "children_limit",
    "depth_limit",
    "spawn_not_permitted",
    "node_not_executing",
]
"""Why the casting surface refused to start a child."""

ReturnRefusalCode = Literal[
    "not_a_packet",
    "packet_too_large",
    "claim_too_long",
    "too_many_evidence_lines",
    "quote_too_long",
    "unknown_field",
    "missing_partial_fields",
    "budget_exhausted_requires_partial",
    "cast_not_open",
]
"""Why a child's return was refused; each is a repair request the child can act on."""

RefusalCode = CastRefusalCode | ReturnRefusalCode
"""Every refusal code of the contract."""

CAST_REFUSAL_CODES: Final[tuple[CastRefusalCode, ...]] = get_args(CastRefusalCode)
"""The cast refusal codes, in the contract's order (``check_cast`` documents which wins when
several apply)."""

RETURN_REFUSAL_CODES: Final[tuple[ReturnRefusalCode, ...]] = get_args(ReturnRefusalCode)
"""The return refusal codes, in the contract's order."""

_MAX_MESSAGE_CHARS: Final = 400


class PacketContractError(Exception):
    """Root of every error ``telic_packets`` raises on purpose."""


class CanonicalJsonError(PacketContractError, ValueError):
    """A value cannot be written as canonical packet JSON.

    Raised for floats (every hashed number is an integer), integers beyond ±(2**53 - 1), NaN and
    infinities, non-string object keys, lone surrogates, cycles and values JSON cannot represent.
    """


class PacketRefusal(PacketContractError):
    """A typed refusal: a stable ``code`` from the contract plus a one-line repair hint."""

    code: RefusalCode
    """The contract's refusal code; the part a caller branches on."""

    message: str
    """One line saying what to repair; never contains the submitted value."""

    def __init__(self, code: RefusalCode, message: str) -> None:
        if code not in CAST_REFUSAL_CODES and code not in RETURN_REFUSAL_CODES:
            raise ValueError(f"{code!r} is not a refusal code of the contract")
        flat = " ".join(message.split())
        if len(flat) > _MAX_MESSAGE_CHARS:
            flat = flat[: _MAX_MESSAGE_CHARS - 1] + "…"
        super().__init__(f"{code}: {flat}")
        self.code = code
        self.message = flat

    def to_wire(self) -> dict[str, str]:
        """Return the ``{code, message}`` repair request as sent back to the caster or child."""
        return {"code": self.code, "message": self.message}


class CastRefusal(PacketRefusal):
    """A refused cast; its ``code`` is always one of ``CAST_REFUSAL_CODES``."""

    def __init__(self, code: CastRefusalCode, message: str) -> None:
        if code not in CAST_REFUSAL_CODES:
            raise ValueError(f"{code!r} is not a cast refusal code")
        super().__init__(code, message)
