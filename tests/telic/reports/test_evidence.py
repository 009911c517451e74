"""Reports show the evidence a reviewer wants inline: the diff and the verification output.

Each run here is stopped in execution with Evidence captured through the controller, so the
report reads exactly what the ledger holds.
"""

from __future__ import annotations

import base64

import pytest

from telic.controller._vocabulary import PHASE_LABELS
from telic.ledger import open_ledger
from telic.reports import load_run_report, render_html, render_markdown
from telic.reports._model import PathStep
from telic.reports._project import EXCERPT_LINES
from telic.reports._svg import BOX_W, EDGE_LABEL_WIDTH, box_title, edge_lines, text_width

from .recorded import fixed_clock, running

pytestmark = pytest.mark.anyio

DIFF = (
    "--- a/src/pagination.py\n+++ b/src/pagination.py\n@@ -19,5 +19,5 @@\n"
    "-    start = page * per_page\n+    start = (page - 1) * per_page\n"
)


async def _with_evidence(*captures: dict[str, str]) -> tuple[str, object]:
    async with open_ledger("memory://") as ledger:
        run_id, flow = await running(ledger)
        for capture in captures:
            body = flow.b.evidence(capture["id"], capture["kind"]) | {
                k: v for k, v in capture.items() if k not in ("id", "kind")
            }
            await flow.submit("Evidence", body)
        return run_id, await load_run_report(ledger, run_id, clock=fixed_clock())


async def test_the_diff_and_the_test_output_are_shown_inline_diff_first() -> None:
    _run_id, data = await _with_evidence(
        {
            "id": "ev-tests",
            "kind": "tool_output",
            "content": "Ran 4 tests\n\nOK\n",
            "summary": "Tests after the fix",
        },
        {"id": "ev-diff", "kind": "diff", "content": DIFF, "summary": "The fix"},
    )
    assert [e.artifact_id for e in data.evidence] == ["ev-diff", "ev-tests"]  # type: ignore[attr-defined]
    page = render_html(data)  # type: ignore[arg-type]
    assert '<div class="evidence" id="artifact-ev-diff">' in page
    assert '<span class="add">+    start = (page - 1) * per_page</span>' in page
    assert '<span class="del">-    start = page * per_page</span>' in page
    assert "Ran 4 tests\n\nOK</pre>" in page
    text = render_markdown(data)  # type: ignore[arg-type]
    assert f"```diff\n{DIFF.rstrip()}\n```" in text
    assert "```text\nRan 4 tests\n\nOK\n```" in text


async def test_long_output_is_bounded_inline_with_the_whole_text_one_click_away() -> None:
    long = "".join(f"line {n}\n" for n in range(1, 201))
    run_id, data = await _with_evidence({"id": "ev-log", "kind": "log", "content": long})
    (entry,) = data.evidence  # type: ignore[attr-defined]
    assert entry.truncated
    assert entry.excerpt.splitlines()[-1] == f"line {EXCERPT_LINES}"
    page = render_html(data)  # type: ignore[arg-type]
    inline, hidden = page.split("<details>", 1)
    assert "line 40" in inline
    assert "line 41\n" not in inline
    assert "<summary>Show all 200 lines (1692 characters)</summary>" in hidden
    assert "line 200" in hidden
    text = render_markdown(data)  # type: ignore[arg-type]
    assert "line 41\n" not in text
    assert f"the whole text: `telic artifact {run_id} ev-log`" in text


async def test_binary_evidence_is_described_never_printed() -> None:
    raw = base64.b64encode(b"\x00\x01secret-ish bytes").decode()
    _, data = await _with_evidence(
        {
            "id": "ev-bin",
            "kind": "runtime",
            "content": raw,
            "encoding": "base64",
            "contentType": "application/octet-stream",
        }
    )
    page = render_html(data)  # type: ignore[arg-type]
    assert raw not in page
    assert f"Binary content ({len(raw)} base64 characters)." in page


async def test_the_claim_links_reach_the_evidence_block_and_ids_stay_unique() -> None:
    _, data = await _with_evidence({"id": "ev-diff", "kind": "diff", "content": DIFF})
    page = render_html(data)  # type: ignore[arg-type]
    assert page.count('id="artifact-ev-diff"') == 1
    assert page.count('id="artifact-ev-diff-record"') == 1


def test_every_box_title_fits_its_box() -> None:
    for index, phase in enumerate(PHASE_LABELS):
        title = box_title(9 + index % 2, PathStep(phase=phase, kind="advance", label=""))
        assert text_width(title, 12) <= BOX_W - 8, title


@pytest.mark.parametrize(
    "label", ["proceed to fix", "second clarification", "result partial", "remediate", "asked"]
)
def test_every_arrow_label_fits_between_the_boxes(label: str) -> None:
    lines = edge_lines(label)
    assert " ".join(lines) == label
    assert all(text_width(line, 11) <= EDGE_LABEL_WIDTH for line in lines), lines
