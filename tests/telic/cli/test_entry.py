"""The console script's first stop: ``telic hook`` through a resident server loads no ``re``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

from telic.resident._places import places_for
from tests.telic.hosts.test_hook import event
from tests.telic.resident.kit import fake_server

# Modules ``json`` and a facade's first use bring in; none is needed to relay one hook call.
SCANNING = ("re", "enum", "functools", "json")

PROBE = """\
import sys
import tomllib
before = set(sys.modules)
from telic.cli._entry import main
code = main(sys.argv[1:])
sys.stderr.write(" ".join([str(code), *sorted(set(sys.modules) - before)]))
"""
"""Runs the hook as the console script does and reports its exit code and what the call imported
beyond what the interpreter had at its start (the probe itself imports nothing)."""


def test_the_interpreter_does_not_start_with_the_modules_the_hook_must_not_load() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert set(SCANNING).isdisjoint(done.stdout.split())  # so the next test can see them


def test_a_hook_call_through_a_resident_server_imports_no_re_enum_functools_or_json(
    tmp_path: Path,
) -> None:
    root = os.path.realpath(tmp_path)
    env = {**os.environ, "TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    answer = '{"hookSpecificOutput": {"permissionDecision": "allow", "note": "caf\\u00e9"}}'

    def reply(connection: socket.socket) -> None:
        connection.sendall(json.dumps({"output": answer}).encode())

    with fake_server(places_for(root, "", env).hook_socket, reply):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "--repository-root", root, "hook", "claude-code"],
            input=event("Write", file_path=f"{root}/src/a.py"),
            capture_output=True,
            env=env,
            check=True,
        )
    code, *added = done.stderr.decode().split()
    assert code == "0"
    assert done.stdout.decode() == answer + "\n"  # the server's answer: no in-process decision
    assert "telic.resident._shim" in added
    assert [m for m in added if m in SCANNING] == []


def test_the_console_script_starts_at_the_entry_not_at_the_cli_facade() -> None:
    pyproject = Path(__file__).parents[3] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["telic"] == "telic.cli._entry:main"  # the facade's first use loads `re`
