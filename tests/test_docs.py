"""The documents a person follows name only commands that exist, and tools that are declared."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from telic.server._tools import TOOLS

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.MULTILINE))


def test_the_readme_keeps_its_two_set_up_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme
    assert "make test" in readme
    assert {"demo", "test"} <= _targets()


def test_every_make_command_in_the_documents_is_a_target() -> None:
    targets = _targets()
    for document in DOCUMENTS:
        for target in re.findall(r"\bmake ([a-z][a-z-]*)", document.read_text(encoding="utf-8")):
            assert target in targets, f"{document.name} runs make {target}, which does not exist"


def test_no_document_sends_people_to_a_virtualenv_path_as_the_command() -> None:
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        assert "/path/to/.venv/bin/telic" not in text, document.name


def test_the_tool_table_is_the_one_the_declarations_write() -> None:
    spec = importlib.util.spec_from_file_location("tools_doc", ROOT / "docs" / "tools_doc.py")
    assert spec is not None
    assert spec.loader is not None
    tools_doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools_doc)
    text = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    assert tools_doc.written(text) == text, "stale: run python docs/tools_doc.py --write"
    rows = re.findall(r"^\| `(telic_\w+)` \| ([a-z-]+) \|", text, flags=re.MULTILINE)
    assert rows == [(t.name, "read-only" if t.read_only else "writes") for t in TOOLS]
    stale = text.replace("| `telic_cancel_run` | writes |", "| `telic_cancel_run` | read-only |")
    assert stale != text
    assert tools_doc.written(stale) == text
