"""A draft host over MCP: it never reads a rule, and no call it makes is refused.

The host is the official MCP client against a real ``telic serve`` (stdio), one server for the
whole module. For each phase it takes ``draft.body`` from the last result, writes placeholders
at the ``fill`` paths by JSON type only (``tests/telic/draft_host.py``), submits the Evidence
drafts under ``before`` first, and submits. It completes every mode and the clarification,
remediation and proceed_to_fix flows, and every tool result is ``ok``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from telic.demo import MODES, DemoRepository, TelicTools, stdio_parameters
from telic.roles import open_service
from telic.server import build_server
from tests.telic.draft_host import Choose, first, follow
from tests.telic.server.wire import WireHost

pytestmark = pytest.mark.anyio

REQUEST = "paginate in src/pagination.py returns the wrong page; find the cause and fix it"
FIXING = ("fix_only", "analyze_and_fix")
GROWN = frozenset({"/assumptions"})
"""Arrays whose item holds no reference (a placeholder is no legal reference)."""


@pytest.fixture
def anyio_backend() -> str:
    """The host is a client of a subprocess: the backend does not matter, one is enough."""
    return "asyncio"


class DraftHost:
    """Drives runs from drafts alone and keeps every envelope it received."""

    def __init__(self, client: Client, tools: TelicTools | None = None) -> None:
        self.tools = tools or TelicTools(client)
        self.calls: list[tuple[str, bool, str]] = []
        self.grown: list[str] = []

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        envelope = await self.tools.attempt(tool, **args)
        self.calls.append((tool, bool(envelope["ok"]), str(envelope.get("error", ""))))
        assert envelope["ok"], (tool, envelope)
        return envelope

    async def run(
        self,
        mode: str,
        choose: Choose = first,
        *,
        clarify: bool = False,
        grow: frozenset[str] = frozenset(),
        topology: str | None = None,
        request: str = REQUEST,
        command: str | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """One run from start to its terminal action; returns it and what was submitted.

        ``grow``: fill paths where the host appends one entry written from the line's ``item``.
        ``topology``: the ``topology_override`` to ask for (none: the 1.0 path).
        ``command``: a test command the user grants exactly (``shell.execute``).
        """
        start: dict[str, Any] = {"original_request": request, "mode": mode}
        if topology is not None:
            start["topology_override"] = topology
        if mode in FIXING:  # the user's grant, as an installing user would give it
            start["host_capabilities"] = ["repository.read", "repository.write"]
        if command is not None:
            capabilities = ["repository.read", "shell.execute"]
            if mode in FIXING:
                capabilities.append("repository.write")
            start["host_capabilities"] = capabilities
            start["authorization_granted"] = capabilities
            start["shell_execute_allowlist"] = [command]
        last = await self.call("telic_start_run", **start)
        run_id = last["run"]["runId"]
        submitted: list[str] = []
        asked: list[str] = []
        for _ in range(60):
            action, version = last["nextAction"], last["run"]["version"]
            token = {"run_id": run_id, "action_id": action["id"], "expected_run_version": version}
            if action["kind"] == "terminal":
                return action, submitted
            if action["kind"] == "clarification":
                last = await self.call(
                    "telic_submit_artifact", clarification_response=asked[0], **token
                )
                continue
            draft = last.get("draft")
            if draft is None:  # the controller's own step: grounding
                last = await self.call("telic_ground_context", **token)
                continue
            if clarify and draft.get("instead"):
                clarify = False
                question = draft["instead"][0]
                body = follow(question)
                asked.append(
                    next(c["id"] for c in body["responseChoices"] if c["runEffect"] == "resume")
                )
                last = await self._submit(token, question, body)
                submitted.append(question["type"])
                continue
            for evidence in draft.get("before", ()):
                await self._submit(token, evidence, follow(evidence))
                submitted.append(evidence["type"])
            grown = {line["path"] for line in draft["fill"] if "item" in line} & grow
            self.grown += [f"{draft['type']}{path}" for path in sorted(grown)]
            last = await self._submit(token, draft, follow(draft, choose, grow))
            submitted.append(draft["type"])
        raise AssertionError("the run did not end")

    async def _submit(
        self, token: Mapping[str, Any], draft: Mapping[str, Any], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        return await self.call(
            "telic_submit_artifact",
            artifact_type=draft["type"],
            body=dict(body),
            source_refs=list(draft.get("sourceRefs", ())),
            **token,
        )


def pick(offered: str, value: str) -> Choose:
    """Once, where the decision offers both ``offered`` and ``value``, choose ``value``; else
    the draft's default. ("release" marks an audit, "pass" a review, "revise" a prompt review.)"""
    left = [value]

    def choose(path: str, choices: Sequence[Mapping[str, Any]]) -> int:
        values = [c["value"] for c in choices]
        if path == "/decision" and left and {offered, value} <= set(values):
            return values.index(left.pop())
        return 0

    return choose


async def test_a_draft_following_host_completes_every_mode_and_flow_without_a_refusal(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(120):
        async with Client(stdio_parameters(repo.root, state)) as client:
            host = DraftHost(client)
            for mode in MODES:
                action, submitted = await host.run(mode)
                assert (action["status"], submitted[-1]) == ("completed", "UserReport"), mode
                assert ("WorkResult" in submitted) == (mode not in ("report_only", "plan_only"))

            # Clarification: ask first, the user answers "resume", then frame as drafted.
            action, submitted = await host.run("analyze_only", clarify=True)
            assert submitted[:2] == ["ClarificationRequest", "ProblemFrame"]
            assert action["status"] == "completed"

            # analyze_and_fix passes its diagnosis gate by default: proceed_to_fix, then the fix.
            action, submitted = await host.run("analyze_and_fix")
            assert submitted.count("WorkPlan") == 2
            assert action["status"] == "completed"

            # Remediation: the quality review sends the work back once, then passes.
            action, submitted = await host.run("fix_only", pick("pass", "remediate"))
            assert submitted.count("WorkPlan") == 2
            assert submitted.count("QualityReview") == 2
            assert action["status"] == "completed"

            # The audit's remediation, and a partial outcome, end in their reports too.
            action, submitted = await host.run("analyze_only", pick("release", "remediate"))
            assert submitted.count("ReleaseAudit") == 2
            assert action["status"] == "completed"
            action, _ = await host.run("analyze_only", pick("pass", "partial"))
            assert action["status"] == "partial"

            # Entries written from the fill lines' items alone are accepted.
            action, _ = await host.run("analyze_only", grow=GROWN)
            assert action["status"] == "completed"
            assert host.grown == ["TaskContract/assumptions"]

            # A granted test command: the contract verifies by running it, the drafts follow.
            for mode in ("analyze_only", "analyze_and_fix"):
                action, submitted = await host.run(mode, command="python -m pytest -q")
                assert action["status"] == "completed", mode

            # A revised contract after the prompt review asks for a correction.
            action, submitted = await host.run("plan_only", pick("revise", "revise"))
            assert submitted.count("TaskContract") == 2
            assert action["status"] == "completed"

    assert len(host.calls) > 100
    assert [call for call in host.calls if not call[1]] == []


SHORT = "Summarise what this repository does."


async def test_a_draft_following_host_completes_micro_escalated_and_forensic_runs(
    repo: DemoRepository, state: Path
) -> None:
    with anyio.fail_after(120):
        async with Client(stdio_parameters(repo.root, state)) as client:
            host = DraftHost(client)
            # Micro: frame, spot review, report; the controller stores contract, plan, receipt.
            action, submitted = await host.run("report_only", topology="micro", request=SHORT)
            assert action["status"] == "completed"
            assert submitted == ["ProblemFrame", "QualityReview", "UserReport"]
            run = (await host.call("telic_get_run", run_id=action["runId"]))["run"]
            assert (run["topology"], run["escalationCount"], run["version"]) == ("micro", 0, 5)

            # A spot review that is not a pass escalates to the standard path, which completes.
            action, submitted = await host.run(
                "report_only", pick("pass", "partial"), topology="micro", request=SHORT
            )
            assert submitted[:3] == ["ProblemFrame", "QualityReview", "PromptReview"]
            assert submitted[-2:] == ["ReleaseAudit", "UserReport"]
            run = (await host.call("telic_get_run", run_id=action["runId"]))["run"]
            assert (run["topology"], run["escalationCount"]) == ("standard", 1)

            # Forensic: a second, evidence re-verifying review before the audit.
            for mode in ("analyze_only", "fix_only"):
                action, submitted = await host.run(mode, topology="forensic")
                assert action["status"] == "completed", mode
                assert submitted.count("QualityReview") == 2, mode

            # Standard asked for: the 1.0 path, with a receipt of the passing review.
            action, submitted = await host.run("analyze_only", topology="standard")
            assert action["status"] == "completed"
            assert submitted.count("QualityReview") == 1

    assert [call for call in host.calls if not call[1]] == []


async def test_a_refusal_names_what_would_pass(repo: DemoRepository, state: Path) -> None:
    """A PromptReview with a guessed coverage map is refused with the exact map as expected."""
    with anyio.fail_after(60):
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = TelicTools(client)
            last = await tools.call(
                "telic_start_run", original_request=REQUEST, mode="analyze_only"
            )
            run_id = last["run"]["runId"]

            def token() -> dict[str, Any]:
                return {
                    "run_id": run_id,
                    "action_id": last["nextAction"]["id"],
                    "expected_run_version": last["run"]["version"],
                }

            last = await tools.call("telic_ground_context", **token())
            for _ in range(2):  # frame, contract
                draft = last["draft"]
                last = await tools.call(
                    "telic_submit_artifact",
                    artifact_type=draft["type"],
                    body=follow(draft),
                    **token(),
                )
            draft = last["draft"]
            body = follow(draft)
            right = [{k: e[k] for k in ("sourceRef", "contractFields")} for e in body["coverage"]]
            body["coverage"] = body["coverage"][:2]  # a guess: one entry short
            refused = await tools.attempt(
                "telic_submit_artifact", artifact_type="PromptReview", body=body, **token()
            )
            again = await tools.call("telic_get_run", run_id=run_id)
            following = await tools.call("telic_get_next_action", run_id=run_id)
    assert refused["ok"] is False
    issue = next(i for i in refused["issues"] if i.get("rule") == "PR-COVERAGE")
    assert issue["expected"] == right
    assert len(str(refused)) < 2048
    assert again["run"]["version"] == last["run"]["version"]  # nothing changed
    assert again["draft"] == draft  # get_run and get_next_action carry the same draft
    assert following["draft"] == draft


async def test_in_process_the_draft_host_keeps_every_result_in_the_1_0_shape(
    repo: DemoRepository, state: Path
) -> None:
    """The same host over the in-memory transport, every result checked against 1.0's keys."""
    with anyio.fail_after(60):
        async with (
            open_service(
                database_url="memory://", repository_root=repo.root, state_dir=state
            ) as svc,
            Client(build_server(svc), mode="legacy") as client,
        ):
            wire = WireHost(client)
            host = DraftHost(client, wire)
            action, submitted = await host.run("analyze_and_fix", pick("pass", "remediate"))
    assert action["status"] == "completed"
    assert submitted.count("WorkPlan") == 3  # diagnosis, fix, remediation
    assert wire.problems == []
    assert [call for call in host.calls if not call[1]] == []
