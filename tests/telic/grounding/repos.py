"""Building real repositories for the grounding tests, hermetically (no user git config)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from telic.grounding import GroundingResult

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Telic Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Telic Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}

Files = Mapping[str, "str | bytes"]


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` without any user or system configuration; return stdout."""
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )
    return done.stdout.decode("utf-8", "replace")


def write_tree(root: Path, files: Files) -> None:
    """Write ``files`` (path → text or bytes) below ``root``."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def make_repo(root: Path, files: Files, *, commit: bool = True) -> Path:
    """Create a git repository at ``root`` holding ``files``, committed unless told not to."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    write_tree(root, files)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", "initial")
    return root


def require_tool(name: str) -> None:
    """Skip when ``name`` is not installed, except in CI, where it must be (.ci/tools.sh)."""
    if shutil.which(name) is None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{name} is required in CI; .ci/tools.sh installs it")
        pytest.skip(f"{name} is not installed")


def exclusions(result: GroundingResult) -> dict[str, int]:
    """The manifest's exclusion counts as a dict."""
    return {entry.reason: entry.count for entry in result.wire.excluded_candidates}


def selected_paths(result: GroundingResult) -> list[str]:
    """Paths of the selected sources, in ranking order."""
    return [source.path for source in result.wire.selected_sources]


def everything(result: GroundingResult) -> str:
    """All JSON a grounding produced: wire, canonical manifest and documents."""
    dump: dict[str, Any] = {
        "wire": result.wire.model_dump(mode="json"),
        "manifest": result.manifest.to_wire(),
        "documents": [document.to_wire() for document in result.documents],
    }
    return json.dumps(dump, ensure_ascii=False)
