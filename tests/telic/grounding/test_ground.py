"""ground_repository on real git repositories: the manifest, documents, ranking and pinning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from telic._errors import ContextSecurityError
from telic.grounding import GroundingBudget, GroundingProgress, ground_repository
from telic.protocol import ContextDocument, ContextManifest, normalize_manifest

from .repos import exclusions, git, make_repo, selected_paths

pytestmark = pytest.mark.anyio

FILES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\nRun the tests.\n",
    "README.md": "# Demo\n",
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "apps/web/src/api.ts": "export const api = 1;\n",
    "apps/web/src/rapid.ts": "export const rapid = 2;\n",
    "apps/web/AGENTS.md": "# Web agents\n",
    "docs/guide.md": "A guide.\n",
    ".cursor/rules/style.mdc": "Use tabs.\n",
}
REQUEST = "Investigate the apps/web API client returning stale data"


async def _ground(root: Path, **kwargs: object) -> object:
    return await ground_repository(
        run_id="run-1234567890abcdef",
        original_request=str(kwargs.pop("request", REQUEST)),
        repository_root=root,
        mode="analyze_only",
        **kwargs,  # type: ignore[arg-type]
    )


async def test_the_result_is_valid_canonical_wire_and_documents(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await ground_repository(
        run_id="run-1234567890abcdef",
        original_request=REQUEST,
        repository_root=repo,
        mode="analyze_only",
        active_paths=["apps/web/src/api.ts"],
    )
    manifest, wire = result.manifest, result.wire
    assert ContextManifest.from_wire(manifest.to_wire()) == manifest
    assert normalize_manifest(wire, derived_refs=manifest.derived_refs) == manifest
    for document in result.documents:
        assert ContextDocument.from_wire(document.to_wire()) == document
    assert manifest.id.startswith("context-")
    assert len(manifest.id) == len("context-") + 16
    assert wire.inventory_source == "git"
    assert wire.repository_fingerprint.head_commit == git(repo, "rev-parse", "HEAD").strip()
    assert manifest.derived_refs == [
        f"artifact://run-1234567890abcdef/{document.id}" for document in result.documents
    ]
    assert result.repository_root == repo.resolve()
    first = wire.selected_sources[0]
    assert (first.path, first.score, first.pinned) == ("apps/web/src/api.ts", 1_050_400, True)
    assert first.ref == "repo://apps/web/src/api.ts"
    assert wire.pinned_refs == [s.ref for s in wire.selected_sources if s.pinned]
    assert len(wire.pinned_refs) == 4  # the active path and three instruction files
    assert wire.budget.estimated_tokens == -(-wire.budget.selected_bytes // 4)


async def test_documents_carry_trust_kind_scope_and_content(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo)
    documents = {doc.repository_ref.removeprefix("repo://"): doc for doc in result.documents}
    assert documents["AGENTS.md"].trust_kind == "applicable_instruction"
    assert documents["AGENTS.md"].instruction_scope == "."
    assert documents["apps/web/AGENTS.md"].instruction_scope == "apps/web"
    assert documents[".cursor/rules/style.mdc"].trust_kind == "applicable_instruction"
    assert documents["apps/web/src/api.ts"].trust_kind == "untrusted_repository_content"
    assert documents["apps/web/src/api.ts"].instruction_scope == "."
    assert documents["docs/guide.md"].content == "A guide.\n"
    for number, document in enumerate(result.documents, start=1):
        digest = document.content_hash.removeprefix("sha256:")
        assert document.id == f"{result.manifest.id}-source-{number:03d}-{digest[:13]}"


async def test_api_does_not_match_rapid(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo)
    scores = {source.path: source.score for source in result.wire.selected_sources}
    assert scores["apps/web/src/api.ts"] == 400
    assert scores["apps/web/src/rapid.ts"] == 150  # apps + web, but not api


async def test_pinned_files_survive_inventory_truncation(tmp_path: Path) -> None:
    files = {f"src/m{n:03d}.py": f"x = {n}\n" for n in range(40)}
    files |= {
        "CLAUDE.md": "c\n",
        "zz/deep/AGENTS.md": "a\n",
        ".github/copilot-instructions.md": "g\n",
    }
    files |= {".gitignore": "GEMINI.md\n", "GEMINI.md": "ignored by git, pinned anyway\n"}
    repo = make_repo(tmp_path / "repo", files)
    result = await _ground(repo, budget=GroundingBudget(max_inventory_files=5))
    assert selected_paths(result)[:4] == [
        ".github/copilot-instructions.md",
        "CLAUDE.md",
        "GEMINI.md",
        "zz/deep/AGENTS.md",
    ]
    assert exclusions(result)["inventory_budget"] == 45 - 5
    assert any("truncated to 5 files" in warning for warning in result.wire.warnings)


async def test_the_zero_relevance_fallback_is_capped_at_eight(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"misc/f{n:02d}.txt": f"{n}\n" for n in range(12)})
    result = await _ground(repo, request="Anything at all")
    assert selected_paths(result) == [f"misc/f{n:02d}.txt" for n in range(8)]
    assert exclusions(result) == {"low_relevance": 4}
    assert "Unpinned zero-relevance context was capped at 8 files" in result.wire.warnings


async def test_the_same_tree_grounds_to_the_same_manifest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    first, again, copied = [await _ground(root) for root in (repo, repo, copy)]
    assert first.manifest == again.manifest == copied.manifest
    assert first.documents == copied.documents
    assert selected_paths(first) == selected_paths(copied)


async def test_a_change_in_the_tree_changes_the_manifest_id(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    before = await _ground(repo)
    (repo / "docs" / "guide.md").write_text("A changed guide.\n", encoding="utf-8")
    after = await _ground(repo)
    assert before.manifest.id != after.manifest.id
    fingerprint = after.wire.repository_fingerprint
    assert fingerprint.dirty_worktree_hash != before.wire.repository_fingerprint.dirty_worktree_hash


async def test_a_nested_directory_grounds_the_git_top_level(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo / "apps" / "web" / "src")
    assert result.repository_root == repo.resolve()
    assert "AGENTS.md" in selected_paths(result)


async def test_from_a_nested_directory_active_paths_are_judged_against_the_top_level(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    elsewhere = str(repo / "docs" / "guide.md")  # outside the nested directory, inside the repo
    result = await _ground(repo / "apps" / "web", active_paths=[elsewhere, "README.md"])
    assert result.repository_root == repo.resolve()
    pinned = [source.path for source in result.wire.selected_sources if source.pinned]
    assert {"docs/guide.md", "README.md"} <= set(pinned)
    from_top = await _ground(repo, active_paths=["docs/guide.md", "README.md"])
    assert result.manifest.id == from_top.manifest.id


async def test_from_a_nested_directory_an_escaping_active_path_is_still_refused(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with pytest.raises(ContextSecurityError, match="lies outside the repository root"):
        await _ground(repo / "apps" / "web", active_paths=["../outside.txt"])


async def test_untracked_files_are_listed_and_ignored_ones_are_not(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".gitignore": "*.log\n", "kept.txt": "k\n"})
    (repo / "new.txt").write_text("untracked\n", encoding="utf-8")
    (repo / "debug.log").write_text("ignored\n", encoding="utf-8")
    result = await _ground(repo, request="anything")
    assert sorted(selected_paths(result)) == [".gitignore", "kept.txt", "new.txt"]


async def test_an_empty_repository_grounds_to_an_empty_manifest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {}, commit=False)
    result = await _ground(repo)
    assert result.wire.selected_sources == []
    assert result.wire.repository_fingerprint.head_commit is None
    assert result.wire.inventory_source == "git"


async def test_report_only_reads_nothing_and_returns_the_empty_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("report_only must not list or read the repository")

    monkeypatch.setattr("telic.grounding._ground.list_repository", forbidden)
    monkeypatch.setattr("telic.grounding._ground.GitReader", forbidden)
    monkeypatch.setattr("telic.grounding._read.CandidateReader.__call__", forbidden)
    result = await ground_repository(
        run_id="abcdefghijklmnopqrstuvwxyz",
        original_request=REQUEST,
        repository_root=repo,
        mode="report_only",
    )
    assert result.manifest.id == "context-report-only-abcdefghijkl"
    assert result.wire.warnings == [
        "report_only mode intentionally skipped new repository discovery"
    ]
    assert result.documents == ()
    assert result.manifest.candidates == []
    assert result.manifest.derived_refs == []
    assert result.wire.budget.max_files == 48


async def test_progress_reports_inventoried_considered_and_selected_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{n:03d}.py": f"x = {n}\n" for n in range(100)})
    reports: list[GroundingProgress] = []
    result = await _ground(repo, request="the m0 modules in src", progress=reports.append)
    assert reports[0] == GroundingProgress("inventory", 100, 0, 0)
    assert any(report.stage == "selection" for report in reports)
    assert reports[-1] == GroundingProgress("done", 100, 100, 48)
    assert result.wire.budget.selected_files == 48
    considered = [report.considered for report in reports]
    assert considered == sorted(considered)
