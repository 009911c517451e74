"""Grounded repository context: documents, the manifest, and its wire form (docs/protocol.md
§3.1, §4).

Grounding produces a snake_case ``ContextManifestWire`` listing only the selected sources, with
exclusions reduced to per-reason counts so that paths of secret-like files never leak.
``normalize_manifest`` turns it into the canonical camelCase ``ContextManifest`` the ledger
stores. Each selected file is also stored once as an internal ``ContextDocument``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Final, Literal, get_args

from pydantic import ConfigDict, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    Identifier,
    Items,
    ReferenceUri,
    RelativePath,
    RepositoryUri,
    Sha256,
    Summary,
    unique,
    utf8_at_most,
)

MAX_CANDIDATES: Final = 2_048
"""Most candidates one canonical manifest may list."""
MAX_SELECTED_FILES: Final = 256
"""Hard cap of the files one grounding selects."""
MAX_FILE_BYTES: Final = 2_097_152
"""Hard cap of one grounded file (2 MiB)."""
MAX_TOTAL_BYTES: Final = 16_777_216
"""Hard cap of all grounded files together (16 MiB)."""
MAX_INVENTORY_FILES: Final = 100_000
"""Hard cap of the inventory size."""
MAX_COUNT: Final = 10_000_000
MAX_BYTES: Final = 100_000_000
MAX_SCORE: Final = 10_000_000

_HEAD_COMMIT_PATTERN: Final = r"^[a-f0-9]{40,64}$"

HeadCommit = Annotated[str, StringConstraints(pattern=_HEAD_COMMIT_PATTERN)]
"""A git commit id: 40–64 lowercase hex."""

Location = Annotated[str, StringConstraints(min_length=1, max_length=1_024)]
"""A place inside a file, such as a symbol name."""

_FileSize = Annotated[int, Field(ge=0, le=MAX_FILE_BYTES)]
_ByteSize = Annotated[int, Field(ge=0, le=MAX_BYTES)]
_Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
_RelevanceScore = Annotated[int, Field(ge=0, le=MAX_SCORE)]

ExclusionReason = Literal[
    "binary_file",
    "duplicate_content",
    "excluded_directory",
    "file_count_budget",
    "file_too_large",
    "inventory_budget",
    "invalid_path",
    "invalid_utf8",
    "low_relevance",
    "non_regular_file",
    "path_escape",
    "secret_content",
    "secret_like_file",
    "symlink_escape",
    "total_bytes_budget",
    "unreadable_file",
]
EXCLUSION_REASONS: Final[tuple[ExclusionReason, ...]] = get_args(ExclusionReason)

InventorySource = Literal["git", "ripgrep", "filesystem"]
TrustKind = Literal["applicable_instruction", "untrusted_repository_content"]


# ----------------------------------------------------------------------------- ContextDocument


class ContextDocument(ArtifactBody):
    """One grounded repository file, stored once with its exact text (internal)."""

    id: Identifier
    """``<manifestId>-source-NNN-<13 hex of the content hash>``."""
    run_id: Identifier
    """Id of the run it belongs to."""
    repository_ref: RepositoryUri
    """The ``repo://`` reference of the file."""
    content_hash: Sha256
    """sha256 of the file's raw bytes."""
    size_bytes: _FileSize
    """Size of the raw bytes."""
    trust_kind: TrustKind
    """Whether the file is an applicable instruction or untrusted content."""
    instruction_scope: RelativePath
    """Directory an instruction file governs, or "."."""
    content: Annotated[
        str, StringConstraints(max_length=MAX_FILE_BYTES), utf8_at_most(MAX_FILE_BYTES)
    ]
    """The file's text, decoded as strict UTF-8; never rewritten."""


# ----------------------------------------------------------------------------- canonical form


class RepositoryFingerprint(WireModel):
    """The repository state the context was read from."""

    head_commit: HeadCommit | None
    """``HEAD`` commit id, or null outside git."""
    dirty_worktree_hash: Sha256
    """Digest of the working-tree changes and of every file read."""


class SelectedCandidate(WireModel):
    """A file chosen as context."""

    id: Identifier
    """Candidate id, ``candidate-0001`` onwards."""
    ref: ReferenceUri
    """Reference to the file."""
    locations: Items[Location]
    """Places in the file that matter, if known."""
    content_hash: Sha256
    """sha256 of the file's raw bytes."""
    byte_size: _ByteSize
    """Size of the raw bytes."""
    decision: Literal["selected"]
    """Always "selected"."""
    selection_reason: Summary
    """Why the file was chosen."""
    path: RelativePath
    """Repository-relative path."""
    score: _RelevanceScore
    """Deterministic relevance score."""
    pinned: bool
    """Whether the file is always included (instruction or active path)."""


class ExcludedCandidate(WireModel):
    """A file considered and left out."""

    id: Identifier
    """Candidate id."""
    ref: ReferenceUri
    """Reference to the file."""
    locations: Items[Location]
    """Places in the file that matter, if known."""
    content_hash: Sha256 | None
    """sha256 of the raw bytes, or null when not read."""
    byte_size: _ByteSize | None
    """Size of the raw bytes, or null when not read."""
    decision: Literal["excluded"]
    """Always "excluded"."""
    exclusion_reason: Summary
    """Why the file was left out."""


ContextCandidate = Annotated[SelectedCandidate | ExcludedCandidate, Field(discriminator="decision")]
"""A manifest candidate, told apart by ``decision``."""


class ExcludedCandidateSummary(WireModel):
    """How many candidates were excluded for one reason."""

    reason: ExclusionReason
    """The exclusion reason."""
    count: Annotated[int, Field(ge=1, le=MAX_COUNT)]
    """How many candidates it excluded."""


class ContextBudget(WireModel):
    """The grounding budget and what was used of it."""

    maximum_files: Annotated[int, Field(ge=1, le=100_000)]
    """Most files that may be selected."""
    maximum_file_bytes: Annotated[int, Field(ge=1, le=MAX_BYTES)]
    """Largest file that may be selected."""
    maximum_total_bytes: Annotated[int, Field(ge=1, le=MAX_BYTES)]
    """Most bytes all selected files may hold."""
    maximum_inventory_files: Annotated[int, Field(ge=1, le=MAX_COUNT)]
    """Most files the inventory may list."""
    candidate_files: _Count
    """Files discovered before truncation."""
    selected_files: Annotated[int, Field(ge=0, le=100_000)]
    """Files selected."""
    estimated_tokens: _Count
    """Rough token count of the selected files."""
    selected_bytes: _ByteSize
    """Bytes of the selected files."""

    @model_validator(mode="after")
    def _within_byte_budget(self) -> ContextBudget:
        if self.selected_bytes > self.maximum_total_bytes:
            raise PydanticCustomError(
                "context_over_byte_budget", "Selected context exceeds its byte budget"
            )
        return self


class ContextManifest(ArtifactBody):
    """The canonical record of which repository context a run may use, and why."""

    id: Identifier
    """Manifest id, ``context-<16 hex>``."""
    run_id: Identifier
    """Id of the run it belongs to."""
    repository_fingerprint: RepositoryFingerprint
    """The repository state the context was read from."""
    pinned_refs: Items[ReferenceUri]
    """References always included in context."""
    candidates: Annotated[list[ContextCandidate], Field(max_length=MAX_CANDIDATES)]
    """Candidates, each selected or excluded."""
    derived_refs: Items[ReferenceUri]
    """Stored ContextDocuments derived from the selected files."""
    excluded_candidate_summaries: Annotated[
        list[ExcludedCandidateSummary], Field(max_length=len(EXCLUSION_REASONS))
    ]
    """Exclusion counts, at most one entry per reason."""
    inventory_source: InventorySource
    """How the repository was listed."""
    warnings: Items[Summary]
    """What grounding wants the host to know."""
    budget: ContextBudget
    """The grounding budget and its use."""

    @model_validator(mode="after")
    def _consistent(self) -> ContextManifest:
        if not unique([candidate.ref for candidate in self.candidates]):
            raise PydanticCustomError(
                "context_duplicate_ref", "Context candidate references must be unique"
            )
        selected = [c for c in self.candidates if isinstance(c, SelectedCandidate)]
        if self.budget.selected_bytes != sum(c.byte_size for c in selected):
            raise PydanticCustomError(
                "context_selected_bytes_mismatch",
                "budget.selectedBytes must equal the byteSize sum of selected candidates",
            )
        if self.budget.selected_files != len(selected):
            raise PydanticCustomError(
                "context_selected_files_mismatch",
                "budget.selectedFiles must equal the number of selected candidates",
            )
        if not unique([summary.reason for summary in self.excluded_candidate_summaries]):
            raise PydanticCustomError(
                "context_duplicate_exclusion_reason",
                "Each exclusion reason may appear at most once",
            )
        return self


# ----------------------------------------------------------------------------- wire form


class _SnakeWire(WireModel):
    """Base of the grounding wire form: snake_case keys, otherwise as strict as every body."""

    model_config = ConfigDict(alias_generator=None)


class WireFingerprint(_SnakeWire):
    """The repository state, in snake_case."""

    head_commit: HeadCommit | None
    """``HEAD`` commit id, or null outside git."""
    dirty_worktree_hash: Sha256
    """Digest of the working-tree changes and of every file read."""


class SelectedSource(_SnakeWire):
    """A selected file as grounding reports it."""

    ref: RepositoryUri
    """The file's ``repo://`` reference."""
    path: RelativePath
    """Repository-relative path."""
    reason: Summary
    """Why the file was chosen."""
    content_hash: Sha256
    """sha256 of the file's raw bytes."""
    size_bytes: _FileSize
    """Size of the raw bytes."""
    score: _RelevanceScore
    """Deterministic relevance score."""
    pinned: bool
    """Whether the file is always included."""


class WireBudget(_SnakeWire):
    """The grounding budget (within the hard caps) and its use, in snake_case."""

    max_files: Annotated[int, Field(ge=1, le=MAX_SELECTED_FILES)]
    """Most files that may be selected (1–256)."""
    max_file_bytes: Annotated[int, Field(ge=1, le=MAX_FILE_BYTES)]
    """Largest file that may be selected (1 B–2 MiB)."""
    max_total_bytes: Annotated[int, Field(ge=1, le=MAX_TOTAL_BYTES)]
    """Most bytes all selected files may hold (1 B–16 MiB)."""
    max_inventory_files: Annotated[int, Field(ge=1, le=MAX_INVENTORY_FILES)]
    """Most files the inventory may list (1–100,000)."""
    candidate_files: _Count
    """Files discovered before truncation."""
    selected_files: Annotated[int, Field(ge=0, le=MAX_SELECTED_FILES)]
    """Files selected."""
    selected_bytes: Annotated[int, Field(ge=0, le=MAX_TOTAL_BYTES)]
    """Bytes of the selected files."""
    estimated_tokens: _Count
    """``ceil(selected_bytes / 4)``."""


class ContextManifestWire(_SnakeWire):
    """The snake_case manifest grounding produces; only selected sources are listed."""

    schema_version: Literal["1.0"]
    """Protocol version; always "1.0"."""
    id: Identifier
    """Manifest id."""
    run_id: Identifier
    """Id of the run it belongs to."""
    repository_fingerprint: WireFingerprint
    """The repository state the context was read from."""
    pinned_refs: Items[RepositoryUri]
    """References of the pinned selected sources."""
    selected_sources: Items[SelectedSource]
    """The selected files, in ranking order."""
    excluded_candidates: Annotated[
        list[ExcludedCandidateSummary], Field(max_length=len(EXCLUSION_REASONS))
    ]
    """Exclusion counts, at most one entry per reason (their keys are one word, alike in both
    cases)."""
    inventory_source: InventorySource
    """How the repository was listed."""
    warnings: Items[Summary]
    """What grounding wants the host to know."""
    budget: WireBudget
    """The grounding budget and its use."""

    @model_validator(mode="after")
    def _consistent(self) -> ContextManifestWire:
        sources = self.selected_sources
        if not unique([source.ref for source in sources]):
            raise PydanticCustomError(
                "context_duplicate_ref", "Selected source references must be unique"
            )
        if not unique(self.pinned_refs):
            raise PydanticCustomError("context_duplicate_pinned_ref", "Pinned refs must be unique")
        pinned_sources = {source.ref for source in sources if source.pinned}
        if any(ref not in pinned_sources for ref in self.pinned_refs):
            raise PydanticCustomError(
                "context_pinned_ref_not_selected",
                "Every pinned ref must be a pinned selected source",
            )
        if not unique([entry.reason for entry in self.excluded_candidates]):
            raise PydanticCustomError(
                "context_duplicate_exclusion_reason",
                "Each exclusion reason may appear at most once",
            )
        budget = self.budget
        if budget.selected_files != len(sources) or budget.selected_files > budget.max_files:
            raise PydanticCustomError(
                "context_selected_files_mismatch",
                "budget.selected_files must equal the selected sources and fit max_files",
            )
        if budget.selected_bytes != sum(source.size_bytes for source in sources):
            raise PydanticCustomError(
                "context_selected_bytes_mismatch",
                "budget.selected_bytes must equal the size_bytes sum of selected sources",
            )
        if budget.selected_bytes > budget.max_total_bytes:
            raise PydanticCustomError(
                "context_over_byte_budget", "Selected context exceeds its byte budget"
            )
        if any(source.size_bytes > budget.max_file_bytes for source in sources):
            raise PydanticCustomError(
                "context_file_over_budget", "A selected source exceeds max_file_bytes"
            )
        if budget.estimated_tokens != math.ceil(budget.selected_bytes / 4):
            raise PydanticCustomError(
                "context_estimated_tokens_mismatch",
                "budget.estimated_tokens must equal ceil(selected_bytes / 4)",
            )
        return self


# ----------------------------------------------------------------------------- normaliser


def normalize_manifest(
    wire: ContextManifestWire, *, derived_refs: Sequence[str]
) -> ContextManifest:
    """Return the canonical manifest for a validated wire manifest.

    Selected sources become candidates ``candidate-0001``… in their ranking order; exclusions
    stay counts (sorted by reason), so no excluded path is ever emitted. ``derived_refs`` are the
    URIs of the ContextDocuments stored for the selected files.

    Raises:
        pydantic.ValidationError: if ``derived_refs`` are not valid references or too many.
    """
    candidates: list[ContextCandidate] = [
        SelectedCandidate(
            id=f"candidate-{number:04d}",
            ref=source.ref,
            locations=[],
            content_hash=source.content_hash,
            byte_size=source.size_bytes,
            decision="selected",
            selection_reason=source.reason,
            path=source.path,
            score=source.score,
            pinned=source.pinned,
        )
        for number, source in enumerate(wire.selected_sources, start=1)
    ]
    budget = wire.budget
    return ContextManifest(
        schema_version="1.0",
        id=wire.id,
        run_id=wire.run_id,
        repository_fingerprint=RepositoryFingerprint(
            head_commit=wire.repository_fingerprint.head_commit,
            dirty_worktree_hash=wire.repository_fingerprint.dirty_worktree_hash,
        ),
        pinned_refs=list(wire.pinned_refs),
        candidates=candidates,
        derived_refs=list(derived_refs),
        excluded_candidate_summaries=sorted(
            wire.excluded_candidates, key=lambda entry: entry.reason
        ),
        inventory_source=wire.inventory_source,
        warnings=list(wire.warnings),
        budget=ContextBudget(
            maximum_files=budget.max_files,
            maximum_file_bytes=budget.max_file_bytes,
            maximum_total_bytes=budget.max_total_bytes,
            maximum_inventory_files=budget.max_inventory_files,
            candidate_files=budget.candidate_files,
            selected_files=budget.selected_files,
            estimated_tokens=budget.estimated_tokens,
            selected_bytes=budget.selected_bytes,
        ),
    )
