"""The ``telic`` command's errors: one or two lines naming what failed, never Python text.

Each test runs ``main`` in-process on a fresh repository folder whose default state directory
lives under the test's own ``XDG_STATE_HOME``, so "creates no state" can be checked exactly.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
from pathlib import Path

import anyio
import pytest

from telic.cli import _main as cli_main, main
from telic.cli._errors import CliError, explain_os_error
from telic.ledger import open_ledger
from telic.server import ServerConfig


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty repository folder; state goes under ``tmp_path/xdg``."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    for name in ("TELIC_STATE_DIR", "TELIC_DATABASE_URL", "TELIC_REPOSITORY_ROOT", "TELIC_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    return root


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"telic {importlib.metadata.version('telic')}"


def test_the_repository_root_is_accepted_after_the_command(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--repository-root", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"runs": []}
    assert (
        main(
            [
                "--repository-root",
                str(tmp_path / "elsewhere"),
                "runs",
                "--repository-root",
                str(repo),
            ]
        )
        == 0
    ), "the option after the command wins"


@pytest.mark.parametrize(
    "argv",
    [
        ["runs", "--limit", "0"],
        ["runs", "--limit", "101"],
        ["runs", "--limit", "ten"],
        ["trace", "r", "--limit", "501"],
        ["trace", "r", "--limit", "0"],
        ["trace", "r", "--after", "-1"],
    ],
)
def test_numbers_outside_their_documented_range_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "out of range" in err or "is not a whole number" in err


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["runs"], 0),
        (["show", "run-1"], 3),
        (["trace", "run-1"], 3),
        (["artifact", "run-1", "a-1"], 3),
        (["digest", "run-1"], 3),
        (["verify", "run-1"], 3),
        (["report", "run-1"], 3),
    ],
)
def test_a_read_only_command_on_a_new_repository_creates_no_state(
    repo: Path, tmp_path: Path, argv: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--repository-root", str(repo), *argv]) == code
    assert not (tmp_path / "xdg").exists(), "no ledger, no state folder"
    said = capsys.readouterr()
    shown = said.out + said.err
    assert str(tmp_path / "xdg" / "telic" / "repositories") in shown, "names the ledger looked for"
    if code:
        assert "'run-1'" in said.err
        assert len(_lines(said.err)) == 2


@pytest.mark.parametrize("argv", [["runs"], ["show", "r"], ["serve"]])
def test_a_missing_repository_is_a_usage_error_that_names_it(
    repo: Path, tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing"
    assert main(["--repository-root", str(missing), *argv]) == 2
    err = capsys.readouterr().err
    assert f"repository {missing} does not exist" in err
    assert "--repository-root" in err, "says what to do"
    assert not (tmp_path / "xdg").exists()


def test_serve_refuses_a_missing_repository_before_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[ServerConfig] = []

    async def serve(config: ServerConfig) -> None:
        served.append(config)

    monkeypatch.setattr(cli_main, "serve", serve)
    assert main(["serve", "--repository-root", str(tmp_path / "missing")]) == 2
    assert served == []


def test_serve_warns_once_when_the_repository_is_not_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def serve(config: ServerConfig) -> None:
        return None

    monkeypatch.setattr(cli_main, "serve", serve)
    assert main(["serve", "--repository-root", str(repo)]) == 0
    err = capsys.readouterr().err
    assert _lines(err) == [
        f"telic: warning: {repo} is not a git repository; grounding will see no tracked files "
        "and cannot fingerprint the work tree (run git init there first)"
    ]


def test_serve_on_a_port_in_use_says_so_in_one_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def serve(config: ServerConfig) -> None:
        raise AssertionError("must not start")

    monkeypatch.setattr(cli_main, "serve", serve)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--repository-root", str(repo), "--http", f"127.0.0.1:{port}"])
    assert code == 1
    err = _lines(capsys.readouterr().err)
    assert err[-2] == f"telic: cannot serve HTTP on 127.0.0.1:{port}: the address is already in use"
    assert "--http HOST:PORT" in err[-1]
    assert "Traceback" not in "".join(err)


def test_an_unknown_run_names_the_run_the_ledger_and_what_to_do(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"

    async def create() -> None:
        async with open_ledger(f"sqlite://{state}", repository_root=repo):
            pass

    anyio.run(create)
    monkeypatch.setenv("TELIC_STATE_DIR", str(state))
    assert main(["--repository-root", str(repo), "show", "no-such-run"]) == 3
    err = _lines(capsys.readouterr().err)
    assert err[0] == f"telic: no run 'no-such-run' in ledger {state / 'ledger.sqlite3'}"
    assert err[1].startswith("  list the runs with: ")
    assert err[1].endswith(" runs")
    assert len(err) == 2
    assert main(["--repository-root", str(repo), "show", "no-such-run", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["code"] == "not_found"


def test_report_into_a_missing_folder_is_refused_before_any_work(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nowhere" / "r.html"
    assert main(["--repository-root", str(repo), "report", "r", "--out", str(out)]) == 2
    err = _lines(capsys.readouterr().err)
    assert err[0] == f"telic: --out {out}: folder {out.parent} does not exist"
    assert not (tmp_path / "xdg").exists()


def test_an_internal_error_prints_no_python_text(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def broken(config: ServerConfig, args: object) -> int:
        raise ValueError("an internal detail")

    monkeypatch.setitem(cli_main._COMMANDS, "runs", broken)
    assert main(["--repository-root", str(repo), "runs"]) == 1
    err = capsys.readouterr().err
    assert "internal detail" not in err
    assert "ValueError" not in err
    assert _lines(err) == [
        "telic: telic runs stopped on an internal error",
        "  please report it with the command you ran; TELIC_DEBUG=1 shows the details",
    ]
    monkeypatch.setenv("TELIC_DEBUG", "1")
    assert main(["--repository-root", str(repo), "runs"]) == 1
    assert "ValueError: an internal detail" in capsys.readouterr().err


def test_an_os_error_becomes_one_plain_line() -> None:
    error = explain_os_error(PermissionError(13, "Permission denied", "/x/y"), "write the report")
    assert str(error) == "cannot write the report: /x/y: permission denied"
    assert isinstance(error, CliError)
    assert error.exit_code == 1


def test_a_broken_chain_is_described_in_words_not_a_record() -> None:
    broken = {"kind": "artifact", "id": "frame-1", "reason": "body does not match its digest"}
    assert cli_main._broken_words(broken) == "artifact frame-1: body does not match its digest"


def test_serve_refuses_a_reports_mirror_that_is_not_there(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served: list[ServerConfig] = []

    async def serve(config: ServerConfig) -> None:
        served.append(config)

    monkeypatch.setattr(cli_main, "serve", serve)
    missing = tmp_path / "mirror"
    args = ["serve", "--repository-root", str(repo), "--reports-mirror", str(missing)]
    assert main(args) == 2
    assert f"report mirror {missing} is not a folder that exists" in capsys.readouterr().err
    missing.mkdir()
    assert main(args) == 0
    assert [c.reports_mirror for c in served] == [missing]
