"""The ``telic`` command: the demo end to end, inspection commands and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from telic.cli import _main as cli_main, main
from telic.demo import DemoOutcome, print_demo
from telic.demo._demo import STEPS
from telic.server import ServerConfig

ROOT = Path(__file__).resolve().parents[3]


def _telic(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "telic", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def _children_of(pid: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(entry.name)
    return found


@pytest.mark.slow
def test_the_demo_completes_a_fix_with_a_cited_packet_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    done = _telic("demo", "--json", "--workdir", str(tmp_path / "demo"))
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "completed"
    assert outcome["ledgerIntact"] is True
    assert outcome["packetId"].startswith("pk_")
    assert outcome["packetId"] in outcome["digest"]
    assert outcome["seconds"] > 0  # timed, not judged: speed is a benchmark's question
    assert outcome["progressSteps"] == STEPS, "the progress line reaches its end"
    assert outcome["workdir"] == str(tmp_path / "demo")
    assert Path(outcome["ledger"]).is_file()
    assert _children_of(os.getpid()) == []
    state = {
        "TELIC_STATE_DIR": outcome["stateDir"],
        "TELIC_REPOSITORY_ROOT": outcome["repository"],
    }
    runs = json.loads(_telic("runs", "--json", env=state).stdout)["runs"]
    assert [r["runId"] for r in runs] == [outcome["runId"]]
    shown = _telic("show", outcome["runId"], env=state)
    assert "analyze_and_fix" in shown.stdout
    verified = _telic("verify", outcome["runId"], "--json", env=state)
    assert verified.returncode == 0
    assert json.loads(verified.stdout)["ok"] is True
    trace = json.loads(_telic("trace", outcome["runId"], "--json", env=state).stdout)
    assert trace["events"][0]["eventType"] == "run_started"
    report = _telic("artifact", outcome["runId"], "report-1", "--json", env=state)
    assert json.loads(report.stdout)["artifact"]["body"]["terminalStatus"] == "completed"
    digest = _telic("digest", outcome["runId"], env=state)
    assert outcome["packetId"] in digest.stdout
    markdown = _telic("report", outcome["runId"], env=state)
    assert markdown.returncode == 0
    assert outcome["runId"] in markdown.stdout
    missing = _telic("show", "no-such-run", env=state)
    assert missing.returncode == 3


def test_doctor_reports_every_check_as_json(tmp_path: Path) -> None:
    env = {"TELIC_REPOSITORY_ROOT": str(tmp_path), "TELIC_STATE_DIR": str(tmp_path / "inside")}
    done = _telic("doctor", "--json", env=env)
    report = json.loads(done.stdout)
    names = [c["name"] for c in report["checks"]]
    assert names == ["python", "repository", "state dir", "database", "git", "rg"]
    assert done.returncode == 1, "a state dir inside the repository fails the doctor"
    assert not (tmp_path / "inside").exists(), "the doctor never creates state"


def test_usage_errors_exit_with_two(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["verify"])
    assert exited.value.code == 2
    assert main(["serve", "--http", "0.0.0.0:8765"]) == 2
    assert "bearer token" in capsys.readouterr().err


def test_serve_takes_the_schema_mode_from_its_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    served: list[ServerConfig] = []

    async def serve(config: ServerConfig) -> None:
        served.append(config)

    monkeypatch.setattr(cli_main, "serve", serve)
    monkeypatch.setenv("TELIC_REPOSITORY_ROOT", str(tmp_path))
    monkeypatch.delenv("TELIC_SCHEMAS", raising=False)
    assert main(["serve"]) == 0
    assert main(["serve", "--schemas", "full"]) == 0
    monkeypatch.setenv("TELIC_SCHEMAS", "full")
    assert main(["serve"]) == 0
    assert [config.schemas for config in served] == ["once", "full", "full"]
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--schemas", "sometimes"])
    assert exited.value.code == 2
    monkeypatch.setenv("TELIC_SCHEMAS", "sometimes")
    assert main(["serve"]) == 2


def _outcome(tmp_path: Path) -> DemoOutcome:
    return DemoOutcome(
        run_id="run-1",
        status="completed",
        summary="Located the off-by-one in paginate, fixed it in src/, and the tests pass.",
        version=13,
        packet_id="pk_1",
        digest="[completed/verified] [pk_1] explore: …",
        intact=True,
        records_checked=51,
        state_dir=tmp_path / "state",
        repository=tmp_path / "repo",
        seconds=2.5,
        diff="--- a/src/pagination.py\n+++ b/src/pagination.py\n",
        steps=STEPS,
    )


def test_the_demo_says_first_that_a_scripted_stand_in_plays_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    print_demo(_outcome(tmp_path), "./.venv/bin/telic")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Telic demo: a scripted stand-in plays the host's model.")
    assert "No AI model is called" in lines[0]
    assert any(line.endswith("(written by the stand-in)") for line in lines)


def test_the_demo_shows_commands_that_run_and_how_to_clean_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    print_demo(_outcome(tmp_path), "./.venv/bin/telic")
    out = capsys.readouterr().out
    state, repo = tmp_path / "state", tmp_path / "repo"
    assert f"TELIC_STATE_DIR={state} ./.venv/bin/telic --repository-root {repo} show run-1" in out
    assert out.rstrip().endswith(f"rm -rf {tmp_path}")


def test_the_demo_refuses_a_workdir_that_already_holds_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "repo").mkdir()
    assert main(["demo", "--workdir", str(tmp_path)]) == 2
    assert "already holds a demo" in capsys.readouterr().err


def _broken_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "ledger.sqlite3").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    return state


def test_a_broken_ledger_fails_a_command_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"TELIC_REPOSITORY_ROOT": str(repo), "TELIC_STATE_DIR": str(_broken_state(tmp_path))}
    done = _telic("runs", env=env)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("telic: the ledger ")
    assert "file is not a database" in done.stderr
    as_json = json.loads(_telic("runs", "--json", env=env).stdout)
    assert as_json["code"] == "ledger_error"


def test_the_doctor_fails_a_broken_or_read_only_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from telic.cli._doctor import run_doctor
    from telic.ledger import _paths

    repo = tmp_path / "repo"
    repo.mkdir()
    broken = _broken_state(tmp_path)
    checks = {c.name: c for c in run_doctor(ServerConfig(repository_root=repo, state_dir=broken))}
    assert not checks["database"].ok
    assert "cannot be read: file is not a database" in checks["database"].detail
    fine = tmp_path / "fine"
    fine.mkdir(mode=0o700)
    config = ServerConfig(repository_root=repo, state_dir=fine)
    assert {c.name: c for c in run_doctor(config)}["database"].ok
    monkeypatch.setattr(_paths, "_writable", lambda path: False)  # a read-only mount, even for root
    database = {c.name: c for c in run_doctor(config)}["database"]
    assert (database.ok, "read-only" in database.detail) == (False, True)
