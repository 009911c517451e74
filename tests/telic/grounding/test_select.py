"""The pure selection loop (docs/protocol.md §4 item 10) over a fake reader: order, budgets,
caps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest

from telic.grounding import GroundingBudget
from telic.grounding._plan import Plan
from telic.grounding._select import (
    ZERO_RELEVANCE_WARNING,
    Selection,
    is_binary,
    select,
)

PEM = "-----BEGIN " + "PRIVATE KEY-----\nMIIE\n"


def _plan(scored: Mapping[str, int], zeros: list[str] | tuple[str, ...] = ()) -> Plan:
    ranked = sorted((-score, path) for path, score in scored.items())
    pinned = frozenset(path for path, score in scored.items() if score >= 1_000_000)
    everything = [*scored, *zeros]
    return Plan(ranked, list(zeros), everything, len(everything), 0, Counter(), active=pinned)


def _run(
    plan: Plan, files: Mapping[str, bytes | str], budget: GroundingBudget | None = None
) -> Selection:
    read: list[str] = []

    def reader(path: str) -> bytes | str:
        read.append(path)
        return files[path]

    selection = select(
        plan, budget or GroundingBudget(), reader, explain=lambda ranked: f"why {ranked.path}"
    )
    selection.warnings.append(f"read={','.join(read)}")
    return selection


def _paths(selection: Selection) -> list[str]:
    return [item.ranked.path for item in selection.selected]


def test_candidates_are_selected_in_ranking_order_with_their_reasons() -> None:
    selection = _run(_plan({"b.py": 500, "a.py": 250}), {"a.py": b"a = 1\n", "b.py": b"b = 2\n"})
    assert _paths(selection) == ["b.py", "a.py"]
    assert [item.reason for item in selection.selected] == ["why b.py", "why a.py"]
    assert selection.selected[0].content_hash.startswith("sha256:")
    assert selection.selected_bytes == 12
    assert set(selection.read_hashes) == {"a.py", "b.py"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x00\x01binary", "binary_file"),
        (b"caf\xe9 au lait\n", "invalid_utf8"),
        (f"key = '''{PEM}'''".encode(), "secret_content"),
        ("reader says no", "unreadable_file"),
    ],
)
def test_content_checks_exclude_with_their_reason(content: bytes | str, reason: str) -> None:
    selection = _run(_plan({"x.txt": 100}), {"x.txt": content})
    assert selection.selected == []
    expected = reason if isinstance(content, bytes) else "reader says no"
    assert selection.counts == Counter({expected: 1})


def test_more_than_ten_percent_control_bytes_is_binary() -> None:
    assert not is_binary(b"a" * 90 + b"\x01" * 10)
    assert is_binary(b"a" * 89 + b"\x01" * 11)
    assert not is_binary(b"tabs\tand\r\nnewlines\x0c" * 10)
    assert not is_binary(b"")
    assert is_binary(b"text\x00")


def test_binary_detection_looks_only_at_the_first_8_kib() -> None:
    late_nul = b"a" * 8_192 + b"\x00"
    selection = _run(_plan({"x.txt": 1}), {"x.txt": late_nul})
    assert _paths(selection) == ["x.txt"]  # a NUL past the sample is not looked at


def test_duplicate_content_is_selected_once() -> None:
    selection = _run(_plan({"a.py": 2, "b.py": 1}), {"a.py": b"same\n", "b.py": b"same\n"})
    assert _paths(selection) == ["a.py"]
    assert selection.counts == Counter({"duplicate_content": 1})
    assert selection.read_hashes["a.py"] == selection.read_hashes["b.py"]


def test_file_count_budget_at_and_over_the_limit() -> None:
    files = {f"f{n}.py": f"x = {n}\n".encode() for n in range(4)}
    at = _run(_plan(dict.fromkeys(list(files)[:2], 10)), files, GroundingBudget(max_files=2))
    assert len(at.selected) == 2
    assert "file_count_budget" not in at.counts
    over = _run(_plan(dict.fromkeys(files, 10)), files, GroundingBudget(max_files=2))
    assert _paths(over) == ["f0.py", "f1.py"]
    assert over.counts == Counter({"file_count_budget": 2})
    assert over.warnings == ["read=f0.py,f1.py"]  # candidates over the budget are not read


def test_total_bytes_budget_at_and_over_the_limit_skips_only_what_does_not_fit() -> None:
    files = {"big.txt": b"x" * 60, "fits.txt": b"y" * 40, "small.txt": b"z" * 10}
    plan = _plan({"fits.txt": 3, "big.txt": 2, "small.txt": 1})
    selection = _run(plan, files, GroundingBudget(max_total_bytes=50))
    assert _paths(selection) == ["fits.txt", "small.txt"]  # exactly 50 bytes: at the limit
    assert selection.selected_bytes == 50
    assert selection.counts == Counter({"total_bytes_budget": 1})


def test_zero_relevance_candidates_are_capped_at_eight_with_a_warning() -> None:
    zeros = [f"z{n:02d}.txt" for n in range(11)]
    files = {path: f"{path}\n".encode() for path in zeros}
    selection = _run(_plan({}, zeros), files)
    assert _paths(selection) == zeros[:8]
    assert selection.counts == Counter({"low_relevance": 3})
    assert ZERO_RELEVANCE_WARNING in selection.warnings
    assert ZERO_RELEVANCE_WARNING == "Unpinned zero-relevance context was capped at 8 files"


def test_exactly_eight_zero_relevance_candidates_need_no_warning() -> None:
    zeros = [f"z{n}.txt" for n in range(8)]
    selection = _run(_plan({}, zeros), {path: path.encode() for path in zeros})
    assert len(selection.selected) == 8
    assert ZERO_RELEVANCE_WARNING not in selection.warnings


def test_low_relevance_is_judged_before_the_file_count_budget() -> None:
    zeros = [f"z{n:02d}.txt" for n in range(10)]
    files = {"hit.py": b"hit\n", **{path: path.encode() for path in zeros}}
    selection = _run(_plan({"hit.py": 5}, zeros), files, GroundingBudget(max_files=1))
    assert selection.counts == Counter({"file_count_budget": 8, "low_relevance": 2})
    assert selection.considered == 11


def test_progress_ticks_every_64_candidates_and_at_the_end() -> None:
    files = {f"f{n:03d}.py": f"v = {n}\n".encode() for n in range(130)}
    ticks: list[int] = []
    select(
        _plan(dict.fromkeys(files, 1)),
        GroundingBudget(max_files=256),
        files.__getitem__,
        explain=lambda ranked: "why",
        tick=lambda selection: ticks.append(selection.considered),
    )
    assert ticks == [64, 128, 130]
