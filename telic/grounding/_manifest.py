"""The fingerprint, the manifest id, the wire manifest and the documents (docs/protocol.md §4
11–12).

Pure functions over what the shell gathered. The wire manifest lists only selected sources and
reduces every exclusion to a ``{reason, count}`` entry, so no excluded path is ever emitted.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from telic.grounding._budget import GroundingBudget
from telic.grounding._paths import instruction_scope, repository_ref
from telic.grounding._select import Selected
from telic.protocol import (
    EXCLUSION_REASONS,
    SHA256_PREFIX,
    ContextDocument,
    ContextManifestWire,
    ExcludedCandidateSummary,
    InventorySource,
    SelectedSource,
    WireBudget,
    WireFingerprint,
    canonical_sha256,
    sha256_hex_digest,
)

NO_GIT_FINGERPRINT_WARNING: Final = (
    "Git status was unavailable; the repository fingerprint covers only the listed paths and"
    " the files read"
)
_HEAD: Final = re.compile(r"[0-9a-f]{40,64}")


def fingerprint(
    *,
    head: str | None,
    status: Callable[[bytes], str] | None,
    read_hashes: Mapping[str, str],
    listed: Iterable[str],
) -> WireFingerprint:
    """Return the repository fingerprint.

    With git status: sha256 of the ``status --porcelain=v1 -z`` output followed by the
    NUL-joined, path-sorted ``path\\0hash`` list of every file read (``status`` digests the
    output with that tail). Without it: sha256 of the sorted ``path\\0hash-or-"unread"`` list
    of every listed path.
    """
    if status is not None:
        entries = sorted(read_hashes.items())
        tail = "\0".join(f"{path}\0{digest}" for path, digest in entries)
        digest = status(tail.encode("utf-8"))
    else:
        rows = (f"{path}\0{read_hashes.get(path, 'unread')}" for path in sorted(set(listed)))
        digest = sha256_hex_digest("\0".join(rows).encode())
    commit = head if head is not None and _HEAD.fullmatch(head) else None
    return WireFingerprint(head_commit=commit, dirty_worktree_hash=digest)


def manifest_id(
    run_id: str, state: WireFingerprint, selected: Sequence[Selected], budget: GroundingBudget
) -> str:
    """Return ``context-`` + 16 hex of the sha256 over the run, fingerprint, sources, budget."""
    projection = {
        "run_id": run_id,
        "fingerprint": state.model_dump(mode="json"),
        "selected": [
            {"ref": repository_ref(item.ranked.path), "content_hash": item.content_hash}
            for item in selected
        ],
        "budget": dataclasses.asdict(budget),
    }
    return "context-" + canonical_sha256(projection).removeprefix(SHA256_PREFIX)[:16]


def build_wire(
    *,
    identifier: str,
    run_id: str,
    state: WireFingerprint,
    selected: Sequence[Selected],
    counts: Mapping[str, int],
    source: InventorySource,
    warnings: Sequence[str],
    budget: GroundingBudget,
    candidate_files: int,
) -> ContextManifestWire:
    """Return the snake_case manifest of a grounding."""
    sources = [
        SelectedSource(
            ref=repository_ref(item.ranked.path),
            path=item.ranked.path,
            reason=item.reason,
            content_hash=item.content_hash,
            size_bytes=item.size,
            score=item.ranked.score,
            pinned=item.ranked.pinned,
        )
        for item in selected
    ]
    selected_bytes = sum(item.size for item in selected)
    return ContextManifestWire(
        schema_version="1.0",
        id=identifier,
        run_id=run_id,
        repository_fingerprint=state,
        pinned_refs=[source.ref for source in sources if source.pinned],
        selected_sources=sources,
        excluded_candidates=[
            ExcludedCandidateSummary(reason=reason, count=counts[reason])
            for reason in sorted(EXCLUSION_REASONS)
            if counts.get(reason, 0) > 0
        ],
        inventory_source=source,
        warnings=list(dict.fromkeys(warnings)),
        budget=WireBudget(
            **dataclasses.asdict(budget),
            candidate_files=candidate_files,
            selected_files=len(sources),
            selected_bytes=selected_bytes,
            estimated_tokens=math.ceil(selected_bytes / 4),
        ),
    )


def build_documents(
    identifier: str, run_id: str, selected: Sequence[Selected]
) -> tuple[ContextDocument, ...]:
    """Return one ContextDocument per selected file, numbered in ranking order."""
    return tuple(
        ContextDocument(
            schema_version="1.0",
            id=f"{identifier}-source-{number:03d}-{item.content_hash.removeprefix('sha256:')[:13]}",
            run_id=run_id,
            repository_ref=repository_ref(item.ranked.path),
            content_hash=item.content_hash,
            size_bytes=item.size,
            trust_kind=(
                "applicable_instruction"
                if item.ranked.instruction
                else "untrusted_repository_content"
            ),
            instruction_scope=instruction_scope(item.ranked.path)
            if item.ranked.instruction
            else ".",
            content=item.text,
        )
        for number, item in enumerate(selected, start=1)
    )
