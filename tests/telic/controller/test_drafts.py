"""Drafts beside the NextAction: a host that only follows them always reaches a terminal report.

The host (``tests/telic/draft_host.py``) writes placeholders at the draft's fill paths by JSON
type and picks among offered choices; it never reads a rule. The property test lets Hypothesis
pick every judgement (clarify or not, the prompt review's, quality review's and audit's
decisions) and checks the run always ends in a UserReport without a single refusal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, get_args

import anyio
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from telic.controller import draft_for, field_statements
from telic.controller._derive import prompt_coverage
from telic.controller._draft import _ITEM_STATUS
from telic.ledger import open_ledger
from telic.protocol import CorrectableField, json_schema
from tests.telic.draft_host import Choose, first, follow

from .builders import ALL_GRANTS, Flow
from .rules.harness import reviewing

MODES = ("report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix")


def _wire(draft: Any) -> dict[str, Any]:
    # As a client receives it: through JSON.
    loaded: dict[str, Any] = json.loads(json.dumps(draft.to_wire()))
    return loaded


async def _drive(mode: str, choose: Choose, clarify: bool) -> tuple[Flow, list[str]]:
    """Follow drafts from start to end; return the flow and the types submitted, in order."""
    submitted: list[str] = []
    async with open_ledger("memory://") as ledger:
        flow = await Flow.start(ledger, mode)
        await flow.ground(1)
        for _ in range(40):
            if flow.action.kind == "clarification":
                await flow.answer("resume")
                continue
            draft = flow.last.draft
            if draft is None:
                break
            wire = _wire(draft)
            if clarify and wire.get("instead"):
                clarify = False
                alternative = wire["instead"][0]
                await flow.submit(alternative["type"], follow(alternative, choose))
                submitted.append(alternative["type"])
                continue
            for supporting in wire.get("before", ()):
                await flow.submit(supporting["type"], follow(supporting, first))
                submitted.append(supporting["type"])
            await flow.submit(wire["type"], follow(wire, choose), wire.get("sourceRefs", ()))
            submitted.append(wire["type"])
    return flow, submitted


@pytest.mark.parametrize("mode", MODES)
def test_following_default_drafts_completes_every_mode(mode: str) -> None:
    flow, submitted = anyio.run(_drive, mode, first, False)
    assert flow.action.kind == "terminal"
    assert flow.action.status == "completed"
    assert submitted[-1] == "UserReport"
    executes = "WorkResult" in submitted
    assert executes == (mode in ("analyze_only", "fix_only", "analyze_and_fix"))


def test_a_clarification_then_the_resumed_frame_is_accepted() -> None:
    flow, submitted = anyio.run(_drive, "analyze_only", first, True)
    assert submitted[:2] == ["ClarificationRequest", "ProblemFrame"]
    assert flow.action.status == "completed"


def _picker(data: st.DataObject) -> Choose:
    def choose(path: str, choices: Sequence[Mapping[str, Any]]) -> int:
        return data.draw(st.integers(0, len(choices) - 1), label=f"choice at {path}")

    return choose


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(mode=st.sampled_from(MODES), clarify=st.booleans(), data=st.data())
def test_any_legal_choice_still_ends_in_a_report(
    mode: str, clarify: bool, data: st.DataObject
) -> None:
    # Every submission must be accepted: a refusal raises and fails the example.
    flow, submitted = anyio.run(_drive, mode, _picker(data), clarify)
    assert flow.action.kind == "terminal"
    assert submitted[-1] == "UserReport"
    assert flow.action.report_ref is not None


def test_every_empty_string_of_a_draft_is_a_fill_path() -> None:
    """Nothing is left to guess: each "" is listed, top level or under the default choice."""

    async def check() -> None:
        async with open_ledger("memory://") as ledger:
            flow = await Flow.start(ledger, "analyze_and_fix")
            await flow.ground(1)
            while (draft := flow.last.draft) is not None:
                wire = _wire(draft)
                listed = {f["path"] for f in wire["fill"]}
                for entry in wire["fill"]:  # and what the default choice asks to author
                    listed |= {f["path"] for f in (entry.get("choices") or [{}])[0].get("fill", [])}
                empty = _empty(wire["body"])
                assert empty, wire["type"]  # every draft leaves something to author
                assert all(any(p == q or p.startswith(q + "/") for q in listed) for p in empty)
                for supporting in wire.get("before", ()):
                    await flow.submit(supporting["type"], follow(supporting))
                await flow.submit(wire["type"], follow(wire), wire.get("sourceRefs", ()))

    anyio.run(check)


def _empty(value: Any, path: str = "") -> list[str]:
    if value == "":
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _empty(v, f"{path}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _empty(v, f"{path}/{i}")]
    return []


def test_the_review_draft_and_the_coverage_rule_share_one_map() -> None:
    async def check() -> None:
        async with open_ledger("memory://") as ledger:
            flow = await Flow.start(ledger, "analyze_only")
            await flow.ground(1)
            while flow.action.required_output_type != "PromptReview":
                wire = _wire(flow.last.draft)
                await flow.submit(wire["type"], follow(wire))
            state = await flow.controller.load(flow.b.run_id)
            draft = draft_for(state)
            assert draft is not None
            wanted = [
                {"sourceRef": ref, "contractFields": list(fields), "status": "covered"}
                for ref, fields in prompt_coverage(state)
            ]
            assert draft.body["coverage"] == wanted
            assert len(wanted) == 3

    anyio.run(check)


def test_the_revision_draft_corrects_only_what_a_required_correction_asks() -> None:
    """A blocking finding without a requiredCorrection corrects nothing (TC-REVISE-FIELDS)."""

    async def check() -> None:
        async with open_ledger("memory://") as ledger:
            flow = await reviewing(ledger)
            review = flow.b.prompt_review(decision="revise")
            uncorrected = {
                "id": "FIND-2",
                "requiredCorrection": None,
                "correctionFields": ["assumptions"],
            }
            review["findings"].append(review["findings"][0] | uncorrected)
            await flow.submit("PromptReview", review)
            wire = _wire(flow.last.draft)
            assert [f["path"] for f in wire["fill"]] == ["/objective"]
            await flow.submit(wire["type"], follow(wire), wire["sourceRefs"])

    anyio.run(check)


def test_the_revision_draft_keeps_the_rationale_unless_a_finding_corrects_it() -> None:
    """A model that writes every fill path of a revision draft in its own words is accepted:
    the rationale is a fill path only when a blocking finding corrects it (TC-REVISE-FIELDS)."""

    async def revise(corrected: list[str]) -> list[str]:
        async with open_ledger("memory://") as ledger:
            flow = await reviewing(ledger)
            review = flow.b.prompt_review(decision="revise")
            review["findings"][0]["correctionFields"] = corrected
            await flow.submit("PromptReview", review)
            wire = _wire(flow.last.draft)
            paths = [f["path"] for f in wire["fill"]]
            body = follow(wire)
            for path in paths:  # new words, unlike anything the first contract said
                body[path.strip("/")] = f"Revised {path.strip('/')} in the model's own words."
            await flow.submit(wire["type"], body, wire["sourceRefs"])  # a refusal raises
            first_rationale = flow.b.contract()["rationaleSummary"]
            assert (body["rationaleSummary"] == first_rationale) is (
                "rationaleSummary" not in corrected
            )
            return paths

    assert anyio.run(revise, ["objective"]) == ["/objective"]
    assert anyio.run(revise, ["objective", "rationaleSummary"]) == [
        "/objective",
        "/rationaleSummary",
    ]


@pytest.mark.parametrize(
    ("mode", "field"),
    [
        ("analyze_only", "verificationRequirements"),
        ("analyze_and_fix", "verificationRequirements"),
        ("analyze_only", "assumptions"),
        ("analyze_only", "stopConditions"),
    ],
)
def test_a_revision_that_adds_an_entry_is_drafted_in_the_entrys_shape(
    mode: str, field: str
) -> None:
    """The entry a correction adds is an object where the list holds objects (its text blank,
    its stage and capability the entry before's), so a host that writes only the fill paths is
    accepted."""

    async def check() -> Any:
        async with open_ledger("memory://") as ledger:
            flow = await reviewing(ledger, mode)
            review = flow.b.prompt_review(decision="revise")
            review["findings"][0]["correctionFields"] = [field]
            await flow.submit("PromptReview", review)
            wire = _wire(flow.last.draft)
            *before, added = wire["body"][field]
            await flow.submit(wire["type"], follow(wire), wire["sourceRefs"])  # a refusal raises
            return before, added

    before, added = anyio.run(check)
    if field == "stopConditions":
        assert added == ""
    else:
        assert isinstance(added, dict)
        assert added["id"] == ""
    if field == "verificationRequirements":
        assert added["description"] == ""
        assert (added["stage"], added["capability"]) == (
            before[-1]["stage"],
            before[-1]["capability"],
        )


@pytest.mark.parametrize("inspect", [True, False])
def test_the_correction_order_keeps_a_granted_inspect_for_the_fixs_diff(inspect: bool) -> None:
    """The fix shows its change with git.diff: a contract that grants shell.inspect gets it in
    the correction order's capabilities (a fix node that names it is then within the order,
    WP-SCOPED-ORDER); one that does not, does not."""
    granted = ALL_GRANTS if inspect else tuple(g for g in ALL_GRANTS if g != "shell.inspect")
    drafts = _drafts("analyze_and_fix", host_capabilities=granted)
    (gate,) = [d["body"]["diagnosisGate"] for d in drafts if d["body"].get("diagnosisGate")]
    capabilities = gate["correctionWorkOrder"]["allowedCapabilities"]
    assert gate["correctionWorkOrder"]["permissions"]["shell"]["inspect"] is inspect
    assert ("shell.inspect" in capabilities) is inspect
    assert {"repository.read", "repository.write"} <= set(capabilities)


def test_the_revise_choice_names_every_field_a_revision_may_correct() -> None:
    (review,) = [d for d in _drafts("analyze_only") if d["type"] == "PromptReview"]
    (decision,) = [line for line in review["fill"] if line["path"] == "/decision"]
    (revise,) = [c for c in decision["choices"] if c["value"] == "revise"]
    (line,) = [f for f in revise["fill"] if f["path"] == "/findings/0/correctionFields"]
    for field in get_args(CorrectableField):
        assert field in line["what"]
    assert "never permissions" in line["what"]
    assert "stop condition" not in revise["what"]


def test_no_draft_once_the_run_has_ended() -> None:
    flow, _ = anyio.run(_drive, "report_only", first, False)
    assert flow.last.draft is None


def _drafts(mode: str, **start: Any) -> list[dict[str, Any]]:
    """Every draft (with those before and instead) a default run of ``mode`` is offered."""
    seen: list[dict[str, Any]] = []

    async def collect() -> None:
        async with open_ledger("memory://") as ledger:
            flow = await Flow.start(ledger, mode, **start)
            await flow.ground(1)
            while (draft := flow.last.draft) is not None:
                wire = _wire(draft)
                seen.extend([wire, *wire.get("before", ()), *wire.get("instead", ())])
                for supporting in wire.get("before", ()):
                    await flow.submit(supporting["type"], follow(supporting))
                await flow.submit(wire["type"], follow(wire), wire.get("sourceRefs", ()))

    anyio.run(collect)
    return seen


def _where(artifact_type: str, pointer: str) -> tuple[str, dict[str, Any]]:
    """The statement location of ``pointer`` in the registry's schema, walked here on its own:
    ``name`` for a root property, ``Def.name`` for a property of a ``$defs`` type."""
    schema = json_schema(artifact_type)
    node: dict[str, Any] = schema
    owner, where = "", ""
    for part in pointer.strip("/").split("/"):
        name = ""
        while "$ref" in node or "anyOf" in node:
            if "$ref" in node:
                name = node["$ref"].split("/")[-1]
                node = schema["$defs"][name]
            else:  # a nullable value: its one non-null form
                (node,) = [o for o in node["anyOf"] if o.get("type") != "null"]
        owner = name or ("" if node is schema else "~")
        if part.isdigit():
            node = node["items"]
            continue
        where = f"{owner}.{part}" if owner else part
        node = node["properties"][part]
    return where, node


def _lines(draft: dict[str, Any]) -> list[dict[str, Any]]:
    """The draft's fill lines and those of its choices."""
    top = list(draft["fill"])
    return top + [f for line in top for c in line.get("choices", ()) for f in c.get("fill", ())]


@pytest.mark.parametrize("mode", ["analyze_and_fix", "analyze_only"])
def test_every_statement_on_a_fill_path_reaches_its_fill_line(mode: str) -> None:
    """The draft says what the withheld type text said about each field the model writes,
    but for the rules of a topology the run did not ask for (a 1.0 run never meets them)."""
    statements = field_statements(topology_rules=False)
    stated = 0
    for draft in _drafts(mode):
        for line in _lines(draft):
            assert "micro" not in line["what"], (draft["type"], line)
            where, _ = _where(draft["type"], line["path"])
            text = statements.get((draft["type"], where))
            if text:
                stated += 1
                assert line["what"].endswith(text) or text in line["what"], (draft["type"], line)
    assert stated >= 5  # the decisions, the node's dependencies, the assumptions, …


def test_an_item_has_the_entry_shape_and_its_fields_rules() -> None:
    """Each item is one entry of its array: the required fields, enums as their values."""
    statements = field_statements()
    items = 0
    for draft in _drafts("analyze_only"):
        for line in draft["fill"]:
            if "item" not in line:
                continue
            items += 1
            _, array = _where(draft["type"], line["path"])
            ref = array["items"]["$ref"].split("/")[-1]
            entry_schema = json_schema(draft["type"])["$defs"][ref]
            assert set(line["item"]) == set(entry_schema["required"]), line
            narrowed = _ITEM_STATUS.get((draft["type"], line["path"]))
            for field, value in line["item"].items():
                enum = entry_schema["properties"][field].get("enum")
                if field == "status" and narrowed is not None:
                    assert set(value.split("|")) < set(enum)
                elif enum and len(enum) > 1:
                    assert value == "|".join(enum)
                said = statements.get((draft["type"], f"{ref}.{field}"))
                if said:
                    assert f"{field}: {said}" in line["what"]
    assert items >= 6
    decision = next(
        line
        for draft in _drafts("analyze_only")
        if draft["type"] == "QualityReview"
        for line in draft["fill"]
        if line["path"] == "/decision"
    )
    assert "never pass there" in decision["what"]


def test_a_work_results_observation_item_offers_only_the_statuses_it_admits() -> None:
    from telic.controller._draft import _line

    for (kind, path), statuses in _ITEM_STATUS.items():
        _, item = _line(kind, path, "x", True)
        assert item["status"] == statuses
