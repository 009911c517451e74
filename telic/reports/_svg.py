"""The path through the state machine as an inline SVG: one box per phase visited, in order.

Boxes run left to right and wrap into rows; an arrow joins consecutive boxes and carries the
decision that caused a loop (revise, remediate, proceed to fix, a clarification and its answer).
The colour of a box says how the run got there, and a legend repeats it in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final

from telic.controller import phase_label
from telic.reports._format import tone
from telic.reports._model import PathStep

PER_ROW: Final = 4
BOX_W: Final = 210
BOX_H: Final = 46
GAP_X: Final = 100
GAP_Y: Final = 54
PAD: Final = 12
TITLE_SIZE: Final = 12
EDGE_SIZE: Final = 11
EDGE_LABEL_WIDTH: Final = GAP_X - 10
"""The room an arrow's label has between two boxes of a row."""
KIND_FILL: Final = {
    "start": "#e5e7eb",
    "advance": "#dbeafe",
    "revision": "#fef3c7",
    "remediation": "#fed7aa",
    "fix": "#ede9fe",
    "clarification": "#ccfbf1",
    "resume": "#ccfbf1",
}
TERMINAL_FILL: Final = {
    "good": "#bbf7d0",
    "bad": "#fecaca",
    "warn": "#fde68a",
    "neutral": "#e5e7eb",
}
LEGEND: Final = (
    ("advance", "next phase"),
    ("revision", "contract revision"),
    ("remediation", "remediation"),
    ("fix", "proceed to fix"),
    ("clarification", "clarification"),
)


def text_width(text: str, size: float) -> float:
    """A generous estimate of ``text``'s width in a sans-serif font of ``size`` px."""
    return len(text) * size * 0.62


def box_title(index: int, step: PathStep) -> str:
    """The first line of a box: its number and the phase's label."""
    return f"{index + 1}. {phase_label(step.phase)}"


def edge_lines(label: str) -> list[str]:
    """An arrow's label broken into lines that fit between two boxes."""
    lines: list[str] = []
    for word in label.split():
        if lines and text_width(f"{lines[-1]} {word}", EDGE_SIZE) <= EDGE_LABEL_WIDTH:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _fill(step: PathStep) -> str:
    if step.kind == "terminal":
        return TERMINAL_FILL[tone(step.label)]
    return KIND_FILL.get(step.kind, "#e5e7eb")


def _origin(index: int) -> tuple[int, int]:
    row, col = divmod(index, PER_ROW)
    return PAD + col * (BOX_W + GAP_X), PAD + 18 + row * (BOX_H + GAP_Y)


def path_svg(steps: Sequence[PathStep]) -> str:
    """Return an ``<svg>`` element drawing ``steps`` (phase names and labels are escaped)."""
    rows = max(1, -(-len(steps) // PER_ROW))
    width = PAD * 2 + PER_ROW * BOX_W + (PER_ROW - 1) * GAP_X
    legend_y = PAD + 18 + rows * (BOX_H + GAP_Y) - GAP_Y + 34
    height = legend_y + 24
    parts = [
        f'<svg id="state-path" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-labelledby="state-path-title" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" font-family="system-ui, sans-serif">',
        '<title id="state-path-title">Path through the state machine: '
        + escape(" → ".join(phase_label(s.phase) for s in steps))
        + "</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#475569"/></marker></defs>',
    ]
    for index in range(1, len(steps)):
        x0, y0 = _origin(index - 1)
        x1, y1 = _origin(index)
        step = steps[index]
        if y0 == y1:
            d = f"M{x0 + BOX_W},{y0 + BOX_H // 2} L{x1 - 2},{y1 + BOX_H // 2}"
            lx, ly = (x0 + BOX_W + x1) // 2, y0 + BOX_H // 2 - 8
        else:
            mid = y0 + BOX_H + GAP_Y // 2
            d = (
                f"M{x0 + BOX_W // 2},{y0 + BOX_H} L{x0 + BOX_W // 2},{mid} "
                f"L{x1 + BOX_W // 2},{mid} L{x1 + BOX_W // 2},{y1 - 2}"
            )
            lx, ly = (x0 + x1 + BOX_W) // 2, mid - 6
        loop = step.kind not in ("advance", "terminal", "start")
        stroke = "#b45309" if loop else "#475569"
        parts.append(
            f'<path class="edge edge-{step.kind}" d="{d}" fill="none" stroke="{stroke}" '
            f'stroke-width="{2 if loop else 1.5}" marker-end="url(#arrow)"/>'
        )
        if step.label and step.kind != "terminal":
            lines = edge_lines(step.label)
            spans = "".join(
                f'<tspan x="{lx}" y="{ly - (len(lines) - 1 - i) * (EDGE_SIZE + 2)}">'
                f"{escape(line)}</tspan>"
                for i, line in enumerate(lines)
            )
            parts.append(
                f'<text font-size="{EDGE_SIZE}" text-anchor="middle" fill="{stroke}">{spans}</text>'
            )
    for index, step in enumerate(steps):
        x, y = _origin(index)
        parts.append(
            f'<g class="node node-{step.kind}" data-phase="{escape(step.phase)}">'
            f"<title>{escape(step.phase)} ({step.kind}{': ' if step.label else ''}"
            f"{escape(step.label)})</title>"
            f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="8" '
            f'fill="{_fill(step)}" stroke="#334155" stroke-width="1"/>'
            f'<text x="{x + BOX_W // 2}" y="{y + 19}" font-size="{TITLE_SIZE}" '
            f'text-anchor="middle" fill="#0f172a">{escape(box_title(index, step))}</text>'
            f'<text x="{x + BOX_W // 2}" y="{y + 36}" font-size="10.5" text-anchor="middle" '
            f'fill="#334155">{escape(step.kind if not step.label else step.label)}</text></g>'
        )
    x = PAD
    for kind, words in LEGEND:
        parts.append(
            f'<rect x="{x}" y="{legend_y - 11}" width="14" height="14" rx="3" '
            f'fill="{KIND_FILL[kind]}" stroke="#334155"/>'
            f'<text x="{x + 20}" y="{legend_y}" font-size="11" fill="#334155">{words}</text>'
        )
        x += 40 + 7 * len(words)
    parts.append("</svg>")
    return "".join(parts)
