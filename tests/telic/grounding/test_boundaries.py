"""Active paths, escapes, excluded roots, inventory fallbacks, hardening and input checks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from telic._errors import ContextSecurityError, UsageError
from telic.grounding import (
    GroundingBudget,
    GroundingProgress,
    GroundingResult,
    ground_repository,
)

from .repos import exclusions, git, make_repo, require_tool, selected_paths, write_tree

pytestmark = pytest.mark.anyio

FILES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\n",
    "src/app.py": "print('app')\n",
    "src/billing/invoice.py": "TOTAL = 1\n",
    "node_modules/lib/index.js": "module.exports = 1;\n",
    "build/out.txt": "built\n",
}


async def _ground(root: Path, **kwargs: object) -> object:
    return await ground_repository(
        run_id="run-1",
        original_request=str(kwargs.pop("request", "look at the invoice")),
        repository_root=root,
        mode="fix_only",
        **kwargs,  # type: ignore[arg-type]
    )


# ----------------------------------------------------------------------------- active paths


async def test_active_paths_may_be_relative_or_absolute(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    for active in ("src/app.py", "./src//app.py", str(repo / "src" / "app.py")):
        result = await _ground(repo, active_paths=[active])
        source = result.wire.selected_sources[0]
        assert (source.path, source.score, source.pinned) == ("src/app.py", 1_050_000, True)


async def test_an_active_directory_lifts_the_files_below_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo, active_paths=["src/billing"], request="anything")
    scores = {source.path: source.score for source in result.wire.selected_sources}
    assert scores["src/billing/invoice.py"] == 10_000


async def test_a_missing_active_path_is_kept_as_a_hint_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo, active_paths=["src/not_yet_written.py"])
    assert "src/not_yet_written.py" not in selected_paths(result)
    assert "invalid_path" not in exclusions(result)


@pytest.mark.parametrize("active", ["../outside.txt", "src/../../outside.txt", "/etc/hostname"])
async def test_an_active_path_outside_the_root_is_refused(active: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with pytest.raises(ContextSecurityError, match=r"active path #2 .* outside the repository"):
        await _ground(repo, active_paths=["src/app.py", active])


async def test_an_active_path_through_an_escaping_symlink_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text("x\n", encoding="utf-8")
    os.symlink(tmp_path / "elsewhere", repo / "linked")
    for active in ("linked/x.py", "linked/missing.py", "linked"):
        with pytest.raises(ContextSecurityError, match="through a symbolic link") as caught:
            await _ground(repo, active_paths=[active])
        assert caught.value.code == "context_security"


async def test_refusals_name_an_active_path_by_position_never_by_its_text(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    os.symlink(tmp_path, repo / "up")
    token = "gh" + "p_" + "Zx9" * 12
    for active in ("../.env.production", "up/.aws/credentials", "../id_rsa", f"../{token}"):
        with pytest.raises(ContextSecurityError) as caught:
            await _ground(repo, active_paths=["src/app.py", active])
        message = str(caught.value)
        assert message.startswith("active path #2 ")
        for fragment in (".env", "credentials", "id_rsa", ".aws", "Zx9", "../"):
            assert fragment not in message


async def test_an_escaping_symlink_in_the_tree_is_never_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    (tmp_path / "outside.md").write_text("OUTSIDE-MARKER\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", repo / "invoice-notes.md")
    result = await _ground(repo)
    assert exclusions(result)["symlink_escape"] == 1
    assert "OUTSIDE-MARKER" not in "".join(doc.content for doc in result.documents)


# ----------------------------------------------------------------------------- excluded roots


async def test_excluded_roots_inside_the_repository_are_counted_and_skipped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "state/ledger.txt": "state\n"})
    result = await _ground(repo, excluded_roots=[repo / "state"])
    assert "state/ledger.txt" not in selected_paths(result)
    assert exclusions(result)["excluded_directory"] == 3  # state, node_modules, build


async def test_an_excluded_root_holding_the_repository_excludes_everything(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo, excluded_roots=[tmp_path])
    assert result.wire.selected_sources == []


async def test_excluded_roots_must_be_absolute(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="excluded root #1 must be an absolute path"):
        await _ground(tmp_path, excluded_roots=["relative/state"])


# ----------------------------------------------------------------------------- inventory sources


async def test_outside_git_ripgrep_lists_the_tree_with_a_warning(tmp_path: Path) -> None:
    require_tool("rg")
    write_tree(
        tmp_path, {**FILES, ".gitignore": "src/\n", "dist/x.js": "x\n", ".hidden.txt": "h\n"}
    )
    result = await _ground(tmp_path, request="the app and the hidden invoice")
    assert result.wire.inventory_source == "ripgrep"
    assert any("listed with ripgrep" in warning for warning in result.wire.warnings)
    paths = selected_paths(result)
    assert {"src/app.py", "src/billing/invoice.py", ".hidden.txt"} <= set(paths)  # no ignores
    assert not any(path.startswith(("node_modules/", "build/", "dist/")) for path in paths)
    assert result.wire.repository_fingerprint.head_commit is None
    assert any("fingerprint covers only" in warning for warning in result.wire.warnings)


async def test_without_git_and_ripgrep_a_bounded_walk_lists_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "extra/a.txt": "a\n", "extra/b.txt": "b\n"})
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = await _ground(repo, budget=GroundingBudget(max_inventory_files=3))
    assert result.wire.inventory_source == "filesystem"
    assert any("bounded filesystem walk" in warning for warning in result.wire.warnings)
    assert result.repository_root == repo.resolve()
    assert selected_paths(result)[0] == "AGENTS.md"
    # the walk stops after max_inventory_files + 1 files and skips .git and the static dirs
    assert exclusions(result) == {"inventory_budget": 1}
    assert result.wire.budget.candidate_files == 4


async def test_with_git_but_no_ripgrep_a_plain_directory_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("git") or "git", bin_dir / "git")
    write_tree(tmp_path / "plain", FILES)
    monkeypatch.setenv("PATH", str(bin_dir))
    result = await _ground(tmp_path / "plain")
    assert result.wire.inventory_source == "filesystem"
    assert "src/billing/invoice.py" in selected_paths(result)


async def test_the_walk_and_git_agree_on_a_committed_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(
        tmp_path / "repo", {k: v for k, v in FILES.items() if "/" not in k or "src" in k}
    )
    with_git = await _ground(repo)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    walked = await _ground(repo)
    assert selected_paths(with_git) == selected_paths(walked)


# ----------------------------------------------------------------------------- hardening


async def test_repository_git_config_cannot_run_an_fsmonitor_hook(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    marker = tmp_path / "hook-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    result = await _ground(repo)
    assert result.wire.inventory_source == "git"
    assert not marker.exists()


async def test_the_callers_git_environment_does_not_leak_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    other = make_repo(tmp_path / "other", {"other.txt": "other\n"})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    result = await _ground(repo)
    assert result.repository_root == repo.resolve()
    assert "other.txt" not in selected_paths(result)


async def test_grounding_can_be_cancelled_while_it_reads(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{n:03d}.py": f"x = {n}\n" for n in range(200)})
    seen: list[str] = []
    with anyio.CancelScope() as scope:

        def cancel(report: GroundingProgress) -> None:
            seen.append(report.stage)
            if report.stage == "selection":
                scope.cancel()

        await _ground(
            repo,
            request="the modules in src",
            progress=cancel,
            budget=GroundingBudget(max_files=256),
        )
    assert scope.cancelled_caught
    assert seen.count("selection") == 1  # the worker stopped at its next check
    assert "done" not in seen


# ----------------------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_files", 0, "budget.max_files must be a positive integer"),
        ("max_files", 257, "budget.max_files must be at most 256"),
        ("max_file_bytes", 2_097_153, "budget.max_file_bytes must be at most 2,097,152"),
        ("max_total_bytes", 16_777_217, "budget.max_total_bytes must be at most 16,777,216"),
        ("max_inventory_files", 100_001, "budget.max_inventory_files must be at most 100,000"),
        ("max_inventory_files", True, "budget.max_inventory_files must be a positive integer"),
        ("max_total_bytes", 1.5, "budget.max_total_bytes must be a positive integer"),
    ],
)
def test_budgets_beyond_the_hard_caps_are_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        GroundingBudget(**{field: value})  # type: ignore[arg-type]


def test_budgets_at_the_hard_caps_are_accepted() -> None:
    budget = GroundingBudget(256, 2_097_152, 16_777_216, 100_000)
    assert budget.max_inventory_files == 100_000
    assert GroundingBudget() == GroundingBudget(48, 131_072, 524_288, 20_000)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"run_id": "-bad"}, "run_id must be an identifier"),
        ({"original_request": "é" * 16_385}, "at most 32,768 UTF-8 bytes"),
        ({"repository_root": "x" * 4_097}, "repository_root must be a path of at most 4,096"),
        ({"active_paths": ["a"] * 257}, "at most 256 paths"),
        ({"active_paths": ["a\0b"]}, "active path #1 holds a NUL"),
        ({"active_paths": ["a\\b.py"]}, "active path #1 is not a valid repository path"),
        ({"excluded_roots": ["/x"] * 17}, "at most 16 paths"),
        ({"mode": "yolo"}, "mode must be one of"),
        ({"budget": 5}, "budget must be a GroundingBudget or a mapping of its fields"),
        ({"budget": {"maxFiles": 1}}, "budget has no field 'maxFiles'"),
        ({"budget": {"max_files": 0}}, "budget.max_files must be a positive integer"),
    ],
)
async def test_invalid_arguments_are_usage_errors(
    kwargs: dict[str, object], message: str, tmp_path: Path
) -> None:
    arguments: dict[str, object] = {
        "run_id": "run-1",
        "original_request": "x",
        "repository_root": tmp_path,
        "mode": "plan_only",
    }
    with pytest.raises(UsageError, match=message):
        await ground_repository(**{**arguments, **kwargs})  # type: ignore[arg-type]


async def test_a_root_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    for root in (tmp_path / "file.txt", tmp_path / "missing"):
        with pytest.raises(UsageError, match="repository_root must be an existing directory"):
            await _ground(root)


async def test_a_listing_over_the_output_cap_counts_as_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{n:03d}.py": f"x = {n}\n" for n in range(50)})
    monkeypatch.setattr("telic.grounding._process.MAX_OUTPUT_BYTES", 256)
    result = await _ground(repo, request="the modules")
    # git's and ripgrep's listings were cut off and dropped, not used half-way
    assert result.wire.inventory_source == "filesystem"
    assert result.wire.budget.candidate_files == 50


async def test_a_budget_given_as_a_mapping_is_honoured(tmp_path: Path) -> None:
    # Issue 28: telic_ground_context passes the host's limits as a mapping, which was refused
    # ("budget must be a GroundingBudget") whatever it held.
    repo = make_repo(tmp_path / "repo", FILES)
    result = await _ground(repo, budget={"max_files": 1, "max_inventory_files": 50})
    assert isinstance(result, GroundingResult)
    assert len(selected_paths(result)) == 1
    budget = result.manifest.budget
    assert (budget.maximum_files, budget.maximum_inventory_files) == (1, 50)
