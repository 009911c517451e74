"""What the over-MCP benchmarks share: a timed host, a fast workspace and the server processes.

The host is ``telic.cli``'s scripted one (``drive_mode`` with its ``Bodies``), the same driver the
server tests use, so every body measured is one the tests keep valid. ``TimedTools`` records each
call's wall time and the bytes of its result; ``FastWorkspace`` does the host's native work once
and replays it, so a run's wall time is Telic's and the transport's, not ``unittest``'s.
"""

from __future__ import annotations

import json
import os
import platform
import re
import select
import signal
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_types import TextContent

from telic.demo import Change, DemoRepository, TelicTools, drive_mode, find_demo_repo

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"
GOAL = "Fix paginate"


def stats(values: Sequence[float], unit: str = "ms", scale: float = 1e3) -> dict[str, Any]:
    """Median, p95, min and max of ``values`` (seconds, shown in ``unit``)."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        f"median_{unit}": round(statistics.median(ordered) * scale, 3),
        f"p95_{unit}": round(p95 * scale, 3),
        f"min_{unit}": round(ordered[0] * scale, 3),
        f"max_{unit}": round(ordered[-1] * scale, 3),
    }


def machine() -> dict[str, Any]:
    """Machine notes for every result."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "system": platform.system(),
        "load_1m": None if load is None else round(load, 2),
    }


def emit(result: dict[str, Any]) -> None:
    """Print one benchmark's result as JSON on stdout."""
    json.dump({"machine": machine(), **result}, sys.stdout, indent=2)
    sys.stdout.write("\n")


@dataclass
class Call:
    """One tool call as the host saw it."""

    tool: str
    seconds: float
    text_bytes: int
    ok: bool
    kind: str = ""
    """The tool's name, with the artifact type after a slash for ``telic_submit_artifact``."""
    server_cpu: float | None = None
    """The server's CPU seconds across the call, when ``TimedTools`` knows its pid."""
    loop_cpu: float | None = None
    """Of ``server_cpu``, the event loop's thread (the rest: SQLite's and the worker threads)."""


class TimedTools(TelicTools):
    """``TelicTools`` that records every call's wall time and result size.

    Given the server's ``pid``, it also records the server's CPU time across each call.
    """

    def __init__(self, client: Any, pid: int | None = None) -> None:
        super().__init__(client)
        self.calls: list[Call] = []
        self._pid = pid

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        """Call ``tool`` and record how long it took and how much text it returned."""
        pid = self._pid
        used = cpu_seconds(pid) if pid is not None else 0.0
        looped = loop_seconds(pid) if pid is not None else 0.0
        began = time.perf_counter()
        result = await self.client.call_tool(tool, args, progress_callback=progress)
        seconds = time.perf_counter() - began
        server_cpu = cpu_seconds(pid) - used if pid is not None else None
        loop_cpu = loop_seconds(pid) - looped if pid is not None else None
        text = sum(len(c.text.encode()) for c in result.content if isinstance(c, TextContent))
        envelope = result.structured_content
        ok = isinstance(envelope, dict) and envelope.get("ok") is True
        kind = f"{tool}/{args['artifact_type']}" if "artifact_type" in args else tool
        self.calls.append(Call(tool, seconds, text, ok, kind, server_cpu, loop_cpu))
        if not isinstance(envelope, dict) or envelope.get("ok") is result.is_error:
            raise RuntimeError(f"{tool}: no envelope")
        return envelope

    def by_tool(self) -> dict[str, list[float]]:
        """Wall times grouped by tool name."""
        grouped: dict[str, list[float]] = defaultdict(list)
        for call in self.calls:
            grouped[call.tool].append(call.seconds)
        return dict(grouped)

    def cpu_by_kind(self, *, loop: bool = False) -> dict[str, list[float]]:
        """The server's CPU seconds per call (``loop``: its event loop's thread alone), grouped
        by ``Call.kind`` (calls that have it)."""
        grouped: dict[str, list[float]] = defaultdict(list)
        for call in self.calls:
            used = call.loop_cpu if loop else call.server_cpu
            if used is not None:
                grouped[call.kind].append(used)
        return dict(grouped)


class FastWorkspace:
    """The demo repository's native work, done once and replayed for every run.

    ``apply_fix`` really edits the file (from its original bytes), as the fix modes need a real
    before/after; the test runs before and after the fix are recorded once.
    """

    def __init__(self, root: Path) -> None:
        self.repo = DemoRepository.create(find_demo_repo(), root)
        self.root = self.repo.root
        self._original = (root / "src" / "pagination.py").read_bytes()
        self._failing = self.repo.diagnose()
        self.repo.apply_fix()
        self._passing = self.repo.verify()
        self.reset()

    def reset(self) -> None:
        """Put the bug back."""
        (self.root / "src" / "pagination.py").write_bytes(self._original)

    def diagnose(self) -> str:
        """The recorded failing test output."""
        return self._failing

    def apply_fix(self) -> Change:
        """Apply the fix to the original file."""
        self.reset()
        return self.repo.apply_fix()

    def verify(self) -> str:
        """The recorded passing test output."""
        return self._passing


async def full_run(tools: TelicTools, mode: str, workspace: FastWorkspace) -> str:
    """Drive one complete happy-path run; return its run id."""
    driver = await drive_mode(tools, mode, workspace, request=REQUEST, goal=GOAL)
    if driver.action.get("status") != "completed":
        raise RuntimeError(f"{mode} run ended as {driver.action!r}")
    return driver.run_id


_ROOT = str(Path(__file__).resolve().parent.parent)


async def draft_run(tools: TelicTools, mode: str) -> str:
    """Drive one complete run as a draft-following host does; return its run id.

    The host reads nothing but tool results: it grounds when the controller's step is next,
    submits the Evidence under ``draft.before``, then ``draft.body`` with placeholders written
    at the ``fill`` paths (``tests/telic/draft_host.py``), taking each decision's default. It
    never calls ``telic_get_run`` or ``telic_get_artifact``: the draft already carries the ids
    and copies it would read them for.
    """
    if _ROOT not in sys.path:
        sys.path.append(_ROOT)
    from tests.telic.draft_host import follow  # the test suite's host, shared

    start: dict[str, Any] = {"original_request": REQUEST, "mode": mode}
    if mode in ("fix_only", "analyze_and_fix"):
        start["host_capabilities"] = ["repository.read", "repository.write"]
    last = await tools.call("telic_start_run", **start)
    run_id = str(last["run"]["runId"])
    while last["nextAction"]["kind"] == "phase":
        token = {
            "run_id": run_id,
            "action_id": last["nextAction"]["id"],
            "expected_run_version": last["run"]["version"],
        }
        draft = last.get("draft")
        if draft is None:
            last = await tools.call("telic_ground_context", **token)
            continue
        for evidence in draft.get("before", ()):
            await tools.call(
                "telic_submit_artifact", artifact_type="Evidence", body=follow(evidence), **token
            )
        last = await tools.call(
            "telic_submit_artifact",
            artifact_type=draft["type"],
            body=follow(draft),
            source_refs=list(draft.get("sourceRefs", ())),
            **token,
        )
    if last["nextAction"].get("status") != "completed":
        raise RuntimeError(f"{mode} run ended as {last['nextAction']!r}")
    return run_id


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


_THREAD_NS: dict[tuple[int, str], int] = {}
"""Each thread's CPU time when last read, kept after the thread ends (``cpu_seconds``)."""


def cpu_seconds(pid: int) -> float:
    """CPU time ``pid``'s threads have run so far, to the nanosecond (Linux ``schedstat``).

    Finer than ``/proc/<pid>/stat``'s clock ticks (10 ms here, several times a call's cost). A
    thread that ends (an idle worker thread retires) leaves ``/proc/<pid>/task``; its time as
    last read still counts, so a total never falls between two reads. What it ran after that
    read is lost: for a worker that retires after seconds of idleness, nothing.
    """
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            _THREAD_NS[pid, task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return sum(ns for (owner, _), ns in _THREAD_NS.items() if owner == pid) / 1e9


def loop_seconds(pid: int) -> float:
    """CPU time ``pid``'s main thread (where a server's event loop runs) has run so far."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


def server_pid(url: str | None = None) -> int | None:
    """The ``telic serve`` child of this process: over stdio, or over HTTP serving ``url``."""
    bind = None if url is None else url.split("//", 1)[-1].split("/", 1)[0].encode()
    for pid in children_of(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and (bind in argv if bind is not None else b"--http" not in argv):
            return pid
    return None


def rss_kib(pid: int) -> dict[str, int]:
    """Current (VmRSS) and peak (VmHWM) resident set of ``pid``, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


_RESIDENT_PID = re.compile(r"^Telic MCP resident for .* \(pid (\d+)\)$", re.MULTILINE)


def resident_pids(runtime: Path) -> list[int]:
    """Every resident server that announced itself in a log under ``runtime``, oldest first."""
    found: list[int] = []
    for log in runtime.glob("*.log"):
        found += [int(pid) for pid in _RESIDENT_PID.findall(log.read_text(encoding="utf-8"))]
    return found


def stop_residents(runtime: Path) -> None:
    """SIGTERM every resident server started under ``runtime`` and wait for each to exit."""
    for pid in resident_pids(runtime):
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
            select.select([handle], [], [], 30)
        finally:
            os.close(handle)
