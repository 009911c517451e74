"""The console script's first stop: ``telic hook`` through a resident server relays its answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from telic.resident._places import places_for
from tests.telic.hosts.test_hook import event
from tests.telic.resident.kit import fake_server


def test_a_hook_call_through_a_resident_server_answers_with_the_servers_bytes(
    tmp_path: Path,
) -> None:
    root = os.path.realpath(tmp_path)
    env = {**os.environ, "TELIC_RUNTIME_DIR": str(tmp_path / "rt")}
    answer = '{"hookSpecificOutput": {"permissionDecision": "allow", "note": "caf\\u00e9"}}'

    def reply(connection: socket.socket) -> None:
        connection.sendall(json.dumps({"output": answer}).encode())

    with fake_server(places_for(root, "", env).hook_socket, reply):
        done = subprocess.run(
            [sys.executable, "-m", "telic", "--repository-root", root, "hook", "claude-code"],
            input=event("Write", file_path=f"{root}/src/a.py"),
            capture_output=True,
            env=env,
            check=True,
        )
    assert done.stdout.decode() == answer + "\n"  # the server's answer: no in-process decision
