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
    from telic_packets._base import (
        EvidenceKind as EvidenceKind,
        NeedCode as NeedCode,
        PacketModel as PacketModel,
        format_timestamp as format_timestamp,
    )
    from telic_packets._bounds import (
        CITATION_HASH_CHARS as CITATION_HASH_CHARS,
        DIGEST_CLAIM_CHARS as DIGEST_CLAIM_CHARS,
        DIGEST_MAX_CHARS as DIGEST_MAX_CHARS,
        MAX_ACCEPTANCE_CHARS as MAX_ACCEPTANCE_CHARS,
        MAX_ACCEPTANCE_ITEMS as MAX_ACCEPTANCE_ITEMS,
        MAX_CLAIM_CHARS as MAX_CLAIM_CHARS,
        MAX_EVIDENCE_LINES as MAX_EVIDENCE_LINES,
        MAX_EXPECTED_EVIDENCE as MAX_EXPECTED_EVIDENCE,
        MAX_HANDOFF_BRIEF_CHARS as MAX_HANDOFF_BRIEF_CHARS,
        MAX_LOCATOR_CHARS as MAX_LOCATOR_CHARS,
        MAX_PACKET_BYTES as MAX_PACKET_BYTES,
        MAX_PACKET_REFS as MAX_PACKET_REFS,
        MAX_POINTER_CHARS as MAX_POINTER_CHARS,
        MAX_POINTERS as MAX_POINTERS,
        MAX_QUOTE_CHARS as MAX_QUOTE_CHARS,
        MAX_REMAINING_CHARS as MAX_REMAINING_CHARS,
        MAX_REMAINING_ITEMS as MAX_REMAINING_ITEMS,
        MAX_REPORT_SOURCE_REFS as MAX_REPORT_SOURCE_REFS,
        MAX_ROUTING_TEXT_CHARS as MAX_ROUTING_TEXT_CHARS,
        MAX_SAFE_INTEGER as MAX_SAFE_INTEGER,
        PACKET_SCHEMA as PACKET_SCHEMA,
        WALL_GRACE_MS as WALL_GRACE_MS,
    )
    from telic_packets._canonical import (
        canonical_json as canonical_json,
        canonical_sha256 as canonical_sha256,
        plain_canonical_json as plain_canonical_json,
        sha256_text as sha256_text,
    )
    from telic_packets._cast import (
        CastBudget as CastBudget,
        CastContext as CastContext,
        CastGrant as CastGrant,
        CastType as CastType,
        CastTypeRegistry as CastTypeRegistry,
        Handoff as Handoff,
        RoutingReason as RoutingReason,
        check_cast as check_cast,
    )
    from telic_packets._consumption import (
        CiteKind as CiteKind,
        ConsumptionRecord as ConsumptionRecord,
        cite_kind as cite_kind,
        consumption as consumption,
    )
    from telic_packets._digest import (
        DigestItem as DigestItem,
        DigestMark as DigestMark,
        DigestView as DigestView,
        digest_line as digest_line,
        digest_view as digest_view,
        render_digest as render_digest,
    )
    from telic_packets._errors import (
        CAST_REFUSAL_CODES as CAST_REFUSAL_CODES,
        RETURN_REFUSAL_CODES as RETURN_REFUSAL_CODES,
        CanonicalJsonError as CanonicalJsonError,
        CastRefusal as CastRefusal,
        CastRefusalCode as CastRefusalCode,
        PacketContractError as PacketContractError,
        PacketRefusal as PacketRefusal,
        RefusalCode as RefusalCode,
        ReturnRefusalCode as ReturnRefusalCode,
    )
    from telic_packets._packet import (
        Cast as Cast,
        Counters as Counters,
        EvidenceLine as EvidenceLine,
        Harness as Harness,
        Outcome as Outcome,
        Packet as Packet,
        StopReason as StopReason,
        Verdict as Verdict,
        budget_exhausted as budget_exhausted,
        derive_verdict as derive_verdict,
    )
    from telic_packets._report import ReportArtifact as ReportArtifact, ReportStatus as ReportStatus
    from telic_packets._returns import (
        ChildReturn as ChildReturn,
        ProposedEvidence as ProposedEvidence,
        parse_child_return as parse_child_return,
    )
    from telic_packets._seal import (
        Verifier as Verifier,
        archive_verifier as archive_verifier,
        seal_packet as seal_packet,
        verify_packet_hash as verify_packet_hash,
    )

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
    "WALL_GRACE_MS",
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
    "DigestMark",
    "DigestView",
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
    "digest_view",
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
        "WALL_GRACE_MS",
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
        "DigestMark",
        "DigestView",
        "digest_line",
        "digest_view",
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
