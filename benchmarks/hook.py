"""Latency of ``telic hook claude-code``, run exactly as Claude Code runs it.

Builds a repository with a live ``fix_only`` run executing a node that may write ``src/**`` and
run the one allowlisted command ``pytest -q tests`` (through the service, as the tests do), then
runs the console script ``telic --repository-root <repo> hook claude-code`` as a new process per
call with Claude Code's PreToolUse JSON on stdin, and times each call from spawn to exit. Four
calls take turns: a Write inside the node's scope (allowed) and one outside it (denied), the
allowlisted Bash command (allowed) and another (``rm -rf build``, denied). The first call after
a step computes the run's layers through the controller (the cold path, measured apart); every
later call reads the layer snapshot and decides in-process (the warm path, the p95 the issue
targets: ≤ 100 ms).

Each warm call runs twice in the same round: alone, and while another connection holds the
ledger open, as the MCP server Claude Code keeps running for the session does (the server
opens the database once, for its lifetime). The difference is SQLite's: the last connection to
close a WAL database checkpoints it and deletes its log, which costs the lone hook process a
checkpoint with its fsyncs per call; with the server's connection open, it only closes.

    .venv/bin/python benchmarks/hook.py [--calls 40] [--baseline DIR]

Bytecode is cached first (as ``pip install`` does), even when the environment sets
``PYTHONDONTWRITEBYTECODE``. Two floors are measured in the same rounds, so a row can be read
against the machine's load: a bare ``python -c pass`` and a process that only imports what the
warm path imports. ``--baseline DIR`` names another source tree of Telic (``mkdir DIR && git
archive <commit> | tar -x -C DIR``): its hook is timed in the same rounds, launched the same
way as ours (``python -P -c`` with that tree first on ``PYTHONPATH``, each tree's console-script
entry point from its ``pyproject.toml``), and the JSON shows both; each tree's resident server
is started too, and a Write through each is timed in the same rounds.

Then the same warm Write calls with the repository's resident server running (``telic serve
--resident`` started it): the hook process only imports the standard-library client, and the
decision runs in the warm server, the same code (``telic.hosts._hook``).

Prints JSON and appends its rows (the floors, warm wall-clock and CPU time per call kind, cold,
the baseline if any, and through the resident server) to ``benchmarks/README.md``.
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
import tomllib
from pathlib import Path
from typing import Any

import anyio
from _common import COLUMNS, append_rows, row, summary  # type: ignore[import-not-found]

from telic.ledger import DirectLedger, open_ledger, resolve_url, sqlite_paths
from telic.roles import open_service
from tests.telic.controller.builders import perms
from tests.telic.roles.kit import VERIFY_READ, ServiceFlow, fake_grounder

TELIC = Path(sys.executable).parent / "telic"
ALLOWED_COMMAND = "pytest -q tests"
DENIED_COMMAND = "rm -rf build"
KINDS = ("write allowed", "write denied", "bash allowed", "bash denied")
"""The four warm calls, in the order they take turns."""


async def live_run(repo: Path, state: Path) -> str:
    """Start a fix_only run and drive it to the execution of a node that may write src/**."""
    async with (
        open_ledger(f"sqlite://{state}", repository_root=repo) as ledger,
        open_service(
            ledger=ledger, repository_root=str(repo), state_dir=state, grounder=fake_grounder
        ) as service,
    ):
        granted = ("repository.read", "repository.write", "shell.execute", "subagent.spawn")
        flow = await ServiceFlow.start(
            service,
            "fix_only",
            host_capabilities=(*granted, "shell.inspect"),
            authorization_granted=granted,
            shell_execute_allowlist=[ALLOWED_COMMAND],
        )
        b = flow.b
        permissions = perms(read=["**"], write=["src/**"])
        permissions["shell"]["executeAllowlist"] = [ALLOWED_COMMAND]
        b.permissions = permissions
        b.verifications = [VERIFY_READ]
        await flow.ground()
        await flow.submit("ProblemFrame", b.frame())
        await flow.submit("TaskContract", b.contract())
        await flow.submit("PromptReview", b.prompt_review())
        node = b.node(tools=["repository.read", "repository.write", "shell.execute"])
        await flow.submit("WorkPlan", b.plan(nodes=[node]))
        return b.run_id


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: list[float] = []
"""CPU seconds (user + system) of each warm call's process: less sensitive to the load of
other work on the machine than the wall-clock time, though not immune to it."""


def event(repo: Path, kind: str) -> bytes:
    """Claude Code's PreToolUse stdin for one call of ``kind`` (one of ``KINDS``)."""
    if kind.startswith("write"):
        path = "src/a.py" if kind == "write allowed" else "README.md"
        tool, tool_input = "Write", {"file_path": f"{repo}/{path}", "content": "x"}
    else:
        command = ALLOWED_COMMAND if kind == "bash allowed" else DENIED_COMMAND
        tool, tool_input = "Bash", {"command": command, "description": "bench"}
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    ).encode()


def call(
    repo: Path, env: dict[str, str], kind: str, command: list[str] | None = None
) -> tuple[float, dict[str, Any]]:
    """Run one hook call as a new process; return its seconds and its answer."""
    if command is None:
        command = [str(TELIC), "--repository-root", str(repo), "hook", "claude-code"]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(
        command, input=event(repo, kind), capture_output=True, env=env, check=True
    )
    elapsed = time.perf_counter() - start
    CPU.append(_cpu() - cpu)
    return elapsed, json.loads(done.stdout)["hookSpecificOutput"]


EXPECTED: dict[str, str] = {
    "write allowed": "allow",
    "write denied": "deny",
    "bash allowed": "allow",
    "bash denied": "deny",
}


IMPORTS = "import telic.cli._entry, telic.hosts._hook"
"""What the warm path imports, without deciding anything."""


def spawn(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to exit of ``command`` (the machine's floor for a new process)."""
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, env=env, check=True)
    return time.perf_counter() - start


START = (
    "import os, sys; from telic.resident._shim import ensure_server, parse_serve; "
    "ensure_server(parse_serve(['--resident'], sys.argv[1], os.environ), os.environ).close()"
)
"""Starts the resident server of the tree first on ``PYTHONPATH`` (``--baseline``'s)."""


def _through_resident(
    repo: Path,
    env: dict[str, str],
    calls: int,
    launched: tuple[list[str], list[str], dict[str, str]] | None = None,
) -> tuple[list[float], list[float], bool, dict[str, list[float]]]:
    """Warm calls while the repository's resident server runs; whether each answer equals the
    in-process one for the same call (asked right before it, with the resident server unseen).

    With ``launched`` (our ``python -c`` launcher, the baseline's command and environment), the
    baseline tree's own resident server is started too (the socket's name hashes the code, so
    each tree's hook finds only its own server), and each round also times a Write through
    each tree's server, launched alike, ours then theirs. Those times are the last value
    (wall-clock and CPU lists by key); an answer of the baseline that is not ours fails the run.
    """
    from telic.resident._shim import ensure_server, parse_serve

    runtime = Path(tempfile.mkdtemp(prefix="thb-"))
    with_server = {**env, "TELIC_RUNTIME_DIR": str(runtime / "rt")}
    options = parse_serve(["--resident"], str(repo), with_server)
    ensure_server(options, with_server).close()
    compared: dict[str, list[float]] = {}
    try:
        if launched is not None:
            ours, theirs, baseline_env = launched
            theirs_env = {**baseline_env, "TELIC_RUNTIME_DIR": with_server["TELIC_RUNTIME_DIR"]}
            subprocess.run(
                [sys.executable, "-P", "-c", START, str(repo)], env=theirs_env, check=True
            )
            compared = {key: [] for key in RESIDENT_COMPARED}
        walls: list[float] = []
        cpus: list[float] = []
        same = True
        for index in range(calls):
            kind = KINDS[index % 2]
            elapsed, answer = call(repo, with_server, kind)
            walls.append(elapsed)
            cpus.append(CPU.pop())
            same = same and answer == call(repo, env, kind)[1]
            CPU.pop()  # the in-process call's, not measured here
            if launched is not None:
                mine = call(repo, with_server, "write allowed", ours)
                compared["ours"].append(mine[0])
                compared["ours cpu"].append(CPU.pop())
                other = call(repo, theirs_env, "write allowed", theirs)
                compared["baseline"].append(other[0])
                compared["baseline cpu"].append(CPU.pop())
                same = same and other[1] == mine[1]
        return walls, cpus, same, compared
    finally:
        for log in (runtime / "rt").glob("*.log"):
            for line in log.read_text(encoding="utf-8").splitlines():
                if "(pid " in line:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(line.rsplit("(pid ", 1)[1].rstrip(")")), signal.SIGTERM)
        shutil.rmtree(runtime, ignore_errors=True)


RESIDENT_COMPARED = ("ours", "ours cpu", "baseline", "baseline cpu")
OURS = Path(__file__).resolve().parents[1]
"""This source tree."""


def launcher(tree: Path) -> str:
    """How a tree that is not installed runs its hook (``--baseline``): as its console script
    does, from the entry point its ``pyproject.toml`` names, as ``python -c`` code."""
    project = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module, name = project["scripts"]["telic"].split(":")
    return f"import sys; from {module} import {name} as main; sys.exit(main())"


def _baseline(tree: Path, repo: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run the hook of the Telic source tree ``tree``."""
    path = os.pathsep.join(str(tree / part) for part in ("", "packets", "actors"))
    baseline_env = {**env, "PYTHONPATH": path}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], env=baseline_env)
    command = [
        sys.executable,
        "-P",
        "-c",
        launcher(tree),
        "--repository-root",
        str(repo),
        "hook",
        "claude-code",
    ]
    return command, baseline_env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calls", type=int, default=40, help="rounds: warm calls of each kind (default 40)"
    )
    parser.add_argument("--cold", type=int, default=5, help="cold calls (default 5)")
    parser.add_argument("--baseline", type=Path, help="another Telic source tree to time alike")
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
        baseline = None if args.baseline is None else _baseline(args.baseline, repo, env)
        ours_launched = [sys.executable, "-P", "-c", launcher(OURS), "--repository-root"]
        ours_launched += [str(repo)]
        ours_launched += ["hook", "claude-code"]
        cold: list[float] = []
        for _ in range(args.cold):
            for snapshot in (state / "hook-layers").glob("*.json"):
                snapshot.unlink()
            cold.append(call(repo, env, "write allowed")[0])
        floor: list[float] = []
        imports: list[float] = []
        walls: dict[str, list[float]] = {f"{k}{h}": [] for k in KINDS for h in ("", ", held")}
        cpus: dict[str, list[float]] = {key: [] for key in walls}
        compared: dict[str, list[float]] = {
            f"{kind}: {tree}": []
            for kind in ("write allowed", "bash allowed")
            for tree in ("ours", "baseline")
        }
        compared_cpu: dict[str, list[float]] = {key: [] for key in compared}
        wrong: list[str] = []
        database = sqlite_paths(resolve_url(None, str(repo), env))[1]
        for _ in range(args.calls):
            floor.append(spawn([sys.executable, "-c", "pass"], env))
            imports.append(spawn([sys.executable, "-c", IMPORTS], env))
            for held in (False, True):
                server = DirectLedger(database) if held else None
                if server is not None:
                    server.live_runs(str(repo))
                try:
                    for kind in KINDS:
                        key = f"{kind}, held" if held else kind
                        elapsed, answer = call(repo, env, kind)
                        walls[key].append(elapsed)
                        cpus[key].append(CPU.pop())
                        if answer["permissionDecision"] != EXPECTED[kind]:
                            wrong.append(f"{key}: {answer['permissionDecisionReason']}")
                finally:
                    if server is not None:
                        server.close()
            if baseline is not None:  # the same calls, launched alike, alone: ours, then theirs
                command, baseline_env = baseline
                for kind in ("write allowed", "bash allowed"):
                    compared[f"{kind}: ours"].append(call(repo, env, kind, ours_launched)[0])
                    compared_cpu[f"{kind}: ours"].append(CPU.pop())
                    compared[f"{kind}: baseline"].append(call(repo, baseline_env, kind, command)[0])
                    compared_cpu[f"{kind}: baseline"].append(CPU.pop())
        both = None if baseline is None else (ours_launched, *baseline)
        resident, resident_cpu, same, resident_compared = _through_resident(
            repo, env, args.calls, both
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    everything = [t for times in walls.values() for t in times]
    held_all = [t for key, times in walls.items() if key.endswith("held") for t in times]
    result: dict[str, Any] = {
        "floor_interpreter": summary(floor),
        "floor_imports": summary(imports),
        "warm_all_kinds": summary(everything),
        "warm_all_kinds_held": summary(held_all),
        **{f"warm {key}": summary(times) for key, times in walls.items()},
        **{f"warm {key} cpu": summary(times) for key, times in cpus.items()},
        "cold": summary(cold),
        "resident": summary(resident),
        "resident_cpu": summary(resident_cpu),
        "resident_answers_equal_in_process": same,
        "wrong_answers": wrong,
        "load": os.getloadavg()[0],
    }
    if baseline is not None:
        result["launched_alike"] = {key: summary(times) for key, times in compared.items()}
        result["launched_alike_cpu"] = {key: summary(t) for key, t in compared_cpu.items()}
        result["resident_launched_alike"] = {
            key: summary(times) for key, times in resident_compared.items()
        }
    print(json.dumps(result, indent=2))
    if wrong:
        print(f"{len(wrong)} answers were not the expected ones", file=sys.stderr)
        return 1
    if not args.no_readme:
        rows = [
            row("floor: `python -c pass`", result["floor_interpreter"]),
            row("floor: the hook's imports alone", result["floor_imports"]),
            row(
                f"warm call, all four kinds, alone and held ({len(everything)})",
                result["warm_all_kinds"],
            ),
            row(
                f"warm call, all four kinds, held: server's connection open ({len(held_all)})",
                result["warm_all_kinds_held"],
            ),
        ]
        for key, times in walls.items():
            rows.append(row(f"warm: {key}", summary(times)))
        rows.append(
            row("warm: write allowed, CPU time (user + sys)", summary(cpus["write allowed"]))
        )
        rows.append(row("warm: bash allowed, CPU time (user + sys)", summary(cpus["bash allowed"])))
        rows.append(row(f"cold call: layers through the controller ({args.cold})", result["cold"]))
        if baseline is not None:
            name = args.baseline.name
            for key, times in compared.items():
                where = "this tree" if key.endswith("ours") else f"baseline {name}"
                what = key.rsplit(":", 1)[0]
                rows.append(row(f"{what}, alone, `python -c` launcher: {where}", summary(times)))
                cpu = summary(compared_cpu[key])
                rows.append(row(f"{what}, alone, `python -c` launcher: {where}, CPU time", cpu))
        if baseline is not None:
            name = args.baseline.name
            for key, times in resident_compared.items():
                where = f"baseline {name}" if key.startswith("baseline") else "this tree"
                what = ", CPU time" if key.endswith("cpu") else ""
                label = f"write allowed via each tree's resident server, launched alike: {where}"
                rows.append(row(label + what, summary(times)))
        rows.append(row(f"via the resident server, new process ({args.calls})", result["resident"]))
        rows.append(row("via the resident server: CPU time of the process", result["resident_cpu"]))
        append_rows("Claude Code hook — `benchmarks/hook.py`", COLUMNS, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
