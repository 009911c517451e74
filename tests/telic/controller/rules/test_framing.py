"""ProblemFrame, ScenarioSpec, TaskContract (v1 and v2) and PromptReview invariants."""

from __future__ import annotations

import pytest

from telic.ledger import open_ledger
from tests.telic.controller.builders import FIX, criterion, perms
from tests.telic.controller.rules.harness import compiling, framed, refuse, reviewing, revising

pytestmark = pytest.mark.anyio


@pytest.mark.rule("PF-INTENT-MODE")
async def test_a_frame_keeps_the_runs_mode() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        await refuse(flow, "ProblemFrame", flow.b.frame(intentMode="analyze_and_fix"))
        await flow.submit("ProblemFrame", flow.b.frame())


@pytest.mark.rule("PF-ORIGINAL-REQUEST")
async def test_a_frame_names_the_runs_own_request() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger, documents=1)
        docs = await flow.controller.get_run(flow.b.run_id)
        other = next(a for a in docs.artifacts if a.type == "ContextDocument")
        frame = flow.b.frame(originalRequestRef=flow.b.uri(other.artifact_id))
        await refuse(flow, "ProblemFrame", frame)


@pytest.mark.rule("PF-CLARIFICATION-NOT-REQUIRED")
async def test_a_frame_may_not_require_clarification() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        clarification = {
            "required": True,
            "reason": "Which parser?",
            "requestRef": flow.b.request,
        }
        await refuse(flow, "ProblemFrame", flow.b.frame(clarification=clarification))


@pytest.mark.rule("PF-FACT-PROVENANCE")
@pytest.mark.parametrize("provenance", ["user", "runtime", "repository"])
async def test_a_fact_cites_a_source_of_its_provenance(provenance: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        source = "repo://src/file0.py" if provenance != "repository" else flow.b.request
        frame = flow.b.frame()
        frame["knownFacts"][0] |= {"provenance": provenance, "sourceRef": source}
        await refuse(flow, "ProblemFrame", frame)


def _scenario(flow: object, sid: str = "scenario-1", frame: str = "frame-1") -> dict[str, object]:
    b = flow.b  # type: ignore[attr-defined]
    return b.base(sid) | {
        "problemFrameRef": b.uri(frame),
        "title": "The parser skips a token",
        "narrative": "A developer runs the parser.",
        "actor": "developer",
        "observableSymptoms": [],
        "desiredOutcome": "It parses.",
        "sourceMap": [],
        "promptReadinessRubricRef": "artifact://system/rubrics/contract-readiness-v1",
        "rationaleSummary": "Presentation.",
    }


@pytest.mark.rule("SS-PROBLEM-FRAME-LATEST")
async def test_a_scenario_presents_the_latest_frame() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        bad = _scenario(flow) | {"problemFrameRef": flow.b.request}
        await refuse(flow, "ScenarioSpec", bad)
        await flow.submit("ScenarioSpec", _scenario(flow))


@pytest.mark.rule("SS-ONE-PER-FRAME")
async def test_a_frame_has_at_most_one_scenario() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        await flow.submit("ScenarioSpec", _scenario(flow))
        await flow.submit("ScenarioSpec", _scenario(flow))  # identical replay is idempotent
        await refuse(flow, "ScenarioSpec", _scenario(flow, "scenario-2"))


@pytest.mark.rule("TC-INTENT-MODE")
async def test_a_contract_keeps_the_runs_mode() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        await refuse(flow, "TaskContract", flow.b.contract(intentMode="fix_only"))
        await flow.submit("TaskContract", flow.b.contract())


@pytest.mark.rule("TC-ORIGINAL-REQUEST")
async def test_a_contract_names_the_runs_request() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        contract = flow.b.contract(originalRequestRef=flow.b.uri("frame-1"))
        await refuse(flow, "TaskContract", contract)


@pytest.mark.rule("TC-PROBLEM-FRAME-LATEST")
async def test_a_contract_compiles_the_latest_frame() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        await refuse(flow, "TaskContract", flow.b.contract(problemFrameRef=flow.b.request))


@pytest.mark.rule("TC-CONTEXT-REFS")
async def test_a_contract_keeps_the_frames_sources_in_context() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        frame = flow.b.frame()
        frame["knownFacts"].append(
            {
                "id": "F-2",
                "claim": "x",
                "provenance": "repository",
                "sourceRef": "repo://src/file0.py",
            }
        )
        await flow.submit("ProblemFrame", frame)
        await refuse(flow, "TaskContract", flow.b.contract())
        await flow.submit("TaskContract", flow.b.contract(contextRefs=["repo://src/file0.py"]))


@pytest.mark.rule("TC-RULE-REFS")
async def test_rule_refs_equal_the_frames_rules_once_each() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await framed(ledger)
        rule = "repo://src/file0.py"
        await flow.submit("ProblemFrame", flow.b.frame(applicableRuleRefs=[rule]))
        await refuse(flow, "TaskContract", flow.b.contract(contextRefs=[], ruleRefs=[]))
        await flow.submit("TaskContract", flow.b.contract(ruleRefs=[rule]))


@pytest.mark.rule("TC-COMPILE-V1")
async def test_the_compiled_contract_is_version_one() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        await refuse(flow, "TaskContract", flow.b.contract(version=2))


@pytest.mark.rule("TC-FRAME-COPY")
@pytest.mark.parametrize(
    "change",
    [
        {"scope": {"include": ["src", "docs"], "exclude": []}},
        {"constraints": []},
        {"nonGoals": ["Do not touch docs"]},
        {"acceptanceCriteria": [criterion("AC-1"), criterion("AC-9")]},
    ],
)
async def test_a_v1_contract_copies_the_frame_exactly(change: dict[str, object]) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        await refuse(flow, "TaskContract", flow.b.contract(**change))


def _v2(flow: object, **over: object) -> dict[str, object]:
    b = flow.b  # type: ignore[attr-defined]
    return b.contract("contract-2", version=2, objective="Fix the token skip", **over)


async def _revise(flow: object, body: dict[str, object], cite: bool = True) -> None:
    b = flow.b  # type: ignore[attr-defined]
    refs = [b.uri("contract-1"), b.uri("review-1")] if cite else []
    await refuse(flow, "TaskContract", body, refs)  # type: ignore[arg-type]


@pytest.mark.rule("TC-REVISE-V2")
async def test_a_revision_is_version_two() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await revising(ledger)
        bad = _v2(flow)
        bad["version"] = 1
        await _revise(flow, bad)


@pytest.mark.rule("TC-REVISE-CITES")
async def test_a_revision_cites_the_contract_and_review() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await revising(ledger)
        await _revise(flow, _v2(flow), cite=False)
        await flow.submit(
            "TaskContract", _v2(flow), [flow.b.uri("contract-1"), flow.b.uri("review-1")]
        )


@pytest.mark.rule("TC-REVISE-PERMISSIONS")
async def test_a_revision_never_widens_permissions() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await revising(ledger)
        await _revise(flow, _v2(flow, permissions=perms(read=["**"], shell_inspect=True)))


@pytest.mark.rule("TC-REVISE-FIELDS")
@pytest.mark.parametrize("unchanged_objective", [False, True])
async def test_a_revision_changes_exactly_the_corrected_fields(unchanged_objective: bool) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await revising(ledger)
        body = _v2(flow, requiredOutputs=["A patch"])
        if unchanged_objective:
            body = flow.b.contract("contract-2", version=2)
        await _revise(flow, body)


@pytest.mark.rule("TC-REVISE-PRESERVE")
async def test_a_revision_keeps_preserved_fields() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        review = flow.b.prompt_review(decision="revise")
        review["findings"][0]["preserveFields"] = ["objective"]
        await flow.submit("PromptReview", review)
        await _revise(flow, _v2(flow))


@pytest.mark.rule("TC-VERIFICATION-BACKED")
async def test_a_required_verification_is_backed_by_the_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        vr = flow.b.verifications[0] | {"capability": "shell.inspect"}
        await refuse(flow, "TaskContract", flow.b.contract(verificationRequirements=[vr]))


@pytest.mark.rule("TC-SHELL-ALLOWLIST")
async def test_the_shell_allowlist_holds_exact_commands() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger, "fix_only")
        permissions = FIX | {
            "shell": {"inspect": False, "executeAllowlist": ["npm test && rm -rf /"]}
        }
        await refuse(flow, "TaskContract", flow.b.contract(permissions=permissions))


@pytest.mark.rule("TC-PERMISSIONS-AUTHORIZED")
async def test_contract_permissions_stay_inside_the_run_authorization() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        permissions = perms(read=["**"])
        permissions["network"] = {"readDomains": ["example.com"], "externalWrite": False}
        await refuse(flow, "TaskContract", flow.b.contract(permissions=permissions))


@pytest.mark.rule("TC-ASSUMPTIONS")
async def test_assumption_ids_are_unique() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await compiling(ledger)
        assumption = {"id": "AS-1", "text": "Tests exist", "sourceRefs": [], "reversible": True}
        bad = flow.b.contract(assumptions=[assumption, assumption | {"text": "Python 3"}])
        await refuse(flow, "TaskContract", bad)
        await flow.submit("TaskContract", flow.b.contract(assumptions=[assumption]))


@pytest.mark.rule("PR-TARGET-LATEST")
async def test_a_review_judges_the_latest_contract() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        await refuse(flow, "PromptReview", flow.b.prompt_review(targetRef=flow.b.uri("frame-1")))
        await flow.submit("PromptReview", flow.b.prompt_review())


@pytest.mark.rule("PR-REVISION-NUMBER")
async def test_a_review_numbers_its_revision() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        await refuse(flow, "PromptReview", flow.b.prompt_review(revision=1))


@pytest.mark.rule("PR-COVERAGE")
async def test_review_coverage_maps_each_source_to_its_fields() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await reviewing(ledger)
        review = flow.b.prompt_review()
        review["coverage"][0]["contractFields"] = ["objective"]
        await refuse(flow, "PromptReview", review)
