"""ContextDocument, ContextManifest, its snake_case wire form, and the normaliser."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._context import (
    EXCLUSION_REASONS,
    ContextDocument,
    ContextManifest,
    ContextManifestWire,
    SelectedCandidate,
    normalize_manifest,
)
from tests.telic.protocol.bodies import error_type, load_golden, with_change

HASH_API = "sha256:" + "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b"
HASH_AGENTS = "sha256:7dcb2764d90e73b2771e4f7d7c14c25112bf8b1dc92d35385270ce2358a397af"


def golden(name: str) -> dict[str, Any]:
    return load_golden(name)


def wire() -> dict[str, Any]:
    """The grounding output that normalises to the golden ContextManifest."""
    manifest = golden("ContextManifest")
    return {
        "schema_version": "1.0",
        "id": manifest["id"],
        "run_id": manifest["runId"],
        "repository_fingerprint": {
            "head_commit": manifest["repositoryFingerprint"]["headCommit"],
            "dirty_worktree_hash": manifest["repositoryFingerprint"]["dirtyWorktreeHash"],
        },
        "pinned_refs": ["repo://AGENTS.md", "repo://apps/web/src/api.ts"],
        "selected_sources": [
            {
                "ref": "repo://apps/web/src/api.ts",
                "path": "apps/web/src/api.ts",
                "reason": 'Exact active path; basename matches request term "api".',
                "content_hash": HASH_API,
                "size_bytes": 13200,
                "score": 1050400,
                "pinned": True,
            },
            {
                "ref": "repo://AGENTS.md",
                "path": "AGENTS.md",
                "reason": "Pinned repository instruction file.",
                "content_hash": HASH_AGENTS,
                "size_bytes": 63,
                "score": 1000000,
                "pinned": True,
            },
        ],
        "excluded_candidates": [
            {"reason": "secret_like_file", "count": 1},
            {"reason": "excluded_directory", "count": 412},
        ],
        "inventory_source": "git",
        "warnings": [],
        "budget": {
            "max_files": 48,
            "max_file_bytes": 131072,
            "max_total_bytes": 524288,
            "max_inventory_files": 20000,
            "candidate_files": 187,
            "selected_files": 2,
            "selected_bytes": 13263,
            "estimated_tokens": 3316,
        },
    }


EXCLUDED: dict[str, Any] = {
    "id": "candidate-0003",
    "ref": "repo://dist/bundle.js",
    "locations": [],
    "contentHash": None,
    "byteSize": None,
    "decision": "excluded",
    "exclusionReason": "Inside an excluded build directory.",
}


# --------------------------------------------------------------------------------- golden


@pytest.mark.parametrize("model", [ContextManifest, ContextDocument])
def test_golden_body_validates_round_trips_and_keeps_its_digest(
    model: type[ContextManifest] | type[ContextDocument],
) -> None:
    body = golden(model.__name__)
    parsed = model.from_wire(body)
    assert parsed.to_wire() == body
    assert model.from_wire(parsed.to_wire()) == parsed
    assert canonical_sha256(parsed.to_wire()) == canonical_sha256(body)


def test_manifest_dumps_camel_case() -> None:
    wire_form = ContextManifest.from_wire(golden("ContextManifest")).to_wire()
    assert {
        "repositoryFingerprint",
        "excludedCandidateSummaries",
        "derivedRefs",
    } <= wire_form.keys()
    assert "selectionReason" in wire_form["candidates"][0]
    assert "selectedBytes" in wire_form["budget"]


def test_manifest_accepts_excluded_candidates_without_counting_them() -> None:
    body = golden("ContextManifest")
    body["candidates"].append(EXCLUDED)
    manifest = ContextManifest.from_wire(body)
    assert [c.decision for c in manifest.candidates] == ["selected", "selected", "excluded"]


# --------------------------------------------------------------------------------- manifest


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("budget.tokensUsed", 1, "extra_forbidden"),
        ("candidates.0.note", "x", "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("candidates.1.ref", "repo://apps/web/src/api.ts", "context_duplicate_ref"),
        ("budget.selectedBytes", 13264, "context_selected_bytes_mismatch"),
        ("budget.selectedFiles", 3, "context_selected_files_mismatch"),
        ("budget.maximumTotalBytes", 13000, "context_over_byte_budget"),
        (
            "excludedCandidateSummaries.1.reason",
            "excluded_directory",
            "context_duplicate_exclusion_reason",
        ),
        ("excludedCandidateSummaries.0.reason", "too_boring", "literal_error"),
        ("excludedCandidateSummaries.0.count", 0, "greater_than_equal"),
        ("candidates.0.decision", "maybe", "union_tag_invalid"),
        ("candidates.0.contentHash", None, "string_type"),
        ("candidates.0.contentHash", "sha256:ABC", "string_pattern_mismatch"),
        ("candidates.0.score", 10_000_001, "less_than_equal"),
        ("candidates.0.path", "/etc/passwd", "relative_path"),
        ("candidates.0.selectionReason", "", "string_too_short"),
        (
            "repositoryFingerprint.headCommit",
            "5E0C3B7A9F1D2E4C6B8A0F3E5D7C9B1A2E4F6D8C",
            "string_pattern_mismatch",
        ),
        ("repositoryFingerprint.headCommit", "abc123", "string_pattern_mismatch"),
        ("inventorySource", "find", "literal_error"),
        ("budget.maximumFiles", 0, "greater_than_equal"),
        ("warnings", [""], "string_too_short"),
    ],
)
def test_manifest_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        ContextManifest.from_wire(with_change(golden("ContextManifest"), path, value))
    assert error_type(exc) == code


def test_manifest_with_a_duplicate_excluded_ref_is_rejected() -> None:
    body = golden("ContextManifest")
    body["candidates"] += [EXCLUDED, {**EXCLUDED, "id": "candidate-0004"}]
    with pytest.raises(ValidationError) as exc:
        ContextManifest.from_wire(body)
    assert error_type(exc) == "context_duplicate_ref"


def test_manifest_with_more_than_2048_candidates_is_rejected() -> None:
    body = golden("ContextManifest")
    body["candidates"] += [
        {**EXCLUDED, "id": f"x-{n}", "ref": f"repo://dist/{n}.js"} for n in range(2047)
    ]
    with pytest.raises(ValidationError) as exc:
        ContextManifest.from_wire(body)
    assert error_type(exc) == "too_long"


def test_manifest_with_every_exclusion_reason_once_is_accepted() -> None:
    body = golden("ContextManifest")
    body["excludedCandidateSummaries"] = [{"reason": r, "count": 1} for r in EXCLUSION_REASONS]
    assert len(ContextManifest.from_wire(body).excluded_candidate_summaries) == 16


# --------------------------------------------------------------------------------- document


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("repositoryRef", "artifact://run/AGENTS.md", "string_pattern_mismatch"),
        ("trustKind", "trusted", "literal_error"),
        ("sizeBytes", 2_097_153, "less_than_equal"),
        ("sizeBytes", -1, "greater_than_equal"),
        ("contentHash", "sha256:short", "string_pattern_mismatch"),
        ("instructionScope", "/abs", "relative_path"),
        ("content", "é" * 1_048_577, "string_too_many_bytes"),
    ],
)
def test_context_document_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        ContextDocument.from_wire(with_change(golden("ContextDocument"), path, value))
    assert error_type(exc) == code


def test_context_document_may_hold_an_empty_file() -> None:
    body = with_change(with_change(golden("ContextDocument"), "content", ""), "sizeBytes", 0)
    assert ContextDocument.from_wire(body).content == ""


# --------------------------------------------------------------------------------- wire form


def test_wire_manifest_validates_in_snake_case() -> None:
    manifest = ContextManifestWire.from_wire(wire())
    assert manifest.to_wire() == wire()


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("selected_sources.0.contents", "x", "extra_forbidden"),
        ("derived_refs", [], "extra_forbidden"),
        ("schema_version", "2.0", "literal_error"),
        ("selected_sources.0.ref", "artifact://run/api.ts", "string_pattern_mismatch"),
        ("selected_sources.1.ref", "repo://apps/web/src/api.ts", "context_duplicate_ref"),
        ("pinned_refs", ["repo://AGENTS.md", "repo://AGENTS.md"], "context_duplicate_pinned_ref"),
        ("pinned_refs", ["repo://README.md"], "context_pinned_ref_not_selected"),
        ("selected_sources.0.pinned", False, "context_pinned_ref_not_selected"),
        ("excluded_candidates.1.reason", "secret_like_file", "context_duplicate_exclusion_reason"),
        ("excluded_candidates.0.count", 0, "greater_than_equal"),
        ("budget.selected_files", 1, "context_selected_files_mismatch"),
        ("budget.max_files", 1, "context_selected_files_mismatch"),
        ("budget.selected_bytes", 13262, "context_selected_bytes_mismatch"),
        ("budget.max_total_bytes", 13000, "context_over_byte_budget"),
        ("budget.max_file_bytes", 13199, "context_file_over_budget"),
        ("budget.estimated_tokens", 3315, "context_estimated_tokens_mismatch"),
        ("budget.max_files", 257, "less_than_equal"),
        ("budget.max_file_bytes", 2_097_153, "less_than_equal"),
        ("budget.max_total_bytes", 16_777_217, "less_than_equal"),
        ("budget.max_inventory_files", 100_001, "less_than_equal"),
        ("budget.max_inventory_files", 0, "greater_than_equal"),
        ("inventory_source", "find", "literal_error"),
    ],
)
def test_wire_manifest_breaking_a_rule_is_rejected(path: str, value: object, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        ContextManifestWire.from_wire(with_change(wire(), path, value))
    assert error_type(exc) == code


def test_wire_manifest_refuses_camel_case_keys() -> None:
    body = wire()
    body["runId"] = body.pop("run_id")
    with pytest.raises(ValidationError) as exc:
        ContextManifestWire.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}


def test_wire_manifest_may_leave_a_pinned_source_out_of_pinned_refs() -> None:
    body = with_change(wire(), "pinned_refs", ["repo://AGENTS.md"])
    assert ContextManifestWire.from_wire(body).pinned_refs == ["repo://AGENTS.md"]


# --------------------------------------------------------------------------------- normaliser


def test_normaliser_produces_the_canonical_golden_manifest() -> None:
    expected = golden("ContextManifest")
    manifest = normalize_manifest(
        ContextManifestWire.from_wire(wire()), derived_refs=expected["derivedRefs"]
    )
    assert manifest.to_wire() == expected
    assert canonical_sha256(manifest.to_wire()) == canonical_sha256(expected)


def test_normaliser_numbers_candidates_in_ranking_order_and_emits_only_selected_ones() -> None:
    body = wire()
    body["selected_sources"] += [
        {
            "ref": f"repo://src/file{n}.ts",
            "path": f"src/file{n}.ts",
            "reason": "Path token matches a request term.",
            "content_hash": "sha256:" + f"{n:064x}",
            "size_bytes": 10,
            "score": 75,
            "pinned": False,
        }
        for n in range(1, 11)
    ]
    body["budget"].update(selected_files=12, selected_bytes=13363, estimated_tokens=3341)
    manifest = normalize_manifest(ContextManifestWire.from_wire(body), derived_refs=[])
    assert [c.id for c in manifest.candidates] == [f"candidate-{n:04d}" for n in range(1, 13)]
    assert all(isinstance(c, SelectedCandidate) for c in manifest.candidates)
    assert [c.ref for c in manifest.candidates] == [s["ref"] for s in body["selected_sources"]]
    assert manifest.budget.selected_files == 12


def test_normaliser_keeps_exclusions_as_sorted_counts_without_paths() -> None:
    manifest = normalize_manifest(ContextManifestWire.from_wire(wire()), derived_refs=[])
    assert [(s.reason, s.count) for s in manifest.excluded_candidate_summaries] == [
        ("excluded_directory", 412),
        ("secret_like_file", 1),
    ]
    assert all(c.decision == "selected" for c in manifest.candidates)


def test_normaliser_of_an_empty_report_only_manifest_has_no_candidates() -> None:
    body = wire()
    body.update(id="context-report-only-3f9c2a718d4e", pinned_refs=[], selected_sources=[])
    body["budget"].update(candidate_files=0, selected_files=0, selected_bytes=0, estimated_tokens=0)
    body["warnings"] = ["report_only mode intentionally skipped new repository discovery"]
    manifest = normalize_manifest(ContextManifestWire.from_wire(body), derived_refs=[])
    assert manifest.candidates == []
    assert manifest.budget.selected_bytes == 0
    assert manifest.warnings == body["warnings"]


def test_normaliser_rejects_invalid_derived_refs() -> None:
    with pytest.raises(ValidationError) as exc:
        normalize_manifest(ContextManifestWire.from_wire(wire()), derived_refs=["/etc/doc"])
    assert error_type(exc) == "string_pattern_mismatch"


def test_normaliser_cannot_receive_a_pinned_ref_that_is_not_a_pinned_source() -> None:
    body = with_change(wire(), "selected_sources.1.pinned", False)
    with pytest.raises(ValidationError) as exc:
        normalize_manifest(ContextManifestWire.from_wire(body), derived_refs=[])
    assert error_type(exc) == "context_pinned_ref_not_selected"
