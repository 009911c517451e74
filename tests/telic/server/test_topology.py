"""Runs that ask for a topology, over MCP on stdio and on HTTP, against the original's shapes.

A host asks ``telic_start_run`` for ``topology_override`` micro, standard or forensic
(docs/protocol.md §3.5). Each result is compared with the key paths and JSON types of the
original Telic's results for the same calls (``topology_shapes.json``, derived once from its
recorded results like ``wire_shapes.json``): a micro report_only run completes in its five
versions, a spot review that is not a pass escalates, a pre-escalated audit moves the run to
forensic, a forensic run re-verifies. A host that asks for nothing keeps Telic 1.0's phase
sequence and trace in every mode.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.demo import MODES, DemoRepository, TelicTools, http_client, http_server, stdio_parameters
from tests.telic.server.test_draft_host import REQUEST, DraftHost, pick
from tests.telic.server.wire import mismatches, shape

pytestmark = pytest.mark.anyio
SHAPES: dict[str, dict[str, str]] = json.loads(
    Path(__file__).with_name("topology_shapes.json").read_text(encoding="utf-8")
)["results"]
SHORT = "Summarise what this repository does."

# Telic 1.0's phase sequence per mode, for a host that asks for no topology.
_FRONT = ["context_discovery", "agent_1_frame", "agent_2_compile", "agent_1_review"]
_END = ["agent_3_quality_review", "agent_5_release_audit", "user_report", "completed"]
ONE_ZERO: Mapping[str, list[str]] = {
    "report_only": [*_FRONT, "agent_3_plan", *_END],
    "plan_only": [*_FRONT, "agent_3_plan", *_END],
    "analyze_only": [*_FRONT, "agent_3_plan", "agent_4_execute", *_END],
    "fix_only": [*_FRONT, "agent_3_plan", "agent_4_execute", *_END],
    "analyze_and_fix": [
        *_FRONT,
        "agent_3_plan",
        "agent_4_execute",
        "agent_3_quality_review",
        "agent_3_plan",
        "agent_4_execute",
        *_END,
    ],
}


@pytest.fixture
def anyio_backend() -> str:
    """The servers are subprocesses and the HTTP one runs uvicorn: one backend is enough."""
    return "asyncio"


class Recording(TelicTools):
    """Keeps every envelope, and the phase of every NextAction it saw, in order."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.envelopes: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        envelope = await super().attempt(tool, progress, **args)
        self.envelopes.append((tool, args, envelope))
        return envelope

    def phases(self, run_id: str) -> list[str]:
        """The distinct consecutive NextAction phases of ``run_id``'s results."""
        seen: list[str] = []
        for _, _, envelope in self.envelopes:
            action = envelope.get("nextAction")
            if (
                isinstance(action, dict)
                and action.get("runId") == run_id
                and (not seen or seen[-1] != action["phase"])
            ):
                seen.append(action["phase"])
        return seen


def _problems(name: str, result: Mapping[str, Any]) -> list[str]:
    return [f"{name}: {line}" for line in mismatches(SHAPES[name], shape(result))]


@asynccontextmanager
async def _client(transport: str, repo: DemoRepository, state: Path) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(stdio_parameters(repo.root, state)) as client:
            yield client
    else:
        async with http_server(repo.root, state) as url, http_client(url) as client:
            yield client


async def _micro(host: DraftHost, tools: Recording) -> list[str]:
    """A micro report_only run from drafts; returns what its results lack of the original's."""
    action, submitted = await host.run("report_only", topology="micro", request=SHORT)
    run_id = action["runId"]
    assert action["status"] == "completed"
    assert submitted == ["ProblemFrame", "QualityReview", "UserReport"]
    versions = [
        e["run"]["version"]
        for _, a, e in tools.envelopes
        if e.get("run", {}).get("runId") == run_id
    ]
    assert versions == [1, 2, 3, 4, 5]  # the original's phase count: ground, frame, review, report
    assert tools.phases(run_id) == [
        "context_discovery",
        "agent_1_frame",
        "agent_3_quality_review",
        "user_report",
        "completed",
    ]
    calls = [
        (t, e)
        for t, a, e in tools.envelopes
        if a.get("run_id") == run_id
        or (t == "telic_start_run" and e.get("run", {}).get("runId") == run_id)
    ]
    submits = [e for t, e in calls if t == "telic_submit_artifact"]
    problems = _problems("micro start", calls[0][1])
    problems += _problems("micro ground", next(e for t, e in calls if t == "telic_ground_context"))
    assert len(submits) == 3
    for name, envelope in zip(
        ("micro frame", "micro spot review", "micro report"), submits, strict=True
    ):
        problems += _problems(name, envelope)
    get = tools.attempt
    for artifact in ("contract-01", "plan-01", "receipt-01"):
        read = await get("telic_get_artifact", run_id=run_id, artifact_id=artifact)
        problems += _problems(f"micro {artifact}", read)
    receipt = (await get("telic_get_artifact", run_id=run_id, artifact_id="receipt-01"))["artifact"]
    assert receipt["type"] == "ReceiptAudit"
    assert receipt["body"]["digestStatus"] == "verified"
    problems += _problems(
        "micro get_next_action", await get("telic_get_next_action", run_id=run_id)
    )
    details = await get("telic_get_run", run_id=run_id)
    problems += _problems("micro get_run", details)
    assert [a["id"] for a in details["artifacts"]][3:6] == ["frame-1", "contract-01", "plan-01"]
    trace = await get("telic_get_trace", run_id=run_id, limit=100)
    problems += _problems("micro get_trace", trace)
    events = {e["eventType"]: e for e in trace["events"]}
    problems += _problems("trace topology_classified", events["topology_classified"])
    problems += _problems("trace digest_verified", events["digest_verified"])
    assert events["topology_classified"]["rationaleSummary"] == "MICRO_SHORT_REPORT_ONLY"
    assert trace["events"][1]["eventType"] == "topology_classified"
    replayed = (await get("telic_replay_run", run_id=run_id))["report"]
    assert {k: replayed[k] for k in ("topology", "steps", "degraded", "reason")} == {
        "topology": "micro",
        "steps": [],
        "degraded": True,
        "reason": "micro_topology",
    }
    return problems


async def _escalation(host: DraftHost, tools: Recording) -> list[str]:
    """micro → standard by a partial spot review, then standard → forensic by an audit."""
    action, _ = await host.run(
        "report_only", pick("pass", "partial"), topology="micro", request=SHORT
    )
    run_id = action["runId"]
    partial = next(
        e
        for t, a, e in tools.envelopes
        if t == "telic_submit_artifact"
        and a.get("run_id") == run_id
        and a.get("artifact_type") == "QualityReview"
    )
    problems = _problems("escalation spot review partial", partial)
    assert (partial["run"]["topology"], partial["run"]["phase"]) == ("standard", "agent_1_review")
    assert partial["nextAction"]["phase"] == "agent_1_review"
    trace = (await tools.attempt("telic_get_trace", run_id=run_id, limit=100))["events"]
    escalated = [e for e in trace if e["eventType"] == "topology_escalated"]
    assert [e["rationaleSummary"] for e in escalated] == ["MICRO_SPOT_PARTIAL"]
    problems += _problems("trace topology_escalated (accepted spot review)", escalated[0])
    details = await tools.attempt("telic_get_run", run_id=run_id)
    assert (details["run"]["topology"], details["run"]["escalationCount"]) == ("standard", 1)
    assert "receipt-01" in [a["id"] for a in details["artifacts"]]  # the standard review passed
    verified = await tools.attempt("telic_verify_run", run_id=run_id)
    assert verified["intact"] is True  # the sealed row covers the changed topology
    replayed = (await tools.attempt("telic_replay_run", run_id=run_id))["report"]
    assert replayed["topology"] == "standard"  # escalated: replayed in full
    assert "degraded" not in replayed
    assert "MICRO_SPOT_PARTIAL" in replayed["traceHighlights"]
    assert any(s.get("escalationReason") == "MICRO_SPOT_PARTIAL" for s in replayed["steps"])
    return problems


async def _pre_escalation(host: DraftHost, tools: Recording) -> list[str]:
    """A standard run's audit with a user_reported claim basis moves the run to forensic."""
    start = await tools.attempt(
        "telic_start_run", original_request=SHORT, mode="report_only", topology_override="standard"
    )
    problems = _problems("start_run standard", start)
    run_id = start["run"]["runId"]
    last = start
    for _ in range(12):
        action = last["nextAction"]
        token = {
            "run_id": run_id,
            "action_id": action["id"],
            "expected_run_version": last["run"]["version"],
        }
        draft = last.get("draft")
        if draft is None:
            last = await tools.attempt("telic_ground_context", **token)
            continue
        body = _authored(draft)
        if draft["type"] == "ReleaseAudit":
            claim = body["claimEvidenceMatrix"][0]
            claim["basis"] = "user_reported"
            claim["evidenceRefs"] = [start["nextAction"]["inputRefs"][0]]  # the user's words
            refused = await tools.attempt(
                "telic_submit_artifact", artifact_type="ReleaseAudit", body=body, **token
            )
            assert not refused["ok"]
            assert refused["error"].startswith(
                "Topology escalated to forensic (STANDARD_USER_REPORTED_CLAIMS)"
            )
            problems += _problems("pre-escalation refused", refused)
            details = await tools.attempt("telic_get_run", run_id=run_id)
            run = details["run"]
            assert (run["topology"], run["escalationCount"], run["phase"]) == (
                "forensic",
                1,
                "agent_5_audit",
            )
            assert run["version"] == token["expected_run_version"] + 1
            assert "release-audit-1" not in [a["id"] for a in details["artifacts"]]
            expected = refused["issues"][0]["expected"]
            assert expected["expectedRunVersion"] == run["version"]
            # The same audit is accepted at the new version: forensic never escalates again.
            again = await tools.attempt(
                "telic_submit_artifact",
                artifact_type="ReleaseAudit",
                body=body,
                run_id=run_id,
                action_id=expected["actionId"],
                expected_run_version=expected["expectedRunVersion"],
            )
            assert again["ok"], again
            trace = (await tools.attempt("telic_get_trace", run_id=run_id, limit=100))["events"]
            row = next(e for e in trace if e["eventType"] == "topology_escalated")
            problems += _problems(
                "trace topology_escalated (refused ReleaseAudit, pre-escalation)", row
            )
            assert row["outputRefs"] == []
            return problems
        last = await tools.attempt(
            "telic_submit_artifact", artifact_type=draft["type"], body=body, **token
        )
        assert last["ok"], last
    raise AssertionError("the run never reached its audit")


def _authored(draft: Mapping[str, Any]) -> dict[str, Any]:
    from tests.telic.draft_host import follow

    return dict(follow(draft))


async def _forensic(host: DraftHost, tools: Recording) -> list[str]:
    action, _ = await host.run("analyze_only", topology="forensic")
    run_id = action["runId"]
    assert action["status"] == "completed"
    phases = tools.phases(run_id)
    assert phases[phases.index("agent_3_quality_review") + 1] == "agent_3_evidence_reverify"
    assert phases[phases.index("agent_3_evidence_reverify") + 1] == "agent_5_release_audit"
    reviews = [
        (a, e)
        for t, a, e in tools.envelopes
        if t == "telic_submit_artifact"
        and a.get("run_id") == run_id
        and a.get("artifact_type") == "QualityReview"
    ]
    assert [a["body"]["reviewKind"] for a, _ in reviews] == ["spot", "evidence_reverify"]
    problems = _problems("forensic first review", reviews[0][1])
    problems += _problems("forensic reverify review", reviews[1][1])
    second = reviews[1][0]["body"]["id"]
    read = await tools.attempt("telic_get_artifact", run_id=run_id, artifact_id=second)
    problems += _problems("forensic get_artifact reverify", read)
    details = await tools.attempt("telic_get_run", run_id=run_id)
    assert "receipt-01" not in [a["id"] for a in details["artifacts"]]  # never in forensic
    problems += _problems("list_runs", await tools.attempt("telic_list_runs", limit=3))
    return problems


ONE_ZERO_RUN_KEYS = [
    "runId",
    "schemaVersion",
    "repositoryRoot",
    "requestedMode",
    "status",
    "phase",
    "resumePhase",
    "version",
    "budgets",
    "outcomeHint",
    "createdAt",
    "updatedAt",
]
"""A Telic 1.0 RunRecord's keys, in order."""


async def _one_zero(host: DraftHost, tools: Recording) -> None:
    """A host that asks for no topology: 1.0's phases, trace and RunRecord keys."""
    for mode in MODES:
        action, _ = await host.run(mode)
        run_id = action["runId"]
        assert tools.phases(run_id) == ONE_ZERO[mode], mode
        trace = (await tools.attempt("telic_get_trace", run_id=run_id, limit=500))["events"]
        kinds = {e["eventType"] for e in trace}
        assert not kinds & {"topology_classified", "topology_escalated", "digest_verified"}
        details = await tools.attempt("telic_get_run", run_id=run_id)
        assert list(details["run"]) == ONE_ZERO_RUN_KEYS  # 1.0's, in 1.0's order
        listed = (await tools.attempt("telic_list_runs", limit=1))["runs"][0]
        assert (listed["runId"], "topology" in listed) == (run_id, False)
        assert "receipt-01" not in [a["id"] for a in details["artifacts"]]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_topologies_over_mcp_match_the_original_and_leave_1_0_runs_alone(
    transport: str, repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(180):
        async with _client(transport, repo, state) as client:
            tools = Recording(client)
            host = DraftHost(client, tools)
            problems = await _micro(host, tools)
            problems += await _escalation(host, tools)
            problems += await _pre_escalation(host, tools)
            problems += await _forensic(host, tools)
            await _one_zero(host, tools)
            refused = await tools.attempt(
                "telic_start_run",
                original_request=REQUEST,
                mode="analyze_only",
                topology_override="micro",
            )
            problems += _problems("start_run micro refused", refused)
            assert refused["error"].startswith(
                "topologyOverride micro is incompatible with the current request signals"
            )
            forensic = await tools.attempt(
                "telic_start_run",
                original_request=REQUEST,
                mode="analyze_only",
                topology_override="forensic",
            )
            problems += _problems("start_run forensic", forensic)
    assert problems == []
