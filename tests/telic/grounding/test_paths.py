"""Path normalisation, instruction paths, static exclusions and refs (docs/protocol.md §4
items 6–8)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from telic._secrets import is_secret_like_path
from telic.grounding._batch import filter_excluded, instruction_paths, normalize_paths
from telic.grounding._paths import (
    excluded_reason,
    instruction_scope,
    is_instruction_path,
    normalize_path,
    repository_ref,
)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("././src//app.py", "src/app.py"),
        ("src///deep//app.py", "src/deep/app.py"),
        (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
        ("..hidden/x", "..hidden/x"),
        ("a/.b/c", "a/.b/c"),
    ],
)
def test_paths_are_normalised(raw: str, normal: str) -> None:
    assert normalize_path(raw) == normal


@pytest.mark.parametrize(
    "raw",
    [
        "",
        ".",
        "..",
        "../escape",
        "a/../b",
        "a/./b",
        "a/.",
        "/etc/passwd",
        "dir/",
        "back\\slash.txt",
        "nul\0byte",
        "bad-\udcff-bytes.txt",
        "x" * 1025,
        "é" * 400,  # its percent-encoded reference would exceed 2048 characters
        " " * 700,
    ],
)
def test_invalid_paths_are_rejected(raw: str) -> None:
    assert normalize_path(raw) is None


SEGMENT = st.one_of(
    st.text(alphabet=st.sampled_from("ab./\\\0é_"), min_size=0, max_size=12),
    st.sampled_from(["a" * 700, "b " * 400, "é" * 350]),
)


@given(st.lists(SEGMENT, max_size=40))
def test_block_normalisation_agrees_with_path_by_path_normalisation(raw: list[str]) -> None:
    expected = [normal for path in raw if (normal := normalize_path(path)) is not None]
    assert normalize_paths(raw) == (expected, len(raw) - len(expected))


@given(
    st.lists(st.sampled_from(["a/b.py", "x/AGENTS.md", ".roo/rules/r.md", "rules/x"]), max_size=600)
)
def test_block_instruction_search_agrees_with_the_predicate(paths: list[str]) -> None:
    assert instruction_paths(paths) == [path for path in paths if is_instruction_path(path)]


NAMES = ["src/a.py", "dist/x.js", "Build/y", ".env.local", "keys/id_rsa", "docs/secret/x.md",
         "rapid.py", "server.PEM", "builder.py", "distance.txt", "ok/.envrc"]  # fmt: skip


@given(st.lists(st.sampled_from(NAMES), max_size=1200))
def test_block_exclusion_agrees_with_the_per_path_reason(paths: list[str]) -> None:
    counts: dict[str, int] = {}
    kept = filter_excluded(paths, counts)
    assert kept == [path for path in paths if excluded_reason(path) is None]
    expected: dict[str, int] = {}
    for path in paths:
        if (reason := excluded_reason(path)) is not None:
            expected[reason] = expected.get(reason, 0) + 1
    assert counts == expected


@pytest.mark.parametrize(
    "path",
    [
        "AGENTS.md",
        "CLAUDE.md",
        "CODEX.md",
        "GEMINI.md",
        ".cursorrules",
        ".windsurfrules",
        ".github/copilot-instructions.md",
        "packages/web/AGENTS.md",
        "x/copilot-instructions.md",
        ".roo/rules/style.md",
        "pkg/.cursor/rules/python.mdc",
        ".agents/rules/a.md",
        ".github/instructions/tests.instructions.md",
    ],
)
def test_instruction_paths_are_recognised(path: str) -> None:
    assert is_instruction_path(path)


@pytest.mark.parametrize("path", ["agents.md", "docs/rules/x.md", "AGENTS.md.bak", "src/a.py"])
def test_other_paths_are_not_instructions(path: str) -> None:
    assert not is_instruction_path(path)


def test_an_instruction_governs_its_directory() -> None:
    assert instruction_scope("AGENTS.md") == "."
    assert instruction_scope("packages/web/AGENTS.md") == "packages/web"


@pytest.mark.parametrize(
    "path",
    ["node_modules/x/index.js", "a/.git/config", "BUILD/out.txt", "coverage/lcov.info",
     "web/dist/app.js", ".telic/state", "x/Node_Modules/y"],
)  # fmt: skip
def test_static_directories_are_excluded_case_insensitively(path: str) -> None:
    assert excluded_reason(path) == "excluded_directory"


@pytest.mark.parametrize(
    "path",
    [".env", ".env.production", "app/.envrc", ".git-credentials", ".netrc", ".npmrc", ".pypirc",
     "credentials/aws.txt", "config/secrets/db.yml", "credentials.json", "Secret.yaml",
     "service-account-prod.json", "service-account.json", "id_rsa", "keys/id_ed25519.pub",
     "tls/server.key", "cert.pem", "store.p12", "store.PFX"],
)  # fmt: skip
def test_secret_like_paths_are_excluded(path: str) -> None:
    assert is_secret_like_path(path)
    assert excluded_reason(path) == "secret_like_file"


@pytest.mark.parametrize(
    "path", ["src/environment.py", "docs/keyboard.md", "secretary/notes.md", "build.gradle"]
)
def test_look_alikes_are_kept(path: str) -> None:
    assert excluded_reason(path) is None


def test_refs_percent_encode_each_segment() -> None:
    assert repository_ref("apps/web/src/api.ts") == "repo://apps/web/src/api.ts"
    assert repository_ref("docs/a b/ü#?.md") == "repo://docs/a%20b/%C3%BC%23%3F.md"
    assert repository_ref("x/it's(1)*!~.md") == "repo://x/it's(1)*!~.md"
