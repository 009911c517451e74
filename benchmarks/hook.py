"""Latency of ``telic hook claude-code``, run exactly as Claude Code runs it.

Builds a repository with a live ``fix_only`` run executing a node that may write ``src/**``
(through the service, as the tests do), then runs the console script
``telic --repository-root <repo> hook claude-code`` as a new process per call with Claude Code's
PreToolUse JSON on stdin, alternating a write inside the node's scope (allowed) and one outside
it (denied), and times each call from spawn to exit. The first call after a step computes the
run's layers through the controller (the cold path, measured apart); every later call reads
the layer snapshot and decides in-process (the warm path, the p95 the issue targets: ≤ 100 ms).

    .venv/bin/python benchmarks/hook.py [--calls 60]

Bytecode is cached first (as ``pip install`` does), even when the environment sets
``PYTHONDONTWRITEBYTECODE``. Two floors are measured in the same loop, so a row can be read
against the machine's load: a bare ``python -c pass`` and a process that only imports what the
warm path imports.

Then the same warm calls with the repository's resident server running (``telic serve
--resident`` started it): the hook process only imports the standard-library client, and the
decision runs in the warm server, the same code (``telic.hosts._hook``).

Prints JSON and appends seven rows (the two floors, warm wall-clock and CPU time, cold, and
wall-clock and CPU time through the resident server) to ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, row, summary  # type: ignore[import-not-found]

from telic.ledger import open_ledger
from telic.roles import open_service
from tests.telic.controller.builders import perms
from tests.telic.roles.kit import VERIFY_READ, ServiceFlow, fake_grounder

TELIC = Path(sys.executable).parent / "telic"


async def live_run(repo: Path, state: Path) -> str:
    """Start a fix_only run and drive it to the execution of a node that may write src/**."""
    async with (
        open_ledger(f"sqlite://{state}", repository_root=repo) as ledger,
        open_service(
            ledger=ledger, repository_root=str(repo), state_dir=state, grounder=fake_grounder
        ) as service,
    ):
        flow = await ServiceFlow.start(
            service,
            "fix_only",
            authorization_granted=("repository.read", "repository.write", "subagent.spawn"),
        )
        b = flow.b
        b.permissions = perms(read=["**"], write=["src/**"])
        b.verifications = [VERIFY_READ]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        node = b.node(tools=["repository.read", "repository.write"])
        await flow.submit("WorkPlan", b.plan(nodes=[node]))
        return b.run_id


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: list[float] = []
"""CPU seconds (user + system) of each warm call's process: less sensitive to the load of
other work on the machine than the wall-clock time, though not immune to it."""


def call(repo: Path, env: dict[str, str], path: str) -> tuple[float, dict[str, Any]]:
    stdin = json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": f"{repo}/{path}", "content": "x"},
        }
    ).encode()
    command = [str(TELIC), "--repository-root", str(repo), "hook", "claude-code"]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=True)
    elapsed = time.perf_counter() - start
    CPU.append(_cpu() - cpu)
    return elapsed, json.loads(done.stdout)["hookSpecificOutput"]


IMPORTS = "import telic.cli._entry, telic.hosts._hook"
"""What the warm path imports, without deciding anything."""


def spawn(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to exit of ``command`` (the machine's floor for a new process)."""
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, env=env, check=True)
    return time.perf_counter() - start


def _through_resident(
    repo: Path, env: dict[str, str], scratch: Path, calls: int
) -> tuple[list[float], list[float], bool]:
    """Warm calls while the repository's resident server runs; whether each answer equals the
    in-process one for the same call (asked right before it, with the resident server unseen)."""
    from telic.resident._shim import ensure_server, parse_serve

    runtime = Path(tempfile.mkdtemp(prefix="thb-"))
    with_server = {**env, "TELIC_RUNTIME_DIR": str(runtime / "rt")}
    options = parse_serve(["--resident"], str(repo), with_server)
    ensure_server(options, with_server).close()
    try:
        walls: list[float] = []
        cpus: list[float] = []
        same = True
        for index in range(calls):
            path = "src/a.py" if index % 2 == 0 else "README.md"
            elapsed, answer = call(repo, with_server, path)
            walls.append(elapsed)
            cpus.append(CPU.pop())
            same = same and answer == call(repo, env, path)[1]
            CPU.pop()  # the in-process call's, not measured here
        return walls, cpus, same
    finally:
        for log in (runtime / "rt").glob("*.log"):
            for line in log.read_text(encoding="utf-8").splitlines():
                if "(pid " in line:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(line.rsplit("(pid ", 1)[1].rstrip(")")), signal.SIGTERM)
        shutil.rmtree(runtime, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60, help="warm calls (default 60)")
    parser.add_argument("--cold", type=int, default=5, help="cold calls (default 5)")
    parser.add_argument("--no-readme", action="store_true", help="do not append rows")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="telic-hook-bench-"))
    try:
        repo, state = scratch / "repo", scratch / "state"
        (repo / "src").mkdir(parents=True)
        state.mkdir()
        anyio.run(live_run, repo, state)
        # The in-process rows must not find a resident server: an empty runtime directory.
        env = {
            **os.environ,
            "TELIC_STATE_DIR": str(state),
            "TELIC_RUNTIME_DIR": str(scratch / "none"),
        }
        # As after ``pip install``: the modules' bytecode is cached. An environment that sets
        # PYTHONDONTWRITEBYTECODE would otherwise compile every module from source per call.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", IMPORTS], env=env, check=True)
        cold: list[float] = []
        for _ in range(args.cold):
            for snapshot in (state / "hook-layers").glob("*.json"):
                snapshot.unlink()
            cold.append(call(repo, env, "src/a.py")[0])
        floor = [spawn([sys.executable, "-c", "pass"], env) for _ in range(args.calls // 2)]
        imports = [spawn([sys.executable, "-c", IMPORTS], env) for _ in range(args.calls // 2)]
        CPU.clear()
        warm: list[float] = []
        verdicts: dict[str, int] = {}
        for index in range(args.calls):
            path = "src/a.py" if index % 2 == 0 else "README.md"
            elapsed, answer = call(repo, env, path)
            warm.append(elapsed)
            verdict = answer["permissionDecision"]
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
        resident, resident_cpu, same = _through_resident(repo, env, scratch, args.calls)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = {
        "floor_interpreter": summary(floor),
        "floor_imports": summary(imports),
        "warm": summary(warm),
        "warm_cpu": summary(CPU),
        "cold": summary(cold),
        "resident": summary(resident),
        "resident_cpu": summary(resident_cpu),
        "resident_answers_equal_in_process": same,
        "verdicts": verdicts,
        "load": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=2))
    if not args.no_readme:
        append_rows(
            "Claude Code hook — `benchmarks/hook.py`",
            COLUMNS,
            [
                row("floor: `python -c pass`", result["floor_interpreter"]),
                row("floor: the hook's imports alone", result["floor_imports"]),
                row(f"warm call, new process ({args.calls} calls)", result["warm"]),
                row("warm call: CPU time of the process (user + sys)", result["warm_cpu"]),
                row(f"cold call: layers through the controller ({args.cold})", result["cold"]),
                row(f"via the resident server, new process ({args.calls})", result["resident"]),
                row("via the resident server: CPU time of the process", result["resident_cpu"]),
            ],
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
