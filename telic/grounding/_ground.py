"""``ground_repository``: the shell around the pure planning and selection core.

Everything but report_only (which reads nothing) runs in one worker thread started by anyio.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

import anyio.from_thread
import anyio.to_thread

from telic._errors import ContextSecurityError, TelicError, UsageError
from telic.grounding._batch import PathCollector
from telic.grounding._budget import GroundingBudget, GroundingProgress, check_inputs
from telic.grounding._git import GitReader, GitState, read_git
from telic.grounding._inventory import SOURCE_WARNINGS, list_repository
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
from telic.grounding._root import Prepared, git_root, prepare, real_directory
from telic.grounding._select import Selection, select
from telic.protocol import (
    ContextDocument,
    ContextManifest,
    ContextManifestWire,
    InventorySource,
    Mode,
    WireFingerprint,
    normalize_manifest,
    sha256_hex_digest,
)

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


@dataclass(frozen=True, slots=True)
class _Request:
    """What one grounding was asked, as the worker thread needs it."""

    run_id: str
    text: str
    root: str
    active: tuple[str, ...]
    excluded: tuple[str, ...]
    budget: GroundingBudget
    progress: Progress | None


def _report(progress: Progress | None, report: GroundingProgress) -> None:
    if progress is not None:
        anyio.from_thread.run_sync(progress, report)


def _survey(root: str, given: str, request: _Request) -> tuple[GitState, Prepared]:
    """Run git in ``root`` while preparing ``root`` as the repository root.

    Most roots are their own top level, so both are usually final. Otherwise both are done
    again at the top level git names, and a refusal of an active path at ``root`` does not
    count: the path is judged again against the top level.
    """
    with GitReader(root) as reader:
        try:
            prepared: Prepared | TelicError = prepare(root, given, request.active, request.excluded)
        except (ContextSecurityError, UsageError) as refused:
            prepared = refused
        git = reader.result()
    top = root
    if git.top_level is not None and git.top_level != root:
        top = git_root(root, git.top_level)
    if top != root:
        return read_git(top), prepare(top, given, request.active, request.excluded)
    if isinstance(prepared, TelicError):
        raise prepared
    return git, prepared


def _decide(
    listed: PathCollector, prepared: Prepared, request: _Request, *, by_git: bool
) -> tuple[Plan, Selection]:
    """Plan and select, checking for cancellation as candidates are read.

    ``by_git``: git listed the inventory, so only what it lists (tracked, or untracked and not
    ignored) is read, whether named as an active path or reached through a symlink; the pinned
    instruction files are the one exception.
    """
    inventoried = listed.listed
    budget = request.budget
    scorer = Scorer(request_terms(request.text), prepared.active.hints)
    plan = plan_candidates(
        listed,
        added=[*prepared.pinned, *prepared.active.files],
        active=prepared.active.hints,
        excluded_prefixes=prepared.excluded_prefixes,
        max_inventory_files=budget.max_inventory_files,
        scorer=scorer,
        # Pinned instruction files count whenever they exist (protocol §4 item 6), ignored or
        # not; an active path only when git lists it.
        listed_only=[p for p in prepared.active.files if p not in prepared.pinned]
        if by_git
        else (),
    )
    listed.valid.clear()  # the listing is no longer needed; do not hold it next to the plan
    members: frozenset[str] | None = None

    def is_listed(path: str) -> bool:
        # Built once, on the first symlink: most groundings never meet one.
        nonlocal members
        if members is None:
            members = frozenset(plan.inventory)
        return path in members

    reader = CandidateReader(
        prepared.root,
        max_file_bytes=budget.max_file_bytes,
        excluded_roots=prepared.excluded,
        listed=is_listed if by_git else None,
    )

    def tick(selection: Selection) -> None:
        anyio.from_thread.check_cancelled()
        report = GroundingProgress(
            "selection", inventoried, selection.considered, len(selection.selected)
        )
        _report(request.progress, report)

    def explain(ranked: Ranked) -> str:
        return scorer.explain(ranked.path, instruction=ranked.instruction)

    return plan, select(plan, budget, reader, explain=explain, tick=tick)


def _manifest(
    request: _Request,
    root: str,
    git: GitState,
    source: InventorySource,
    plan: Plan,
    selection: Selection,
) -> GroundingResult:
    """Build the fingerprint, the manifest id, the wire and canonical manifests, the documents."""
    run_id, budget = request.run_id, request.budget
    warnings = [SOURCE_WARNINGS[source]] if source in SOURCE_WARNINGS else []
    if plan.truncated:
        warnings.append(
            f"The inventory was truncated to {budget.max_inventory_files:,} files;"
            f" {plan.truncated:,} more were not considered"
        )
    warnings.extend(selection.warnings)
    if git.status is None:
        warnings.append(NO_GIT_FINGERPRINT_WARNING)
    state = fingerprint(
        head=git.head,
        status=None if git.status is None else git.status.digest_with,
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
        source=source,
        warnings=warnings,
        budget=budget,
        candidate_files=plan.candidate_files,
    )
    documents = build_documents(identifier, run_id, selection.selected)
    manifest = normalize_manifest(
        wire, derived_refs=[f"artifact://{run_id}/{document.id}" for document in documents]
    )
    return GroundingResult(manifest, documents, wire, Path(root))


def _ground(request: _Request) -> tuple[GroundingResult, GroundingProgress]:
    """Ground a repository (blocking; for one worker thread started by anyio).

    Returns the result and its "done" report, which the caller makes back in the event loop.
    """
    given, root = real_directory(request.root)
    git, prepared = _survey(root, given, request)
    source, listed = list_repository(
        prepared.root,
        git=git.paths,
        limit=request.budget.max_inventory_files,
        excluded_roots=prepared.excluded,
    )
    files = listed.listed  # counted before _decide drops the listing
    _report(request.progress, GroundingProgress("inventory", files, 0, 0))
    plan, selection = _decide(listed, prepared, request, by_git=source == "git")
    result = _manifest(request, prepared.root, git, source, plan, selection)
    return result, GroundingProgress("done", files, selection.considered, len(result.documents))


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


def _budget(given: GroundingBudget | Mapping[str, int] | None) -> GroundingBudget:
    if given is None:
        return GroundingBudget()
    if isinstance(given, GroundingBudget):
        return given
    if not isinstance(given, Mapping):
        raise UsageError("budget must be a GroundingBudget or a mapping of its fields")
    known = {field.name for field in dataclasses.fields(GroundingBudget)}
    unknown = sorted(str(key) for key in given if key not in known)
    if unknown:
        raise UsageError(
            f"budget has no field {unknown[0]!r}; its fields are {', '.join(sorted(known))}"
        )
    return GroundingBudget(**given)


async def ground_repository(
    *,
    run_id: str,
    original_request: str,
    repository_root: str | Path,
    mode: Mode,
    active_paths: Sequence[str] = (),
    budget: GroundingBudget | Mapping[str, int] | None = None,
    excluded_roots: Sequence[str | Path] = (),
    progress: Progress | None = None,
) -> GroundingResult:
    """Ground a run in its repository: select the files its roles may rely on (docs/protocol.md §4).

    ``budget`` is a ``GroundingBudget`` or a mapping of some of its fields (``max_files``, …),
    as ``telic_ground_context`` passes the limits a host set; the others keep their defaults.

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
    budget = _budget(budget)
    if mode == "report_only":
        _, root = await anyio.to_thread.run_sync(real_directory, os.fspath(repository_root))
        return _empty_result(run_id, root, budget)
    request = _Request(
        run_id=run_id,
        text=original_request,
        root=os.fspath(repository_root),
        active=tuple(active_paths),
        excluded=tuple(os.fspath(path) for path in excluded_roots),
        budget=budget,
        progress=progress,
    )
    result, done = await anyio.to_thread.run_sync(_ground, request)
    if progress is not None:
        progress(done)
    return result
