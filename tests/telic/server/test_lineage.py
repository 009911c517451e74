"""Run lineage over real ``telic serve`` processes, on stdio and on streamable HTTP.

A host that ends a run and starts its follow-up with ``prior_run_id`` gets a linked run: the
run row and the trace say so, the follow-up may cite the first run's Evidence and completes,
and the report links both. A reference into any run but the prior (or to a prior artifact that
is not Evidence) is refused and changes nothing; a prior run that is still running, belongs to
another repository or was tampered with refuses the linked start, and no run is stored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.demo import (
    DemoRepository,
    RunDriver,
    TelicTools,
    drive_mode,
    find_demo_repo,
    http_client,
    http_server,
    stdio_parameters,
)

pytestmark = pytest.mark.anyio

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause"
FOLLOW_UP = "Explain why paginate's off-by-one was missed, citing what the first run observed"
TRANSPORTS = [("stdio", "asyncio"), ("http", "asyncio")]
"""Each transport, with the client on asyncio: the server runs in its own process, so the
client's backend changes nothing the server does (tests/conftest.py)."""
JSON = dict[str, Any]


@asynccontextmanager
async def _tools(
    transport: str, repo: Path, state: Path, database_url: str | None = None
) -> AsyncIterator[TelicTools]:
    if transport == "stdio":
        params = stdio_parameters(repo, state, database_url=database_url)
        async with Client(params) as client:
            yield TelicTools(client)
    else:
        async with (
            http_server(repo, state, token="s3cret", database_url=database_url) as url,
            http_client(url, "s3cret") as client,
        ):
            yield TelicTools(client)


class _Citing(TelicTools):
    """A host that also cites ``prior`` Evidence wherever its WorkResult and review cite its
    own (the review repeats the WorkResult's coverage evidence exactly, as the rules ask)."""

    def __init__(self, tools: TelicTools, prior: str) -> None:
        super().__init__(tools.client)
        self.prior = prior

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> JSON:
        body = args.get("body")
        kind = args.get("artifact_type")
        if tool == "telic_submit_artifact" and isinstance(body, dict):
            if kind == "WorkResult":
                body["evidenceRefs"].append(self.prior)
                for entry in body["acceptanceCoverage"]:
                    entry["evidenceRefs"].append(self.prior)
            elif kind == "QualityReview":
                for entry in body["acceptanceResults"]:
                    entry["evidenceRefs"].append(self.prior)
        return await super().attempt(tool, progress, **args)


async def _finished(tools: TelicTools, repo: DemoRepository, **start: Any) -> str:
    driver = await drive_mode(
        tools, "analyze_only", repo, request=REQUEST, goal="Find it", start=start
    )
    assert driver.action["status"] == "completed"
    return driver.run_id


async def _unchanged(tools: TelicTools, run_id: str) -> tuple[int, list[str], int]:
    details = await tools.call("telic_get_run", run_id=run_id)
    trace = await tools.call("telic_get_trace", run_id=run_id, limit=500)
    ids = [a["id"] for a in details["artifacts"]]
    return details["run"]["version"], ids, len(trace["events"])


def _rules(envelope: Mapping[str, Any]) -> set[str]:
    return {issue.get("rule") for issue in envelope.get("issues", [])}


@pytest.mark.parametrize(("transport", "anyio_backend"), TRANSPORTS)
async def test_a_follow_up_cites_the_first_runs_evidence_and_a_third_runs_reference_is_refused(
    transport: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(120):
        async with _tools(transport, repo.root, state) as tools:
            first = await _finished(tools, repo)
            evidence = f"artifact://{first}/evidence-1"
            citing = _Citing(tools, evidence)
            second = await _finished(citing, repo, prior_run_id=first)
            details = await tools.call("telic_get_run", run_id=second)
            result = await tools.call("telic_get_artifact", run_id=second, artifact_id="result-1")
            trace = await tools.call("telic_get_trace", run_id=second, limit=500)
            verified = await tools.call("telic_verify_run", run_id=second)
            listed = await tools.call("telic_list_runs", limit=10)
            report = await tools.client.read_resource(f"telic://runs/{second}/report.md")

            # A third run follows the second: the first run's Evidence is not its prior's.
            third = await RunDriver.start(
                tools, "analyze_only", FOLLOW_UP, "Explain it", prior_run_id=second
            )
            await third.ground()
            run_id = third.run_id
            before = await _unchanged(tools, run_id)
            submit = {
                "run_id": run_id,
                "artifact_type": "ProblemFrame",
                "body": third.bodies.frame(),
                **third.token(),
            }
            foreign = await tools.attempt("telic_submit_artifact", source_refs=[evidence], **submit)
            not_evidence = await tools.attempt(
                "telic_submit_artifact", source_refs=[f"artifact://{second}/result-1"], **submit
            )
            after = await _unchanged(tools, run_id)

    assert details["run"]["priorRunId"] == first
    assert details["run"]["status"] == "completed"
    assert evidence in result["artifact"]["body"]["evidenceRefs"]
    linked = trace["events"][1]
    assert linked["eventType"] == "lineage_linked"
    assert (linked["actor"], linked["phase"]) == ("controller", "context_discovery")
    assert linked["inputRefs"] == [f"trace://{first}"]
    assert linked["outputRefs"] == []
    assert linked["rationaleSummary"] == f"Linked to prior run {first}"
    assert verified["intact"] is True
    chain = {run["runId"]: run.get("priorRunId") for run in listed["runs"]}
    assert chain[second] == first
    assert chain[first] is None
    assert f"Follows run `{first}`" in report.contents[0].text  # type: ignore[union-attr]

    assert foreign["ok"] is False
    assert foreign["code"] == "invariant_violation"
    assert "REF-SAME-RUN" in _rules(foreign)
    assert "Cross-run artifact reference denied" in foreign["error"]
    assert "REF-LINKED-EVIDENCE" in _rules(not_evidence)
    assert "must target an Evidence artifact" in not_evidence["error"]
    assert after == before


async def _refused_start(tools: TelicTools, prior: str) -> JSON:
    before = await tools.call("telic_list_runs", limit=100)
    refused = await tools.attempt(
        "telic_start_run", original_request=FOLLOW_UP, mode="analyze_only", prior_run_id=prior
    )
    after = await tools.call("telic_list_runs", limit=100)
    assert after["runs"] == before["runs"]  # nothing stored
    assert refused["ok"] is False
    assert refused["code"] == "lineage_refused"
    return refused


@pytest.mark.parametrize(("transport", "anyio_backend"), TRANSPORTS)
async def test_a_running_prior_run_refuses_the_linked_start(
    transport: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with _tools(transport, repo.root, state) as tools:
            running = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            refused = await _refused_start(tools, running["run"]["runId"])
            cancel = {"action_id": running["nextAction"]["id"], "expected_run_version": 1}
            await tools.call("telic_cancel_run", run_id=running["run"]["runId"], **cancel)
            cancelled_prior = await tools.call(
                "telic_start_run", original_request=FOLLOW_UP, mode="analyze_only",
                prior_run_id=running["run"]["runId"],
            )  # fmt: skip
    assert _rules(refused) == {"RUN-PRIOR-TERMINAL"}
    assert refused["error"].startswith("Prior run must be terminal before lineage link")
    assert cancelled_prior["run"]["priorRunId"] == running["run"]["runId"]


def _tamper(database: Path, run_id: str, artifact_id: str) -> None:
    """Rewrite a stored body behind the ledger's back, as someone with the file could."""
    with closing(sqlite3.connect(database)) as connection, connection:
        (digest,) = connection.execute(
            "SELECT sha256 FROM artifacts WHERE run_id = ? AND artifact_id = ?",
            (run_id, artifact_id),
        ).fetchone()
        connection.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (b"{}", digest))


@pytest.mark.parametrize(("transport", "anyio_backend"), TRANSPORTS)
async def test_a_tampered_prior_run_refuses_the_linked_start(
    transport: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(90):
        async with _tools(transport, repo.root, state) as tools:
            first = await _finished(tools, repo)
            _tamper(state / "ledger.sqlite3", first, "evidence-1")
            refused = await _refused_start(tools, first)
            verified = await tools.call("telic_verify_run", run_id=first)
    assert _rules(refused) == {"RUN-PRIOR-INTACT"}
    assert refused["error"].startswith("Artifact integrity check failed")
    assert verified["intact"] is False


@pytest.mark.parametrize(("transport", "anyio_backend"), TRANSPORTS)
async def test_a_prior_run_of_another_repository_refuses_the_linked_start(
    transport: str, repo: DemoRepository, tmp_path: Path
) -> None:
    other = DemoRepository.create(find_demo_repo(), tmp_path / "other")
    shared = f"sqlite:///{tmp_path / 'shared'}"  # one ledger for both repositories
    with anyio.fail_after(60):
        async with _tools(transport, other.root, tmp_path / "s1", shared) as tools:
            elsewhere = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            cancel = {"action_id": elsewhere["nextAction"]["id"], "expected_run_version": 1}
            await tools.call("telic_cancel_run", run_id=elsewhere["run"]["runId"], **cancel)
        prior = elsewhere["run"]["runId"]
        async with _tools(transport, repo.root, tmp_path / "s2", shared) as tools:
            mismatch = await _refused_start(tools, prior)
        async with _tools(transport, repo.root, tmp_path / "s3") as tools:  # its own ledger
            missing = await _refused_start(tools, prior)
    assert _rules(mismatch) == {"RUN-PRIOR-ROOT"}
    assert mismatch["error"].startswith("Prior run repository root mismatch")
    assert _rules(missing) == {"RUN-PRIOR-EXISTS"}
    assert missing["error"].startswith(f"Prior run {prior} does not exist")


@pytest.mark.parametrize(("transport", "anyio_backend"), TRANSPORTS)
async def test_a_prior_run_id_that_is_not_a_uuid_is_an_argument_error(
    transport: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(60):
        async with _tools(transport, repo.root, state) as tools:
            result = await tools.client.call_tool(
                "telic_start_run",
                {"original_request": REQUEST, "mode": "analyze_only", "prior_run_id": "run-1"},
            )
            listed = await tools.call("telic_list_runs", limit=10)
    assert result.is_error
    assert "prior_run_id" in str(result.content)
    assert listed["runs"] == []
