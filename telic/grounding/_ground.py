"""``ground_repository``: the async shell around the pure planning and selection core.

The shell resolves the root (its git top level when inside a work tree), lists the repository
(with git status and ``HEAD`` read concurrently), then plans and selects the candidates in one
worker thread, which checks for cancellation and reports progress as it goes. It then
builds the fingerprint, the manifest id, the wire manifest, the documents and the canonical
manifest. report_only mode reads nothing and returns the empty manifest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

import anyio
import anyio.from_thread
import anyio.to_thread

from telic._errors import UsageError
from telic.grounding._batch import PathCollector
from telic.grounding._budget import GroundingBudget, GroundingProgress, check_inputs
from telic.grounding._git import top_level as git_top_level
from telic.grounding._inventory import list_repository
from telic.grounding._manifest import (
    NO_GIT_FINGERPRINT_WARNING,
    build_documents,
    build_wire,
    fingerprint,
    manifest_id,
)
from telic.grounding._plan import Plan, plan_candidates
from telic.grounding._rank import Ranked, Scorer, request_terms
from telic.grounding._read import CandidateReader
from telic.grounding._root import Prepared, prepare, real_directory
from telic.grounding._select import Selection, select
from telic.protocol._canonical import sha256_hex_digest
from telic.protocol._context import (
    ContextDocument,
    ContextManifest,
    ContextManifestWire,
    WireFingerprint,
    normalize_manifest,
)
from telic.protocol._types import Mode

__all__ = ["REPORT_ONLY_WARNING", "GroundingResult", "ground_repository"]

REPORT_ONLY_WARNING: Final = "report_only mode intentionally skipped new repository discovery"
"""The one warning of a report_only manifest."""


Progress = Callable[[GroundingProgress], None]


@dataclass(frozen=True, slots=True)
class GroundingResult:
    """A grounded context: the canonical manifest, its documents and its wire form."""

    manifest: ContextManifest
    """The canonical manifest; ``derivedRefs`` are the documents' ``artifact://`` URIs."""
    documents: tuple[ContextDocument, ...]
    """One document per selected file, in ranking order."""
    wire: ContextManifestWire
    """The snake_case manifest, as the MCP tool returns it."""
    repository_root: Path
    """The real repository root that was grounded (the git top level inside a work tree)."""


def _decide(
    listed: PathCollector,
    prepared: Prepared,
    request: str,
    budget: GroundingBudget,
    progress: Progress | None,
) -> tuple[Plan, Selection]:
    """Plan and select in a worker thread, checking for cancellation as candidates are read."""
    inventoried = listed.listed
    scorer = Scorer(request_terms(request), prepared.active.hints)
    plan = plan_candidates(
        listed,
        added=[*prepared.pinned, *prepared.active.files],
        active=prepared.active.hints,
        excluded_prefixes=prepared.excluded_prefixes,
        max_inventory_files=budget.max_inventory_files,
        scorer=scorer,
    )
    listed.valid.clear()  # the listing is no longer needed; do not hold it next to the plan
    reader = CandidateReader(
        prepared.root, max_file_bytes=budget.max_file_bytes, excluded_roots=prepared.excluded
    )

    def tick(selection: Selection) -> None:
        anyio.from_thread.check_cancelled()
        if progress is not None:
            report = GroundingProgress(
                "selection", inventoried, selection.considered, len(selection.selected)
            )
            anyio.from_thread.run_sync(progress, report)

    def explain(ranked: Ranked) -> str:
        return scorer.explain(ranked.path, instruction=ranked.instruction)

    return plan, select(plan, budget, reader, explain=explain, tick=tick)


def _empty_result(run_id: str, root: str, budget: GroundingBudget) -> GroundingResult:
    state = WireFingerprint(head_commit=None, dirty_worktree_hash=sha256_hex_digest(b""))
    wire = build_wire(
        identifier=f"context-report-only-{run_id[:12]}",
        run_id=run_id,
        state=state,
        selected=(),
        counts={},
        source="filesystem",
        warnings=[REPORT_ONLY_WARNING],
        budget=budget,
        candidate_files=0,
    )
    manifest = normalize_manifest(wire, derived_refs=())
    return GroundingResult(manifest, (), wire, Path(root))


async def ground_repository(
    *,
    run_id: str,
    original_request: str,
    repository_root: str | Path,
    mode: Mode,
    active_paths: Sequence[str] = (),
    budget: GroundingBudget | None = None,
    excluded_roots: Sequence[str | Path] = (),
    progress: Progress | None = None,
) -> GroundingResult:
    """Ground a run in its repository: select the files its roles may rely on (reference §4).

    Raises:
        UsageError: an argument is invalid (named in the message).
        ContextSecurityError: an active path escapes the repository, lexically or by symlink.
    """
    check_inputs(
        run_id=run_id,
        original_request=original_request,
        repository_root=repository_root,
        active_paths=active_paths,
        excluded_roots=excluded_roots,
    )
    if mode not in get_args(Mode):
        raise UsageError(f"mode must be one of {', '.join(get_args(Mode))}")
    if budget is None:
        budget = GroundingBudget()
    elif not isinstance(budget, GroundingBudget):
        raise UsageError("budget must be a GroundingBudget")
    given, root = await anyio.to_thread.run_sync(real_directory, os.fspath(repository_root))
    if mode == "report_only":
        return _empty_result(run_id, root, budget)
    top_level = await git_top_level(root)
    excluded = [os.fspath(path) for path in excluded_roots]
    prepared = await anyio.to_thread.run_sync(
        prepare, root, top_level, given, list(active_paths), excluded
    )
    inventory = await list_repository(
        prepared.root,
        is_git=top_level is not None,
        limit=budget.max_inventory_files,
        excluded_roots=prepared.excluded,
    )
    listed = inventory.paths.listed
    if progress is not None:
        progress(GroundingProgress("inventory", listed, 0, 0))
    plan, selection = await anyio.to_thread.run_sync(
        _decide, inventory.paths, prepared, original_request, budget, progress
    )
    warnings = [*inventory.warnings]
    if plan.truncated:
        warnings.append(
            f"The inventory was truncated to {budget.max_inventory_files:,} files;"
            f" {plan.truncated:,} more were not considered"
        )
    warnings.extend(selection.warnings)
    if inventory.status is None:
        warnings.append(NO_GIT_FINGERPRINT_WARNING)
    state = fingerprint(
        head=inventory.head,
        status=None if inventory.status is None else inventory.status.digest_with,
        read_hashes=selection.read_hashes,
        listed=plan.inventory,
    )
    identifier = manifest_id(run_id, state, selection.selected, budget)
    wire = build_wire(
        identifier=identifier,
        run_id=run_id,
        state=state,
        selected=selection.selected,
        counts=selection.counts,
        source=inventory.source,
        warnings=warnings,
        budget=budget,
        candidate_files=plan.candidate_files,
    )
    documents = build_documents(identifier, run_id, selection.selected)
    manifest = normalize_manifest(
        wire, derived_refs=[f"artifact://{run_id}/{document.id}" for document in documents]
    )
    if progress is not None:
        progress(GroundingProgress("done", listed, selection.considered, len(documents)))
    return GroundingResult(manifest, documents, wire, Path(prepared.root))
