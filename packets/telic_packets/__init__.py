"""The evidence-packet contract ``telic.evidence-packet/1``: what a cast child may return.

A parent casts a child with a ``RoutingReason``, a ``CastBudget`` and a fresh-context ``Handoff``;
``check_cast`` admits the cast against a ``CastTypeRegistry`` or refuses it with a typed code.
The child returns a small object that ``parse_child_return`` types (or refuses);
``seal_packet`` verifies each quote against the archive, derives the verdict and hashes the
result into a ``Packet``. ``consumption`` records whether the parent's next decision cited it and
``render_digest`` renders a run's packets, unconsumed first.

Everything here is pure and depends on pydantic alone, so other processes and languages can use
the same contract; the conformance table shipped in ``telic_packets.conformance`` pins it down.

Errors::

    PacketContractError
    ├── CanonicalJsonError
    └── PacketRefusal          code ∈ RETURN_REFUSAL_CODES ∪ CAST_REFUSAL_CODES
        └── CastRefusal        code ∈ CAST_REFUSAL_CODES
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from telic_packets._base import EvidenceKind as EvidenceKind
    from telic_packets._base import NeedCode as NeedCode
    from telic_packets._base import PacketModel as PacketModel
    from telic_packets._base import format_timestamp as format_timestamp
    from telic_packets._bounds import CITATION_HASH_CHARS as CITATION_HASH_CHARS
    from telic_packets._bounds import DIGEST_CLAIM_CHARS as DIGEST_CLAIM_CHARS
    from telic_packets._bounds import DIGEST_MAX_CHARS as DIGEST_MAX_CHARS
    from telic_packets._bounds import MAX_ACCEPTANCE_CHARS as MAX_ACCEPTANCE_CHARS
    from telic_packets._bounds import MAX_ACCEPTANCE_ITEMS as MAX_ACCEPTANCE_ITEMS
    from telic_packets._bounds import MAX_CLAIM_CHARS as MAX_CLAIM_CHARS
    from telic_packets._bounds import MAX_EVIDENCE_LINES as MAX_EVIDENCE_LINES
    from telic_packets._bounds import MAX_EXPECTED_EVIDENCE as MAX_EXPECTED_EVIDENCE
    from telic_packets._bounds import MAX_HANDOFF_BRIEF_CHARS as MAX_HANDOFF_BRIEF_CHARS
    from telic_packets._bounds import MAX_LOCATOR_CHARS as MAX_LOCATOR_CHARS
    from telic_packets._bounds import MAX_PACKET_BYTES as MAX_PACKET_BYTES
    from telic_packets._bounds import MAX_PACKET_REFS as MAX_PACKET_REFS
    from telic_packets._bounds import MAX_POINTER_CHARS as MAX_POINTER_CHARS
    from telic_packets._bounds import MAX_POINTERS as MAX_POINTERS
    from telic_packets._bounds import MAX_QUOTE_CHARS as MAX_QUOTE_CHARS
    from telic_packets._bounds import MAX_REMAINING_CHARS as MAX_REMAINING_CHARS
    from telic_packets._bounds import MAX_REMAINING_ITEMS as MAX_REMAINING_ITEMS
    from telic_packets._bounds import MAX_REPORT_SOURCE_REFS as MAX_REPORT_SOURCE_REFS
    from telic_packets._bounds import MAX_ROUTING_TEXT_CHARS as MAX_ROUTING_TEXT_CHARS
    from telic_packets._bounds import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
    from telic_packets._bounds import PACKET_SCHEMA as PACKET_SCHEMA
    from telic_packets._canonical import canonical_json as canonical_json
    from telic_packets._canonical import canonical_sha256 as canonical_sha256
    from telic_packets._canonical import plain_canonical_json as plain_canonical_json
    from telic_packets._canonical import sha256_text as sha256_text
    from telic_packets._cast import CastBudget as CastBudget
    from telic_packets._cast import CastContext as CastContext
    from telic_packets._cast import CastGrant as CastGrant
    from telic_packets._cast import CastType as CastType
    from telic_packets._cast import CastTypeRegistry as CastTypeRegistry
    from telic_packets._cast import Handoff as Handoff
    from telic_packets._cast import RoutingReason as RoutingReason
    from telic_packets._cast import check_cast as check_cast
    from telic_packets._consumption import CiteKind as CiteKind
    from telic_packets._consumption import ConsumptionRecord as ConsumptionRecord
    from telic_packets._consumption import cite_kind as cite_kind
    from telic_packets._consumption import consumption as consumption
    from telic_packets._digest import DigestItem as DigestItem
    from telic_packets._digest import digest_line as digest_line
    from telic_packets._digest import render_digest as render_digest
    from telic_packets._errors import CAST_REFUSAL_CODES as CAST_REFUSAL_CODES
    from telic_packets._errors import RETURN_REFUSAL_CODES as RETURN_REFUSAL_CODES
    from telic_packets._errors import CanonicalJsonError as CanonicalJsonError
    from telic_packets._errors import CastRefusal as CastRefusal
    from telic_packets._errors import CastRefusalCode as CastRefusalCode
    from telic_packets._errors import PacketContractError as PacketContractError
    from telic_packets._errors import PacketRefusal as PacketRefusal
    from telic_packets._errors import RefusalCode as RefusalCode
    from telic_packets._errors import ReturnRefusalCode as ReturnRefusalCode
    from telic_packets._packet import Cast as Cast
    from telic_packets._packet import Counters as Counters
    from telic_packets._packet import EvidenceLine as EvidenceLine
    from telic_packets._packet import Harness as Harness
    from telic_packets._packet import Outcome as Outcome
    from telic_packets._packet import Packet as Packet
    from telic_packets._packet import StopReason as StopReason
    from telic_packets._packet import Verdict as Verdict
    from telic_packets._packet import budget_exhausted as budget_exhausted
    from telic_packets._packet import derive_verdict as derive_verdict
    from telic_packets._report import ReportArtifact as ReportArtifact
    from telic_packets._report import ReportStatus as ReportStatus
    from telic_packets._returns import ChildReturn as ChildReturn
    from telic_packets._returns import ProposedEvidence as ProposedEvidence
    from telic_packets._returns import parse_child_return as parse_child_return
    from telic_packets._seal import Verifier as Verifier
    from telic_packets._seal import archive_verifier as archive_verifier
    from telic_packets._seal import seal_packet as seal_packet
    from telic_packets._seal import verify_packet_hash as verify_packet_hash

__all__ = [
    "CAST_REFUSAL_CODES",
    "CITATION_HASH_CHARS",
    "DIGEST_CLAIM_CHARS",
    "DIGEST_MAX_CHARS",
    "MAX_ACCEPTANCE_CHARS",
    "MAX_ACCEPTANCE_ITEMS",
    "MAX_CLAIM_CHARS",
    "MAX_EVIDENCE_LINES",
    "MAX_EXPECTED_EVIDENCE",
    "MAX_HANDOFF_BRIEF_CHARS",
    "MAX_LOCATOR_CHARS",
    "MAX_PACKET_BYTES",
    "MAX_PACKET_REFS",
    "MAX_POINTERS",
    "MAX_POINTER_CHARS",
    "MAX_QUOTE_CHARS",
    "MAX_REMAINING_CHARS",
    "MAX_REMAINING_ITEMS",
    "MAX_REPORT_SOURCE_REFS",
    "MAX_ROUTING_TEXT_CHARS",
    "MAX_SAFE_INTEGER",
    "PACKET_SCHEMA",
    "RETURN_REFUSAL_CODES",
    "CanonicalJsonError",
    "Cast",
    "CastBudget",
    "CastContext",
    "CastGrant",
    "CastRefusal",
    "CastRefusalCode",
    "CastType",
    "CastTypeRegistry",
    "ChildReturn",
    "CiteKind",
    "ConsumptionRecord",
    "Counters",
    "DigestItem",
    "EvidenceKind",
    "EvidenceLine",
    "Handoff",
    "Harness",
    "NeedCode",
    "Outcome",
    "Packet",
    "PacketContractError",
    "PacketModel",
    "PacketRefusal",
    "ProposedEvidence",
    "RefusalCode",
    "ReportArtifact",
    "ReportStatus",
    "ReturnRefusalCode",
    "RoutingReason",
    "StopReason",
    "Verdict",
    "Verifier",
    "archive_verifier",
    "budget_exhausted",
    "canonical_json",
    "canonical_sha256",
    "check_cast",
    "cite_kind",
    "consumption",
    "derive_verdict",
    "digest_line",
    "format_timestamp",
    "parse_child_return",
    "plain_canonical_json",
    "render_digest",
    "seal_packet",
    "sha256_text",
    "verify_packet_hash",
]

_EXPORTS: typing.Final = {
    "telic_packets._base": (
        "EvidenceKind",
        "NeedCode",
        "PacketModel",
        "format_timestamp",
    ),
    "telic_packets._bounds": (
        "CITATION_HASH_CHARS",
        "DIGEST_CLAIM_CHARS",
        "DIGEST_MAX_CHARS",
        "MAX_ACCEPTANCE_CHARS",
        "MAX_ACCEPTANCE_ITEMS",
        "MAX_CLAIM_CHARS",
        "MAX_EVIDENCE_LINES",
        "MAX_EXPECTED_EVIDENCE",
        "MAX_HANDOFF_BRIEF_CHARS",
        "MAX_LOCATOR_CHARS",
        "MAX_PACKET_BYTES",
        "MAX_PACKET_REFS",
        "MAX_POINTER_CHARS",
        "MAX_POINTERS",
        "MAX_QUOTE_CHARS",
        "MAX_REMAINING_CHARS",
        "MAX_REMAINING_ITEMS",
        "MAX_REPORT_SOURCE_REFS",
        "MAX_ROUTING_TEXT_CHARS",
        "MAX_SAFE_INTEGER",
        "PACKET_SCHEMA",
    ),
    "telic_packets._canonical": (
        "canonical_json",
        "canonical_sha256",
        "plain_canonical_json",
        "sha256_text",
    ),
    "telic_packets._cast": (
        "CastBudget",
        "CastContext",
        "CastGrant",
        "CastType",
        "CastTypeRegistry",
        "Handoff",
        "RoutingReason",
        "check_cast",
    ),
    "telic_packets._consumption": (
        "CiteKind",
        "ConsumptionRecord",
        "cite_kind",
        "consumption",
    ),
    "telic_packets._digest": (
        "DigestItem",
        "digest_line",
        "render_digest",
    ),
    "telic_packets._errors": (
        "CAST_REFUSAL_CODES",
        "RETURN_REFUSAL_CODES",
        "CanonicalJsonError",
        "CastRefusal",
        "CastRefusalCode",
        "PacketContractError",
        "PacketRefusal",
        "RefusalCode",
        "ReturnRefusalCode",
    ),
    "telic_packets._packet": (
        "Cast",
        "Counters",
        "EvidenceLine",
        "Harness",
        "Outcome",
        "Packet",
        "StopReason",
        "Verdict",
        "budget_exhausted",
        "derive_verdict",
    ),
    "telic_packets._report": (
        "ReportArtifact",
        "ReportStatus",
    ),
    "telic_packets._returns": (
        "ChildReturn",
        "ProposedEvidence",
        "parse_child_return",
    ),
    "telic_packets._seal": (
        "Verifier",
        "archive_verifier",
        "seal_packet",
        "verify_packet_hash",
    ),
}
"""Where each exported name lives: loaded on first use, so importing one module of this
package (the canonical writer, say) does not build every model."""

if not typing.TYPE_CHECKING:
    import importlib as _importlib

    _WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

    def __getattr__(name: str) -> object:
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_WHERE))
